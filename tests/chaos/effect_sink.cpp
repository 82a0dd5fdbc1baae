#include "tests/chaos/effect_sink.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "state/etcd_client.h"

namespace icewarden::chaos {

EffectSink::EffectSink(std::vector<std::string> etcd_endpoints, std::string leader_key)
    : endpoints_(std::move(etcd_endpoints)),
      leader_key_(std::move(leader_key)),
      server_(std::make_unique<httplib::Server>()) {
  auto record = [this](const httplib::Request& req, httplib::Response& res) {
    Effect e;
    e.landed_at = std::chrono::steady_clock::now();
    e.path = req.path;
    e.idempotency_key = req.get_header_value("Idempotency-Key");
    e.sender = req.get_header_value("X-Chaos-Incarnation");
    // Read after landing: a term that could have ended before the effect landed is gone from
    // etcd only once its lease expires, which is after the leader's act_until by the margin.
    EtcdClient etcd(EtcdClientOptions{endpoints_, std::chrono::milliseconds(2000)});
    auto key = etcd.Range(leader_key_);
    if (key.ok() && !key->kvs.empty()) {
      e.term = key->kvs[0].create_revision;
      auto v = nlohmann::json::parse(key->kvs[0].value, nullptr, false);
      if (v.is_object()) e.holder = v.value("replica", "");
    } else if (!key.ok()) {
      e.holder = "? etcd: " + key.status().ToString();
    }
    {
      std::lock_guard lock(mu_);
      effects_.push_back(std::move(e));
    }
    res.set_content("{}", "application/json");
  };
  server_->Post(".*", record);
  server_->Put(".*", record);
  server_->Get(".*", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{}", "application/json");  // readiness preflights GET the endpoint
  });
  port_ = server_->bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

EffectSink::~EffectSink() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string EffectSink::Url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

std::vector<Effect> EffectSink::Effects() const {
  std::lock_guard lock(mu_);
  return effects_;
}

}  // namespace icewarden::chaos
