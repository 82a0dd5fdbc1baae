#include "orchestrator/watch/split_brain.h"

#include <map>
#include <nlohmann/json.hpp>

#include "health/lag_monitor.h"
#include "orchestrator/watch/live_view.h"
#include "state/clock.h"
#include "state/json_text.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

using nlohmann::json;

constexpr const char* kActor = "split-brain-watch";
// Its own audit target per region ("split-brain:us-east-1"), so that a restart reads back only
// these events, not the region's whole health history. The fence itself is audited on the
// region by its health machine.
std::string AuditTarget(const std::string& region) { return "split-brain:" + region; }
constexpr std::size_t kNamedTables = 10;
constexpr std::size_t kAuditPage = 1000;
constexpr UnixMillis kContinuedEvery = 30'000;  // ms between split_brain.continued per region

AuditEvent WatchEvent(const std::string& region, const char* action, UnixMillis at) {
  AuditEvent e;
  e.at = at;
  e.actor = kActor;
  e.source = "internal";
  e.action = action;
  e.target = AuditTarget(region);
  return e;
}

json FindingJson(const SplitBrainFinding& f) {
  return {{"key", f.Key()},
          {"region", f.region},
          {"owner", f.owner},
          {"table", f.table.ToString()},
          {"snapshot_ids", f.snapshot_ids},
          {"committed_at", FormatUnixMillis(f.committed_at)},
          {"committed_at_unix_ms", f.committed_at},
          {"owned_since_unix_ms", f.owned_since},
          {"failover_id", f.failover_id}};
}

// "sales.orders (snapshot 123 at 2026-12-01T15:02:03Z; eu-central-1 owns it since ... , moved
// by fo-...)"
std::string Describe(const SplitBrainFinding& f) {
  std::string s = f.table.ToString() + " (snapshot";
  s += f.snapshot_ids.size() == 1 ? " " : "s ";
  for (std::size_t i = 0; i < f.snapshot_ids.size(); ++i) {
    if (i > 0) s += ", ";  // appended piece by piece: GCC 12 -O3 -Wrestrict misfires
    s += std::to_string(f.snapshot_ids[i]);
  }
  s += ", newest committed at " + FormatUnixMillis(f.committed_at) + "; owned by " + f.owner +
       " since " + FormatUnixMillis(f.owned_since);
  if (!f.failover_id.empty()) s += ", moved by " + f.failover_id;
  return s + ")";
}

// "t1 (...); t2 (...); and 3 more", with every finding appended to `list`.
std::string Describe(const std::vector<SplitBrainFinding>& findings, json& list) {
  std::string out;
  for (std::size_t i = 0; i < findings.size(); ++i) {
    if (i < kNamedTables) {
      if (i > 0) out += "; ";
      out += Describe(findings[i]);
    }
    list.push_back(FindingJson(findings[i]));
  }
  if (findings.size() > kNamedTables)
    out += "; and " + std::to_string(findings.size() - kNamedTables) + " more";
  return out;
}

}  // namespace

std::string SplitBrainFinding::Key() const {
  return region + "|" + table.ToString() + "|" + std::to_string(committed_at) + "|" +
         std::to_string(snapshot_ids.size());
}

std::vector<SplitBrainFinding> FindSplitBrain(const LagReport& report,
                                              const OwnershipOf& ownership_of) {
  std::vector<SplitBrainFinding> out;
  for (const TableLag& row : report.tables) {
    if (!row.diverged || row.uuid_mismatch || !row.newest_divergent_at) continue;
    std::optional<Ownership> owner = ownership_of(row.table);
    // A round measured against an owner the table no longer has says nothing about now.
    if (!owner || owner->owner != row.owner || owner->owner == row.replica) continue;
    // Older divergent commits are what a failover lost, not a second writer.
    if (*row.newest_divergent_at <= owner->updated_at) continue;
    SplitBrainFinding f;
    f.region = row.replica;
    f.owner = row.owner;
    f.table = row.table;
    f.snapshot_ids = row.divergent_snapshot_ids;
    f.committed_at = *row.newest_divergent_at;
    f.owned_since = owner->updated_at;
    f.failover_id = owner->failover_id;
    out.push_back(std::move(f));
  }
  return out;
}

SplitBrainWatch::SplitBrainWatch(SplitBrainWatchDeps deps) : d_(std::move(deps)) {}

void SplitBrainWatch::Remember(const std::string& region, const std::string& table,
                               const std::vector<std::int64_t>& snapshot_ids) {
  // Only the ids the lag lists now: a snapshot id is never reused, so one that left the
  // divergent set (expired, or reconciled away) need not be kept, and the set stays as small
  // as the replica's divergent history.
  handled_[region + "|" + table] = std::set<std::int64_t>(snapshot_ids.begin(), snapshot_ids.end());
}

