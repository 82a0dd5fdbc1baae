// Action: one kind of effect a runbook step can have (update DNS, move ownership, send an
// alert, call an HTTP endpoint, check something, fence the old writer).
//
// An action is stateless: everything a run needs comes in through its params (already
// templated by the runbook layer) and the ActionContext. Run() blocks the calling thread
// (the executor gives each running step its own thread) and must return promptly once the
// context's deadline passes or it is cancelled. Expected failures are results, not
// exceptions.
//
// Idempotency: every run carries an idempotency key (failover id + "/" + step id). An
// action whose effect is the same when run twice with the same key says idempotent()
// true; after a crash the executor re-runs an in-flight step only when it is.
//
// Thread-safety: Validate/Plan/Run/Compensate may be called concurrently from several
// threads on one Action instance.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "state/clock.h"
#include "state/status.h"
#include "state/types.h"

namespace icewarden {

class StateStore;
struct CatalogClientOptions;
class TableObservations;

// A problem with a step's params: where (a JSON path under params, "records[0].type") and
// what, phrased so the runbook author knows how to fix it.
struct ParamError {
  std::string path{};
  std::string message{};
};

struct ActionResult {
  enum class Outcome {
    kSucceeded,
    kFailed,   // definitely did not take effect (or was rolled back by the action itself)
    kUnknown,  // may or may not have taken effect (timeout mid-request, 5xx on a commit)
  };
  Outcome outcome = Outcome::kFailed;
  std::string reason{};            // one sentence for people: what happened
  std::string detail_json = "{}";  // structured output, journaled with the step

  static ActionResult Succeeded(std::string reason, std::string detail_json = "{}");
  static ActionResult Failed(std::string reason, std::string detail_json = "{}");
  static ActionResult Unknown(std::string reason, std::string detail_json = "{}");
  bool ok() const { return outcome == Outcome::kSucceeded; }
};
const char* OutcomeName(ActionResult::Outcome o);

// Set by the executor when a step times out or a failover is aborted. Actions poll it
// (and the deadline) between blocking operations.
class Cancellation {
 public:
  void Cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }

 private:
  std::atomic<bool> cancelled_{false};
};

// What the world looks like to an action: shared clients and lookups, supplied by the
// daemon (or by a test). Any member may be empty; an action that needs one that is
// missing fails with a clear reason.
struct ActionEnv {
  std::shared_ptr<Clock> clock;
  StateStore* store = nullptr;
  // How to reach a region's catalog (base URI, warehouse, credentials).
  std::function<std::optional<CatalogClientOptions>(const std::string& region)> catalog;
  // The region's current health as the daemon sees it.
  std::function<std::optional<Region>(const std::string& region)> region_health;
  // What this failover's steps already read of each table (see table_observations.h); null:
  // every step reads in full.
  std::shared_ptr<TableObservations> observations;
};

// One run of one step.
struct ActionContext {
  std::string failover_id{};
  std::string step_id{};
  std::string idempotency_key{};  // failover_id + "/" + step_id
  std::string from{}, to{};       // regions losing and gaining ownership
  std::string scope{};            // the failover's scope
  std::chrono::steady_clock::time_point deadline{};
  const Cancellation* cancel = nullptr;
  // What Capture recorded before this step's first attempt (JSON), the same on every attempt
  // and after a restart; empty when the action captures nothing or runs outside an executor.
  std::string before_json{};

  bool expired() const {
    return (cancel != nullptr && cancel->cancelled()) ||
           std::chrono::steady_clock::now() >= deadline;
  }
};

class Action {
 public:
  virtual ~Action() = default;

  // The registered name: "dns.rfc2136", "ownership.transfer", ...
  virtual std::string_view kind() const = 0;
  // True when running twice with the same idempotency key has the effect of running once.
  virtual bool idempotent() const = 0;
  // Checks templated params. Returns every problem found; empty means valid.
  virtual std::vector<ParamError> Validate(const nlohmann::json& params) const = 0;
  // One line saying exactly what Run would do with these params (secrets already masked
  // by the caller), for `icewarden runbook plan`.
  virtual std::string Plan(const nlohmann::json& params) const = 0;
  // Reads the state Run is about to change, before the first attempt, so that the executor
  // journals it ahead of any effect: a compensation after a crash mid-Run must restore what
  // was there before the step, not what the crashed attempt left (a re-run reading "the
  // current state" would read its own effect). Returns JSON, or "" when there is nothing to
  // record (the default); an error is a failed attempt that changed nothing.
  virtual Result<std::string> Capture(const nlohmann::json& params, const ActionContext& ctx);
  // Does it. Blocks; returns by ctx.deadline (plus a short grace) or soon after
  // cancellation, with kUnknown when an effect may have happened.
  virtual ActionResult Run(const nlohmann::json& params, const ActionContext& ctx) = 0;

  // Undoes a succeeded run, given what Run returned. Actions without an undo keep the
  // default (the executor then skips them when compensating, and says so).
  virtual bool has_compensation() const { return false; }
  virtual ActionResult Compensate(const nlohmann::json& params, const nlohmann::json& run_detail,
                                  const ActionContext& ctx);
};

// Action kinds by name. Registration is explicit (registerBuiltinActions); registering a
// name twice is an error; looking up an unknown name tells which names exist.
class ActionRegistry {
 public:
  Status Register(std::unique_ptr<Action> action);
  // nullptr when unknown.
  const Action* Find(std::string_view kind) const;
  Action* FindMutable(std::string_view kind) const;
  std::vector<std::string> Kinds() const;  // sorted
  // "unknown action kind 'dns.update'; known kinds: alert.webhook, dns.rfc2136, ..."
  std::string UnknownKindMessage(std::string_view kind) const;

 private:
  std::vector<std::unique_ptr<Action>> actions_;
};

// Registers every built-in kind with the environment it needs.
Status registerBuiltinActions(ActionRegistry& registry, const ActionEnv& env);

}  // namespace icewarden
