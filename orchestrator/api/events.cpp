#include "orchestrator/api/events.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/api/api.h"
#include "orchestrator/api/command_body.h"
#include "orchestrator/api/query.h"
#include "state/json_text.h"
#include "state/record_json.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

using nlohmann::json;

// Events per poll at most: a client far behind catches up over a few polls instead of one
// write the size of the audit log.
constexpr std::size_t kMaxEventsPerPoll = 500;
// Active failovers whose steps are followed (the newest ones; more at once is not a thing).
constexpr std::size_t kFollowedFailovers = 50;

std::string TypeOf(const std::string& action) {
  for (const char* prefix : {"region", "failover", "readiness", "drill", "automation"}) {
    const std::string p = std::string(prefix) + ".";
    if (action.rfind(p, 0) == 0) return prefix;
  }
  return "audit";
}

std::string Frame(std::int64_t id, const std::string& type, const json& data) {
  return "id: " + std::to_string(id) + "\nevent: " + type + "\ndata: " + DumpJson(data) + "\n\n";
}

class EventStream final : public ApiStream {
 public:
  EventStream(StateStore& store, EventStreamOptions options)
      : store_(store), options_(options), last_seq_(options.after_seq) {}

  std::optional<std::string> Poll() override {
    std::string out;
    if (last_seq_ < 0) {
      // From now on: the newest seq is where the client starts (a comment says which, so
      // that a client may resume from it).
      auto newest = store_.LastAuditSeq();
      if (!newest.ok()) return std::string(": the audit log cannot be read now; retrying\n\n");
      last_seq_ = *newest;
      out += ": icewarden events after seq " + std::to_string(last_seq_) + "\n\n";
    }
    auto events = store_.ListAudit({last_seq_, kMaxEventsPerPoll, std::nullopt});
    if (events.ok()) {
      for (const AuditEvent& e : *events) {
        out += Frame(e.seq, TypeOf(e.action), Data(e));
        last_seq_ = e.seq;
      }
    }
    out += StepChanges();
    if (out.empty()) {
      if (++idle_polls_ >= options_.keepalive_polls) {
        idle_polls_ = 0;
        return std::string(":\n\n");
      }
    } else {
      idle_polls_ = 0;
    }
    return out;
  }

 private:
  json Data(const AuditEvent& e) const {
    json j = AuditEventJson(e);
    if (options_.full_audit) return j;
    return json{{"seq", e.seq}, {"at", j["at"]}, {"action", e.action}, {"target", e.target}};
  }

  // One `step` event, with all its steps, for every active failover whose phase or steps
  // changed since the last poll (for all of them on the first poll), and once more for a
  // followed one that has ended. Reads only the active failovers (an index): a poll with
  // nothing in flight costs two indexed reads, whatever the number of failovers ever run.
  std::string StepChanges() {
    auto active = store_.ListActiveFailovers();
    if (!active.ok()) return "";
    std::vector<Failover> failovers = std::move(*active);
    // Oldest first: the newest kFollowedFailovers are the ones followed.
    if (failovers.size() > kFollowedFailovers)
      failovers.erase(failovers.begin(),
                      failovers.end() - static_cast<std::ptrdiff_t>(kFollowedFailovers));
    for (const auto& entry : seen_) {
      const std::string& id = entry.first;
      const bool still = std::any_of(failovers.begin(), failovers.end(),
                                     [&](const Failover& f) { return f.id == id; });
      if (still) continue;
      auto ended = store_.GetFailover(id);
      if (ended.ok() && ended->has_value()) failovers.push_back(**ended);
    }
    std::string out;
    std::map<std::string, std::string> now;
    for (const Failover& f : failovers) {
      if (IsTerminal(f.phase) && !seen_.count(f.id)) continue;
      auto steps = store_.ListSteps(f.id);
      if (!steps.ok()) continue;
      json list = json::array();
      std::string digest = FailoverPhaseName(f.phase);
      for (const StepRecord& s : *steps) {
        list.push_back(StepJson(s));
        digest += "|" + s.step_id + ":" + StepStateName(s.state) + ":" + std::to_string(s.attempt);
      }
      if (!IsTerminal(f.phase)) now[f.id] = digest;
      auto it = seen_.find(f.id);
      if (it != seen_.end() && it->second == digest) continue;
      out += Frame(last_seq_, "step",
                   json{{"failover_id", f.id},
                        {"phase", FailoverPhaseName(f.phase)},
                        {"steps", std::move(list)}});
    }
    seen_ = std::move(now);
    return out;
  }

  StateStore& store_;
  const EventStreamOptions options_;
  std::int64_t last_seq_;
  int idle_polls_ = 0;
  std::map<std::string, std::string> seen_;  // active failover id -> what its steps were
};

}  // namespace

std::shared_ptr<ApiStream> MakeEventStream(StateStore& store, EventStreamOptions options) {
  return std::make_shared<EventStream>(store, options);
}

ApiResponse HandleEventStream(StateStore& store, bool full_audit, const QueryParams& query,
                              const ApiRequest& request) {
  EventStreamOptions o;
  o.full_audit = full_audit;
  auto after = query.Integer("after", -1, 0, std::numeric_limits<std::int64_t>::max());
  if (!after.ok()) return BadRequestResponse(after.status().message());
  o.after_seq = *after;
  if (auto it = request.headers.find("last-event-id"); it != request.headers.end()) {
    std::int64_t seq = 0;
    const std::string& v = it->second;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seq);
    if (ec != std::errc() || end != v.data() + v.size() || seq < 0)
      return BadRequestResponse(
          "Last-Event-ID must be an event id this stream sent (a seq), got '" + v.substr(0, 40) +
          "'");
    o.after_seq = seq;
  }
  ApiResponse res;
  res.content_type = "text/event-stream";
  res.headers = {{"Cache-Control", "no-store"}};
  res.body = "retry: 2000\n\n";
  res.stream = MakeEventStream(store, o);
  return res;
}

}  // namespace icewarden