bool SplitBrainWatch::Handled(const SplitBrainFinding& f) const {
  auto it = handled_.find(f.region + "|" + f.table.ToString());
  if (it == handled_.end()) return false;
  for (std::int64_t id : f.snapshot_ids)
    if (!it->second.count(id)) return false;
  return true;
}

SplitBrainWatch::~SplitBrainWatch() { Stop(); }

Status SplitBrainWatch::Start(const std::vector<std::string>& regions) {
  // What was acted on before a restart is in the audit log: act on each commit once.
  for (const std::string& region : regions) {
    AuditQuery q;
    q.target = AuditTarget(region);
    q.limit = kAuditPage;
    for (;;) {
      auto events = d_.store->ListAudit(q);
      if (!events.ok()) return events.status();
      for (const AuditEvent& e : *events) {
        // Both: "continued" names the newer commits of a writer that went on while fenced.
        const bool detected = e.action == "split_brain.detected";
        if (!detected && e.action != "split_brain.continued") continue;
        json detail = json::parse(e.detail_json, nullptr, false);
        if (!detail.is_object() || !detail["findings"].is_array()) continue;
        for (const json& f : detail["findings"]) {
          if (!f.contains("table") || !f["table"].is_string() || !f.contains("snapshot_ids") ||
              !f["snapshot_ids"].is_array())
            continue;
          std::vector<std::int64_t> ids;
          for (const json& id : f["snapshot_ids"])
            if (id.is_number_integer()) ids.push_back(id.get<std::int64_t>());
          Remember(region, f["table"].get<std::string>(), ids);
          if (detected && d_.live != nullptr)
            d_.live->PublishSplitBrain(f["table"], region, SplitBrainMark{e.at, e.reason});
        }
      }
      if (events->size() < kAuditPage) break;
      q.after_seq = events->back().seq;
    }
  }
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void SplitBrainWatch::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // What a restart would otherwise take for new commits.
  std::vector<std::string> regions;
  for (const auto& [region, by_table] : unjournaled_) regions.push_back(region);
  for (const std::string& region : regions) FlushContinued(region);
}

void SplitBrainWatch::Loop() {
  UnixMillis seen = 0;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    std::shared_ptr<const LagReport> report = d_.live->Lag();
    if (report && report->at != seen) {
      seen = report->at;
      Examine(*report);
    }
    lock.lock();
    cv_.wait_for(lock, d_.poll, [this] { return stopping_; });
  }
}

void SplitBrainWatch::FlushContinued(const std::string& region) {
  auto pending = unjournaled_.find(region);
  if (pending == unjournaled_.end() || pending->second.empty()) return;
  std::vector<SplitBrainFinding> findings;
  for (const auto& [table, f] : pending->second) findings.push_back(f);
  AuditEvent e = WatchEvent(region, "split_brain.continued", d_.clock->Now());
  json list = json::array();
  e.reason = "split brain went on while " + region + " was fenced: it committed again to " +
             std::to_string(findings.size()) + " table" + (findings.size() == 1 ? "" : "s") +
             " it does not own: " + Describe(findings, list) +
             "; these commits are taken as seen when an operator clears the overlay";
  e.detail_json = DumpJson(json{{"region", region}, {"findings", list}});
  if (Status s = d_.store->AppendAudit(e); !s.ok()) {
    // Kept for the next round; lost only if the daemon dies first, and then a restart fences
    // again on them, which is safe.
    if (d_.log) d_.log("split-brain watch: cannot journal " + e.reason + ": " + s.message());
    return;
  }
  unjournaled_.erase(pending);
  last_continued_[region] = e.at;
  if (d_.log) d_.log(e.reason);
}

