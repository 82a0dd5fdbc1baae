// Standing failover readiness (DESIGN.md "readiness", issue 10 item 5): for every configured
// failover route, whether that failover would work if it were proposed now, and every
// reason it would not. Checked with no side effect at all:
//   guards     the route's guards for a hypothetical proposal (FailoverService::CurrentGuards
//              on a failover that is never stored): target health, lag, overlap, cooldown...
//   templates  every ${env.NAME} and ${file:PATH} (and ${params.NAME}) each step needs resolves
//   preflight  each step's kind checks what it can (actions/preflight.h): the DNS server takes
//              our TSIG key, Alertmanager and webhooks answer, the target catalog accepts our
//              credentials
//
// The proposal a route is checked for: kind, from and to as the route says; for a route
// from "*", one check per region the route could move from (reasons say "from REGION: ...").
// The scope is owner:FROM when the route's scope glob matches it, else the route's scope
// itself when it is a scope (namespace:eu.*), else the route cannot be checked (a reason).
//
// Data flows one way: ReadinessEvaluator reads the store, the live view (through the
// FailoverService) and the outside world (read-only); ReadinessLoop runs it on its own thread
// every policies.readiness_interval and publishes to a ReadinessBoard, which the API, the
// metrics page and failover plans read. Nothing here writes anything but the board.
// Thread-safety: ReadinessEvaluator::Evaluate* may run on any thread (the FailoverService and
// the action registry allow it); ReadinessBoard is safe from any thread; ReadinessLoop's
// Start/Stop from one thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "state/types.h"

namespace icewarden {

class ActionRegistry;
class Clock;
class FailoverService;
class RouteTable;
struct Config;
struct LoadedRoute;

// One thing that was checked, in the order they were checked.
struct ReadinessCheck {
  std::string kind{};    // "guard" | "templates" | "preflight" | "proposal"
  std::string name{};    // "target_healthy", a step's id
  std::string action{};  // the step's action kind (templates, preflight)
  std::string from{};    // the region the proposal moves from
  bool ok = false;
  bool checked = true;   // false: the step's kind has no preflight (ok, says so)
  std::string reason{};  // why it failed, or what passed
};

struct RouteReadiness {
  std::string route{}, kind{}, from{}, to{}, scope{};
  bool ready = false;
  std::vector<std::string> reasons{};  // every failed check, "guard target_healthy: ..."
  std::vector<ReadinessCheck> checks{};
  UnixMillis checked_at = 0;
  std::chrono::milliseconds took{0};
};

// {route, kind, from, to, scope, ready, reasons, checks: [{kind, name, action?, from, ok,
//  checked, reason}], checked_at (RFC 3339), checked_at_unix_ms, took_ms}
nlohmann::json RouteReadinessJson(const RouteReadiness& r);
// reasons (one per failed check, "from REGION: " first on a route from "*") and ready, from
// the checks.
void SettleReasons(RouteReadiness* r);
// The readiness with its guard checks left out, reasons and ready settled again: what a plan
// shows beside its own guards, evaluated at the request (orchestrator/api/readiness.h).
RouteReadiness WithoutGuardChecks(RouteReadiness r);

struct ReadinessDeps {
  const Config* config = nullptr;
  const RouteTable* routes = nullptr;
  FailoverService* failovers = nullptr;  // guards and template bindings
  const ActionRegistry* actions = nullptr;
  std::shared_ptr<Clock> clock;
  // How long one step's preflight may take (capped by the step's own timeout).
  std::chrono::milliseconds preflight_timeout{std::chrono::seconds(5)};
};

class ReadinessEvaluator {
 public:
  explicit ReadinessEvaluator(ReadinessDeps deps);
  RouteReadiness Evaluate(const LoadedRoute& route) const;
  // Every route of the table, in config order.
  std::vector<RouteReadiness> EvaluateAll() const;

 private:
  void EvaluateFrom(const LoadedRoute& route, const std::string& from, bool prefix,
                    RouteReadiness* out) const;
  ReadinessDeps d_;
};

// The latest round's results, by route.
class ReadinessBoard {
 public:
  void Publish(std::vector<RouteReadiness> round);
  // Null until the first round has finished.
  std::shared_ptr<const std::vector<RouteReadiness>> Latest() const;
  std::optional<RouteReadiness> Route(const std::string& name) const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const std::vector<RouteReadiness>> latest_;
};

// Runs the evaluator every `interval` on its own thread, so that a slow preflight never holds
// up the API. The first round waits until `warm()` holds (serve: the first lag round has been
// published, without which the rpo guard cannot pass) or one interval has passed, whichever
// comes first. Logs (through `log`) each route whose readiness changed: it became ready or
// unready, or other checks fail than before (the text of a reason, such as a measured lag, may
// change every round without being news). `flipped` is called for a route that became ready
// or unready (and, in the first round, for each route that is not ready): serve audits it.
class ReadinessLoop {
 public:
  ReadinessLoop(const ReadinessEvaluator& evaluator, ReadinessBoard& board,
                std::chrono::milliseconds interval, std::function<void(const std::string&)> log,
                std::function<bool()> warm = {},
                std::function<void(const RouteReadiness&)> flipped = {});
  ~ReadinessLoop();  // Stop()s
  ReadinessLoop(const ReadinessLoop&) = delete;
  ReadinessLoop& operator=(const ReadinessLoop&) = delete;

  void Start();
  // Returns once a round in flight has finished (preflights are bounded by their timeout).
  void Stop();

 private:
  void Loop();

  const ReadinessEvaluator& evaluator_;
  ReadinessBoard& board_;
  std::chrono::milliseconds interval_;
  std::function<void(const std::string&)> log_;
  std::function<bool()> warm_;
  std::function<void(const RouteReadiness&)> flipped_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace icewarden
