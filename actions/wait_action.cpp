// wait: pauses a runbook, either for a fixed time or until an HTTP endpoint answers as
// expected (a replica reports ready, a load balancer has drained).
//
// Params: duration ("30s"; required without until), until {url, expect_status (default
// 2xx), headers} (optional: GET the url every poll_interval until it answers with an
// expected status; duration then bounds the wait, else the step's deadline does),
// poll_interval (default 5s; only with until).
//
// Idempotent: waiting has no effect. A fixed wait longer than the time left before the
// step's deadline fails at once ("step timeout shorter than wait") rather than sleeping
// until it is killed; only Run can know, because the timeout belongs to the step.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>

#include "actions/action_kinds.h"
#include "actions/http_call.h"
#include "actions/param_reader.h"
#include "actions/parsed_action.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

const std::vector<std::string> kWaitParams = {"duration", "until", "poll_interval"};
const std::vector<std::string> kUntilParams = {"url", "expect_status", "headers"};
constexpr auto kSlice = 20ms;  // how quickly a wait notices cancellation

struct WaitSpec {
  std::optional<std::chrono::milliseconds> duration;
  std::optional<HttpCall> until;
  ExpectStatus expect;
  std::chrono::milliseconds poll_interval{5000};
};

std::optional<WaitSpec> ParseWait(const nlohmann::json& params, std::vector<ParamError>& errors) {
  ParamReader r(&errors);
  if (!r.RequireObject(params, "")) return std::nullopt;
  r.RejectUnknown(params, "", kWaitParams);
  WaitSpec s;
  const bool has_until = params.contains("until") && !params["until"].is_null();
  s.duration = r.Duration(params, "", "duration", !has_until);
  if (has_until) {
    const nlohmann::json& u = params["until"];
    if (r.RequireObject(u, "until")) {
      r.RejectUnknown(u, "until", kUntilParams);
      HttpCall call;
      call.method = "GET";
      if (auto url = ReadHttpUrl(u, "until", "url", r)) call.url = *url;
      if (auto h = r.StringMap(u, "until", "headers", false)) call.headers = *h;
      if (auto e = ReadExpectStatus(u, "until", "expect_status", r)) s.expect = *e;
      s.until = call;
    }
    if (auto p = r.Duration(params, "", "poll_interval", false)) {
      if (*p < kMinPollInterval)
        r.Error("poll_interval", "must be at least " + FormatParamDuration(kMinPollInterval));
      else
        s.poll_interval = *p;
    }
  } else if (params.contains("poll_interval")) {
    r.Error("poll_interval", "only used with until");
  }
  if (!r.ok()) return std::nullopt;
  return s;
}

// Sleeps until `until` or until the context expires; true when `until` was reached.
bool SleepUntil(SteadyClock::time_point until, const ActionContext& ctx) {
  while (SteadyClock::now() < until) {
    if (ctx.expired()) return false;
    std::this_thread::sleep_for(
        std::min<SteadyClock::duration>(kSlice, until - SteadyClock::now()));
  }
  return !ctx.expired() || SteadyClock::now() >= until;
}

std::string Elapsed(SteadyClock::time_point since) {
  return FormatParamDuration(
      std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - since));
}

std::string Interrupted(const ActionContext& ctx) {
  return ctx.cancel && ctx.cancel->cancelled() ? "cancelled" : "step deadline passed";
}

class WaitAction final : public ParsedAction<WaitSpec> {
 public:
  std::string_view kind() const override { return "wait"; }
  bool idempotent() const override { return true; }

 protected:
  std::optional<WaitSpec> Read(const nlohmann::json& params,
                               std::vector<ParamError>& errors) const override {
    return ParseWait(params, errors);
  }

  std::string PlanSpec(const WaitSpec& s) const override {
    if (!s.until) return "wait " + FormatParamDuration(*s.duration);
    std::string line = "wait until GET " + s.until->url + " returns " + s.expect.ToString() +
                       ", polling every " + FormatParamDuration(s.poll_interval);
    line += s.duration ? ", for at most " + FormatParamDuration(*s.duration)
                       : std::string(", until the step times out");
    return line;
  }

  ActionResult RunSpec(const WaitSpec& s, const ActionContext& ctx) override {
    const auto started = SteadyClock::now();
    if (!s.until) return FixedWait(*s.duration, ctx, started);
    return PollUntil(s, ctx, started);
  }

 private:
  static ActionResult FixedWait(std::chrono::milliseconds d, const ActionContext& ctx,
                                SteadyClock::time_point started) {
    const std::string wanted = FormatParamDuration(d);
    if (started + d > ctx.deadline) {
      const auto left = std::max<SteadyClock::duration>(0ms, ctx.deadline - started);
      return ActionResult::Failed(
          "step timeout shorter than wait: asked to wait " + wanted + " with " +
          FormatParamDuration(std::chrono::duration_cast<std::chrono::milliseconds>(left)) +
          " left before the step's deadline");
    }
    if (!SleepUntil(started + d, ctx))
      return ActionResult::Failed("wait " + Interrupted(ctx) + " after " + Elapsed(started) +
                                  " of " + wanted);
    return ActionResult::Succeeded("waited " + wanted);
  }

  static ActionResult PollUntil(const WaitSpec& s, const ActionContext& ctx,
                                SteadyClock::time_point started) {
    const auto limit = s.duration ? std::min(ctx.deadline, started + *s.duration) : ctx.deadline;
    std::string redacted = s.until->url;
    std::string why;
    if (auto u = ParseHttpUrl(s.until->url, &why)) redacted = u->Redacted();
    std::string last;
    for (int polls = 1;; ++polls) {
      // Each poll ends by the limit, so a hanging endpoint cannot hold the wait past it.
      ActionContext poll_ctx = ctx;
      poll_ctx.deadline = std::min(ctx.deadline, limit);
      HttpReply reply = SendHttp(*s.until, poll_ctx);
      if (reply.delivery == HttpReply::Delivery::kAnswered && s.expect.Matches(reply.status)) {
        return ActionResult::Succeeded(
            "GET " + redacted + " returned " + std::to_string(reply.status) + " after " +
                Elapsed(started) + " (" + std::to_string(polls) + " polls)",
            DumpJson(nlohmann::json{{"polls", polls}, {"status", reply.status}}));
      }
      last = reply.delivery == HttpReply::Delivery::kAnswered
                 ? "last answer " + std::to_string(reply.status)
                 : "last poll: " + reply.error;
      // Gives up early when the next poll would not fit before the limit.
      const auto next = SteadyClock::now() + s.poll_interval;
      if (ctx.expired() || next >= limit || !SleepUntil(next, ctx)) {
        if (ctx.expired())
          return ActionResult::Failed("wait for GET " + redacted + " " + Interrupted(ctx) +
                                      " after " + Elapsed(started) + "; " + last);
        return ActionResult::Failed("GET " + redacted + " did not return " + s.expect.ToString() +
                                    " within " + Elapsed(started) + " (" + std::to_string(polls) +
                                    " polls); " + last);
      }
    }
  }
};

}  // namespace

Status registerControlActions(ActionRegistry& r, const ActionEnv&) {
  return r.Register(std::make_unique<WaitAction>());
}

}  // namespace icewarden
