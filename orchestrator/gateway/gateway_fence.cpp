// gateway.fence: the runbook step that closes the failover's scope at every catalog gateway,
// before the old owner itself is fenced. A gateway closes a failover's scope on its own as
// soon as it reads the failover in `fencing` from the store (commit_rules.h); this step asks
// each configured gateway, GET /icewarden/v1/closures/{failover}, until each confirms that it
// has read it and that no write it let through to the old owner for the scope is still in
// flight. From then on, nothing reaches the old owner through a gateway.
//
// Params: gateways (names from the config's gateways:, default every one), poll_interval
// (default 50ms). Idempotent: it only asks. It has no compensation of its own: the closure
// is the failover's phase, so the tables reopen when the failover ends (at the old owner if
// it is rolled back), and stay closed while it needs attention.
//
// Registered by the daemon (serve) and `runbook validate|plan`, which know the gateways; it
// lives with the gateway because it speaks the gateway's admin route.

#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>

#include "actions/http_call.h"
#include "actions/param_reader.h"
#include "actions/parsed_action.h"
#include "orchestrator/config/config.h"
#include "orchestrator/gateway/gateway.h"

namespace icewarden {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

struct FenceSpec {
  std::vector<GatewayEndpoint> gateways;
  std::chrono::milliseconds poll_interval{50};
};

class GatewayFenceAction final : public ParsedAction<FenceSpec> {
 public:
  explicit GatewayFenceAction(std::optional<std::vector<GatewayEndpoint>> gateways)
      : known_(gateways.has_value()),
        gateways_(gateways.value_or(std::vector<GatewayEndpoint>{})) {}

  std::string_view kind() const override { return "gateway.fence"; }
  bool idempotent() const override { return true; }

 protected:
  std::optional<FenceSpec> Read(const json& params,
                                std::vector<ParamError>& errors) const override {
    ParamReader r(&errors);
    if (!r.RequireObject(params, "")) return std::nullopt;
    r.RejectUnknown(params, "", {"gateways", "poll_interval"});
    FenceSpec spec;
    auto names = r.StringOrList(params, "", "gateways", false);
    if (auto p = r.Duration(params, "", "poll_interval", false)) {
      if (*p < 10ms || *p > 10s) {
        r.Error("poll_interval", "must be from 10ms to 10s");
      } else {
        spec.poll_interval = *p;
      }
    }
    // Without the config only the shape can be checked.
    if (!known_) return r.ok() ? std::optional<FenceSpec>(spec) : std::nullopt;
    if (names) {
      for (const std::string& name : *names) {
        auto it = std::find_if(gateways_.begin(), gateways_.end(),
                               [&](const GatewayEndpoint& g) { return g.name == name; });
        if (it == gateways_.end()) {
          std::string known;
          for (const auto& g : gateways_) known += (known.empty() ? "" : ", ") + g.name;
          r.Error("gateways", "no gateway named '" + name + "' in the config's gateways:" +
                                  (known.empty() ? " (there are none)" : " (" + known + ")"));
          continue;
        }
        spec.gateways.push_back(*it);
      }
    } else {
      spec.gateways = gateways_;
    }
    if (spec.gateways.empty() && r.ok()) {
      r.Error("gateways", "the config has no gateways: to close; add them, or drop this step");
    }
    for (const GatewayEndpoint& g : spec.gateways) {
      if (g.url.empty()) {
        r.Error("gateways", "gateway '" + g.name +
                                "' listens on a port chosen at start and has no advertise: URL, "
                                "so the orchestrator cannot ask it; give it a fixed port or "
                                "advertise");
      }
    }
    if (!r.ok()) return std::nullopt;
    return spec;
  }

  std::string PlanSpec(const FenceSpec& spec) const override {
    if (!known_) return "close the scope to writes at the config's gateways and wait for each";
    std::string names;
    for (const auto& g : spec.gateways) names += (names.empty() ? "" : ", ") + g.name;
    return "close the scope to writes at gateway" +
           std::string(spec.gateways.size() > 1 ? "s " : " ") + names +
           " and wait until each confirms that no write to the old owner is in flight";
  }

