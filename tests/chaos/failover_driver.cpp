#include "tests/chaos/failover_driver.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "state/etcd_client.h"
#include "state/state_store.h"

namespace icewarden::chaos {
namespace {

using nlohmann::json;
using Steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct Reply {
  int status = -1;
  json body;
};

Reply Post(const std::string& base, const std::string& path, const std::string& token,
           const json& body) {
  httplib::Client c(base);
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(15, 0);
  auto res = c.Post(path, {{"Authorization", "Bearer " + token}}, body.dump(), "application/json");
  Reply r;
  if (!res) return r;
  r.status = res->status;
  r.body = json::parse(res->body, nullptr, false);
  return r;
}

std::string Said(const Reply& r) {
  if (r.status < 0) return "no answer";
  if (r.body.is_object() && r.body.contains("error"))
    return std::to_string(r.status) + " " + r.body["error"].value("message", "");
  return std::to_string(r.status);
}

}  // namespace

FailoverDriver::FailoverDriver(DriverOptions options, std::shared_ptr<StateStore> record)
    : options_(std::move(options)), record_(std::move(record)), rng_(options_.seed) {}

FailoverDriver::~FailoverDriver() { Stop(); }

void FailoverDriver::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void FailoverDriver::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

bool FailoverDriver::Idle() const {
  std::lock_guard lock(mu_);
  return figures_.active.empty();
}

DriverFigures FailoverDriver::Figures() const {
  std::lock_guard lock(mu_);
  return figures_;
}

void FailoverDriver::Loop() {
  EtcdClient etcd(EtcdClientOptions{options_.etcd_endpoints, 2000ms});
  while (!stop_) {
    auto key = etcd.Range(options_.leader_key);
    if (key.ok() && !key->kvs.empty() && Steady::now() >= next_try_) {
      json v = json::parse(key->kvs[0].value, nullptr, false);
      const std::string api = v.is_object() ? v.value("api", "") : "";
      const std::int64_t term = key->kvs[0].create_revision;
      if (!api.empty()) {
        if (id_.empty()) {
          if (!draining_) Propose(api, term);
        } else {
          Advance(api, term);
        }
      }
    }
    std::this_thread::sleep_for(250ms);
  }
}

void FailoverDriver::Refused(const std::string& why) {
  std::lock_guard lock(mu_);
  ++figures_.refused_proposals;
  ++figures_.refusals[why.substr(0, 60)];
}

void FailoverDriver::Propose(const std::string& api, std::int64_t term) {
  auto counts = record_->CountOwnershipByOwner();
  if (!counts.ok()) return;
  std::vector<std::string> owners;
  for (const auto& [owner, n] : *counts)
    if (n > 0) owners.push_back(owner);
  if (owners.empty()) return;  // the leader has not claimed the tables yet
  const std::string from = owners[rng_() % owners.size()];
  const std::string to = from == options_.regions[0] ? options_.regions[1] : options_.regions[0];
  const std::string kind = rng_() % 2 ? "switchover" : "failover";
  Reply r = Post(api, "/api/v1/failovers", options_.operator_token,
                 {{"kind", kind},
                  {"to", to},
                  {"scope", "owner:" + from},
                  {"reason", "chaos run: " + kind + " #" + std::to_string(++proposals_)}});
  if (r.status != 201 || !r.body.is_object() || !r.body.contains("failover")) {
    Refused(kind + ": " + Said(r));
    next_try_ = Steady::now() + 1s;
    return;
  }
  id_ = r.body["failover"]["id"];
  proposed_at_ = Steady::now();
  proposed_term_ = term;
  confirmed_ = false;
  fencing_since_ = {};
  std::lock_guard lock(mu_);
  ++figures_.started[kind];
  figures_.active = id_;
}

void FailoverDriver::Advance(const std::string& api, std::int64_t term) {
  auto found = record_->GetFailover(id_);
  if (!found.ok() || !found->has_value()) return;
  const Failover& f = **found;
  if (IsTerminal(f.phase)) {
    std::lock_guard lock(mu_);
    ++figures_.ended[FailoverPhaseName(f.phase)];
    if (term != proposed_term_) ++figures_.across_terms;
    figures_.active.clear();
    id_.clear();
    return;
  }
  const auto now = Steady::now();
  if (now - proposed_at_ > options_.abort_after) {
    Reply r = Post(api, "/api/v1/failovers/" + id_ + "/abort", options_.operator_token,
                   {{"reason", "chaos run: not finished in time"}});
    if (r.status == 200) {
      std::lock_guard lock(mu_);
      ++figures_.aborts;
    }
    next_try_ = now + 1s;
    return;
  }
  if (f.phase == FailoverPhase::kProposed) {
    Reply r = Post(api, "/api/v1/failovers/" + id_ + "/approve", options_.approver_token,
                   {{"plan_hash", f.plan.plan_hash}, {"reason", "chaos run"}});
    if (r.status == 200) {
      std::lock_guard lock(mu_);
      ++figures_.approvals;
    } else {
      next_try_ = now + 1s;  // a guard (no lag round yet after a takeover), or no leader
    }
    return;
  }
  // Refused at the last check before promotion (a guard failed after the approval): an approver
  // looks again and approves again, as the refusal asks.
  if (f.phase == FailoverPhase::kFenced &&
      f.last_reason.find("approve again") != std::string::npos) {
    Reply r = Post(api, "/api/v1/failovers/" + id_ + "/approve", options_.approver_token,
                   {{"plan_hash", f.plan.plan_hash}, {"reason", "chaos run: approved again"}});
    std::lock_guard lock(mu_);
    if (r.status == 200) ++figures_.reapprovals;
    next_try_ = now + 2s;
    return;
  }
  if (f.phase == FailoverPhase::kFencing) {
    if (fencing_since_ == Steady::time_point{}) fencing_since_ = now;
    if (!confirmed_ && now - fencing_since_ > options_.confirm_after) {
      Reply r = Post(api, "/api/v1/failovers/" + id_ + "/fencing-confirmation",
                     options_.operator_token, {{"reason", "chaos run: writers stopped by hand"}});
      if (r.status == 200) {
        confirmed_ = true;
        std::lock_guard lock(mu_);
        ++figures_.operator_confirmations;
      }
      next_try_ = now + 1s;
    }
  }
}

}  // namespace icewarden::chaos