std::vector<SplitBrainFinding> SplitBrainWatch::Examine(const LagReport& report) {
  auto lookup = [this](const TableIdent& t) -> std::optional<Ownership> {
    auto got = d_.store->GetOwnership(t);
    if (!got.ok() || !got->has_value()) return std::nullopt;
    return **got;
  };
  std::map<std::string, std::vector<SplitBrainFinding>> by_region;
  std::vector<SplitBrainFinding> fresh;
  std::map<std::string, bool> fenced_now;  // region -> its overlay, read once per round
  auto fenced = [&](const std::string& region) {
    auto it = fenced_now.find(region);
    if (it != fenced_now.end()) return it->second;
    auto r = d_.store->GetRegion(region);
    return fenced_now[region] = r.ok() && r->has_value() && (*r)->fenced;
  };
  // Newer commits to a table already acted on, in a region still fenced for it.
  std::map<std::string, std::vector<SplitBrainFinding>> continued;
  for (SplitBrainFinding& f : FindSplitBrain(report, lookup)) {
    // Each commit once, by snapshot id (ids are random: the largest is not the newest).
    if (Handled(f)) {
      Remember(f.region, f.table.ToString(), f.snapshot_ids);  // forgets ids no longer listed
      continue;
    }
    // Once per table while the region stays fenced: a writer that keeps going is the same
    // split brain, so its newer commits are journaled and remembered, not acted on. After an
    // operator cleared the overlay, a commit not seen before is a new one: the commits seen
    // while fenced were in front of the operator who cleared it.
    const bool acted_on = handled_.count(f.region + "|" + f.table.ToString()) > 0;
    if (acted_on && fenced(f.region)) {
      continued[f.region].push_back(std::move(f));
      continue;
    }
    fresh.push_back(f);
    by_region[f.region].push_back(std::move(f));
  }
  // Remembered at once; journaled at most every kContinuedEvery per region (a writer that goes
  // on for an hour is not thousands of events), and before anything else once the overlay is
  // cleared: the commits seen while fenced must survive a restart after that.
  for (auto& [region, findings] : continued)
    for (SplitBrainFinding& f : findings) {
      Remember(f.region, f.table.ToString(), f.snapshot_ids);
      unjournaled_[region][f.table.ToString()] = std::move(f);  // the newest lists them all
    }
  std::vector<std::string> due;
  for (const auto& [region, by_table] : unjournaled_) {
    auto last = last_continued_.find(region);
    if (last == last_continued_.end() || d_.clock->Now() - last->second >= kContinuedEvery ||
        !fenced(region))
      due.push_back(region);
  }
  for (const std::string& region : due) FlushContinued(region);
  for (const auto& [region, findings] : by_region) {
    const UnixMillis now = d_.clock->Now();
    std::string reason =
        "split brain: " + region + " committed to " + std::to_string(findings.size()) + " table" +
        (findings.size() == 1 ? "" : "s") + " it does not own, after ownership moved: ";
    json list = json::array();
    reason += Describe(findings, list);
    std::set<std::string> failovers;
    for (const SplitBrainFinding& f : findings)
      if (!f.failover_id.empty()) failovers.insert(f.failover_id);

    // 1. Journaled before any effect; on each failover too, for its report.
    AuditEvent detected = WatchEvent(region, "split_brain.detected", now);
    detected.reason = reason;
    detected.detail_json = DumpJson(json{{"region", region}, {"findings", list}});
    Status journaled = d_.store->AppendAudit(detected);
    if (!journaled.ok()) {
      // Not journaled, not acted on: the next round tries again.
      if (d_.log)
        d_.log("split-brain watch: cannot journal " + reason + ": " + journaled.message());
      continue;
    }
    for (const std::string& id : failovers) {
      AuditEvent on_failover = detected;
      on_failover.target = id;
      (void)d_.store->AppendAudit(on_failover);
    }
    for (const SplitBrainFinding& f : findings) {
      Remember(f.region, f.table.ToString(), f.snapshot_ids);
      if (d_.live != nullptr)
        d_.live->PublishSplitBrain(f.table.ToString(), region,
                                   SplitBrainMark{now, "split brain: " + Describe(f)});
    }
    last_continued_[region] = now;  // what it writes next is a continued event 30 s on
    if (d_.log) d_.log(reason);

    // 2. No failover may target a region with a second writer.
    std::string fence_outcome = "no region-event sink";
    if (d_.region_event) {
      HealthInput in;
      in.event = HealthEvent::kSetFenced;
      in.source = EventSource::kOrchestrator;
      in.detail = reason;
      in.at = now;
      auto d = d_.region_event(region, in, kActor);
      fence_outcome = !d.ok()      ? "fencing failed: " + d.status().message()
                      : d->changed ? "fenced"
                                   : "already fenced";
    }
    // 3. The page.
    std::vector<std::string> sent;
    if (d_.alert) sent = d_.alert(SplitBrainAlert{region, reason, findings});
    AuditEvent alerted = WatchEvent(region, "split_brain.alerted", d_.clock->Now());
    std::string routes;
    for (const std::string& line : sent) routes += (routes.empty() ? "" : "; ") + line;
    alerted.reason = region + " " + fence_outcome +
                     "; alerts: " + (routes.empty() ? "no alerts: route is configured" : routes);
    alerted.detail_json = DumpJson(json{{"fence", fence_outcome}, {"alerts", sent}});
    (void)d_.store->AppendAudit(alerted);
    if (d_.log) d_.log("split-brain watch: " + alerted.reason);
  }
  return fresh;
}

}  // namespace icewarden
