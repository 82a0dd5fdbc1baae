#include "tests/fakes/fake_store.h"

#include <algorithm>
#include <set>

namespace icewarden::testing {

#define ICEWARDEN_FAKE_FAIL_IF_ASKED() \
  std::lock_guard lock(mu_);           \
  if (failure_) return *failure_

void FakeStore::FailWith(std::optional<Status> failure) {
  std::lock_guard lock(mu_);
  failure_ = std::move(failure);
}

void FakeStore::AppendLocked(AuditEvent event) {
  event.seq = audit_.empty() ? 1 : audit_.back().seq + 1;
  if (event.at == 0) event.at = clock_.Now();
  audit_.push_back(std::move(event));
}

Status FakeStore::PutRegion(const Region& region, const AuditEvent& why) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  regions_[region.name] = region;
  AppendLocked(why);
  return Status::Ok();
}

Result<std::optional<Region>> FakeStore::GetRegion(const std::string& name) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  auto it = regions_.find(name);
  if (it == regions_.end()) return std::optional<Region>();
  return std::optional<Region>(it->second);
}

Result<std::vector<Region>> FakeStore::ListRegions() {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  std::vector<Region> out;
  for (const auto& [name, region] : regions_) out.push_back(region);
  return out;
}

Result<std::optional<Ownership>> FakeStore::GetOwnership(const TableIdent& table) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  auto it = ownership_.find(KeyOf(table));
  if (it == ownership_.end()) return std::optional<Ownership>();
  return std::optional<Ownership>(it->second);
}

Result<std::vector<Ownership>> FakeStore::ListOwnership(const OwnershipQuery& query) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  std::vector<Ownership> out;
  auto it = query.after ? ownership_.upper_bound(KeyOf(*query.after)) : ownership_.begin();
  for (; it != ownership_.end(); ++it) {
    if (query.limit != 0 && out.size() >= query.limit) break;
    if (query.owner && it->second.owner != *query.owner) continue;
    out.push_back(it->second);
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::int64_t>>> FakeStore::CountOwnershipByOwner() {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  std::map<std::string, std::int64_t> counts;
  for (const auto& [key, o] : ownership_) ++counts[o.owner];
  return std::vector<std::pair<std::string, std::int64_t>>(counts.begin(), counts.end());
}

Status FakeStore::CompareAndSetOwnership(std::span<const OwnershipChange> changes,
                                         const AuditEvent& why) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  std::set<TableKey> seen;
  for (const OwnershipChange& c : changes) {
    if (!seen.insert(KeyOf(c.table)).second)
      return Status::InvalidArgument(c.table.ToString() + " appears twice in one batch");
  }
  for (const OwnershipChange& c : changes) {
    auto it = ownership_.find(KeyOf(c.table));
    const Epoch current = it == ownership_.end() ? 0 : it->second.epoch;
    if (current != c.expected_epoch) {
      return Status::Conflict("epoch of " + c.table.ToString() + " is " + std::to_string(current) +
                              " (owner " +
                              (it == ownership_.end() ? std::string("none") : it->second.owner) +
                              "), expected " + std::to_string(c.expected_epoch));
    }
  }
  for (const OwnershipChange& c : changes) {
    ownership_[KeyOf(c.table)] =
        Ownership{c.table, c.new_owner, c.expected_epoch + 1, clock_.Now(), c.failover_id};
  }
  AppendLocked(why);
  return Status::Ok();
}

Status FakeStore::CreateFailover(const Failover& failover, const AuditEvent& why) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  if (failovers_.count(failover.id)) return Status::Conflict("failover " + failover.id + " exists");
  Failover stored = failover;
  stored.version = 1;
  failovers_[failover.id] = std::move(stored);
  failover_order_.push_back(failover.id);
  AppendLocked(why);
  return Status::Ok();
}

Status FakeStore::UpdateFailover(const Failover& failover, std::int64_t expected_version,
                                 const AuditEvent& why) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  auto it = failovers_.find(failover.id);
  if (it == failovers_.end()) return Status::NotFound("no failover " + failover.id);
  if (it->second.version != expected_version) {
    return Status::Conflict("failover " + failover.id + " is at version " +
                            std::to_string(it->second.version) + ", expected " +
                            std::to_string(expected_version));
  }
  it->second = failover;
  it->second.version = expected_version + 1;
  AppendLocked(why);
  return Status::Ok();
}