  ActionResult RunSpec(const FenceSpec& spec, const ActionContext& ctx) override {
    if (!known_) return ActionResult::Failed("gateway.fence runs only where the config is known");
    struct State {
      const GatewayEndpoint* gateway = nullptr;
      bool confirmed = false;
      int polls = 0;
      std::string last = "not asked yet";
      json answer;
    };
    std::vector<State> states;
    for (const auto& g : spec.gateways) {
      State s;
      s.gateway = &g;
      states.push_back(std::move(s));
    }
    const auto started = std::chrono::steady_clock::now();
    while (true) {
      for (State& s : states) {
        if (s.confirmed) continue;
        HttpCall call;
        call.method = "GET";
        call.url = s.gateway->url + "/icewarden/v1/closures/" + ctx.failover_id;
        call.ca_file = s.gateway->ca_file;
        ActionContext poll = ctx;
        poll.deadline = std::min(ctx.deadline, std::chrono::steady_clock::now() + 2s);
        HttpReply reply = SendHttp(call, poll);
        ++s.polls;
        if (reply.delivery != HttpReply::Delivery::kAnswered) {
          s.last = "unreachable: " + reply.error;
          continue;
        }
        json j = json::parse(reply.body, nullptr, false);
        if (reply.status != 200 || !j.is_object()) {
          s.last = "answered " + std::to_string(reply.status) + ": " + BodyExcerpt(reply.body);
          continue;
        }
        s.answer = j;
        if (j.value("confirmed", false)) {
          s.confirmed = true;
        } else if (!j.value("store_readable", false)) {
          s.last = "cannot read the store, and " + std::to_string(j.value("in_flight", 0)) +
                   " write(s) it let through are still in flight";
        } else if (!j.value("seen", false)) {
          s.last = "has not read failover " + ctx.failover_id + " from the store yet";
        } else if (!j.value("closes", false)) {
          s.last = "reads failover " + ctx.failover_id + " in phase " +
                   j.value("phase", std::string("?")) + ", which does not close its scope";
        } else {
          s.last = std::to_string(j.value("in_flight", 0)) +
                   " write(s) to the old owner still in flight";
        }
      }
      json detail = json::array();
      std::vector<std::string> waiting;
      for (const State& s : states) {
        detail.push_back({{"gateway", s.gateway->name},
                          {"confirmed", s.confirmed},
                          {"polls", s.polls},
                          {"answer", s.answer.is_null() ? json(s.last) : s.answer}});
        if (!s.confirmed) waiting.push_back(s.gateway->name + ": " + s.last);
      }
      const std::string detail_json = json{{"gateways", detail}}.dump();
      const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - started);
      if (waiting.empty()) {
        return ActionResult::Succeeded("closed at " + std::to_string(states.size()) +
                                           " gateway(s) in " + std::to_string(took.count()) +
                                           " ms; no write to the old owner in flight",
                                       detail_json);
      }
      if (ctx.expired() || std::chrono::steady_clock::now() + spec.poll_interval > ctx.deadline) {
        std::string why;
        for (const auto& w : waiting) why += (why.empty() ? "" : "; ") + w;
        return ActionResult::Failed("not every gateway confirmed the closure: " + why, detail_json);
      }
      std::this_thread::sleep_for(spec.poll_interval);
    }
  }

 private:
  const bool known_;
  const std::vector<GatewayEndpoint> gateways_;
};

}  // namespace

std::vector<GatewayEndpoint> GatewayEndpoints(const Config& config) {
  std::vector<GatewayEndpoint> out;
  for (const GatewayConfig& g : config.gateways) {
    std::string url = g.advertise;
    if (url.empty() && !ListensOnEphemeralPort(g))
      url = (g.tls.enabled() ? "https://" : "http://") + g.listen;
    out.push_back({g.name, url, g.tls.ca_file});
  }
  return out;
}

std::unique_ptr<Action> MakeGatewayFenceAction(
    std::optional<std::vector<GatewayEndpoint>> gateways) {
  return std::make_unique<GatewayFenceAction>(std::move(gateways));
}

}  // namespace icewarden