Result<std::optional<Failover>> FakeStore::GetFailover(const std::string& id) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  auto it = failovers_.find(id);
  if (it == failovers_.end()) return std::optional<Failover>();
  return std::optional<Failover>(it->second);
}

Result<std::vector<Failover>> FakeStore::ListFailovers(std::size_t limit) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  std::vector<Failover> out;
  for (auto it = failover_order_.rbegin(); it != failover_order_.rend(); ++it) {
    if (limit != 0 && out.size() >= limit) break;
    out.push_back(failovers_.at(*it));
  }
  return out;
}

Result<std::vector<Failover>> FakeStore::ListActiveFailovers() {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  std::vector<Failover> out;
  for (const std::string& id : failover_order_) {
    const Failover& f = failovers_.at(id);
    if (!IsTerminal(f.phase)) out.push_back(f);
  }
  return out;
}

Status FakeStore::PutStep(const StepRecord& step) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  auto& journal = steps_[step.failover_id];
  auto it = std::find_if(journal.begin(), journal.end(),
                         [&](const StepRecord& s) { return s.step_id == step.step_id; });
  if (it == journal.end()) {
    journal.push_back(step);
  } else {
    *it = step;
  }
  return Status::Ok();
}

Result<std::vector<StepRecord>> FakeStore::ListSteps(const std::string& failover_id) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  auto it = steps_.find(failover_id);
  if (it == steps_.end()) return std::vector<StepRecord>();
  return it->second;
}

Status FakeStore::AppendAudit(const AuditEvent& event) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  AppendLocked(event);
  return Status::Ok();
}

Result<std::vector<AuditEvent>> FakeStore::ListAudit(const AuditQuery& query) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  std::vector<AuditEvent> out;
  for (const AuditEvent& e : audit_) {
    if (query.limit != 0 && out.size() >= query.limit) break;
    if (e.seq <= query.after_seq) continue;
    if (query.target && e.target != *query.target) continue;
    out.push_back(e);
  }
  return out;
}

Result<std::int64_t> FakeStore::LastAuditSeq() {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  return audit_.empty() ? 0 : audit_.back().seq;
}

Status FakeStore::RecordWebhookDelivery(const WebhookDelivery& delivery, const AuditEvent& why) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  for (const WebhookDelivery& d : deliveries_)
    if (d.key == delivery.key)
      return Status::Conflict("webhook delivery " + delivery.key + " is recorded");
  deliveries_.push_back(delivery);
  if (deliveries_.back().received_at == 0) deliveries_.back().received_at = clock_.Now();
  AppendLocked(why);
  return Status::Ok();
}

Result<std::optional<WebhookDelivery>> FakeStore::GetWebhookDelivery(const std::string& key) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  for (const WebhookDelivery& d : deliveries_)
    if (d.key == key) return std::optional<WebhookDelivery>(d);
  return std::optional<WebhookDelivery>();
}

Result<std::vector<WebhookDelivery>> FakeStore::ListWebhookDeliveries(const std::string& source,
                                                                      const std::string& alert) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  std::vector<WebhookDelivery> out;
  for (const WebhookDelivery& d : deliveries_)
    if ((source.empty() && alert.empty()) || (d.source == source && d.alert == alert))
      out.push_back(d);
  return out;
}

Status FakeStore::StartTimer(const std::string& name, std::chrono::milliseconds ttl) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  if (name.empty() || ttl.count() <= 0) return Status::InvalidArgument("bad timer " + name);
  timers_[name] = {clock_.Now(), ttl.count()};
  return Status::Ok();
}

Result<std::vector<StoreTimer>> FakeStore::ListTimers(const std::string& prefix) {
  ICEWARDEN_FAKE_FAIL_IF_ASKED();
  std::vector<StoreTimer> out;
  for (const auto& [name, t] : timers_) {
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::int64_t elapsed = std::max<std::int64_t>(0, clock_.Now() - t.first);
    if (elapsed >= t.second) continue;
    out.push_back({name, std::chrono::milliseconds(elapsed), std::chrono::milliseconds(t.second)});
  }
  return out;
}

}  // namespace icewarden::testing
