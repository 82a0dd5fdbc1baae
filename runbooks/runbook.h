// Runbook: a declarative failover procedure, as parsed from YAML (docs/runbooks.md).
//
//   name, description, parameters, guards,
//   fence:      steps that stop the old owner writing (their success is fencing evidence)
//   promote:    steps that move ownership and traffic to the new owner
//   verify:     checks that the new owner serves correctly
//   compensate: steps run last when a failover is rolled back (after each completed step's
//               own compensation, in reverse order)
//
// A step names an action kind (actions/action.h) and its params. Param strings may hold
// templates resolved at plan/run time: ${failover.id} ${from} ${to} ${scope}
// ${params.NAME} ${env.NAME} ${file:PATH}; values from env and file are secrets and are
// masked in every plan, log and journal.
//
// Thread-safety: plain values.
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace icewarden {

struct SourcePos {
  std::string file{};
  int line = 0;                  // 1-based
  int column = 0;                // 1-based
  std::string ToString() const;  // "FILE:LINE:COL"
};

enum class OnFailure {
  kAbort,       // stop the runbook; the failover fails (and is compensated when past fencing)
  kContinue,    // record the failure and go on with the next step
  kCompensate,  // stop and compensate at once
};
const char* OnFailureName(OnFailure f);

// Bounds on what a runbook may ask of the executor: a deadline is "now + timeout" on the
// steady clock, backoffs are slept, and a step retried without end is a stuck failover.
inline constexpr std::chrono::milliseconds kMaxStepTimeout = std::chrono::hours(24);
inline constexpr std::chrono::milliseconds kMaxBackoff = std::chrono::hours(1);
inline constexpr int kMaxStepAttempts = 100;
// Values in one step's params, counted after YAML aliases are expanded.
inline constexpr std::size_t kMaxParamValues = 10'000;
// Steps of one parallel group each get a thread.
inline constexpr std::size_t kMaxParallelGroupSteps = 32;

struct StepRetry {
  int attempts = 1;  // total tries, >= 1
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{30000};
  double multiplier = 2.0;
  double jitter = 0.2;  // ± fraction of each backoff
};

// An inline compensation for a step whose action has none of its own.
struct StepCompensation {
  std::string action{};
  nlohmann::json params = nlohmann::json::object();
  SourcePos pos{};
};

struct RunbookStep {
  std::string id{};                                  // unique within the runbook
  std::string action{};                              // a registered action kind
  nlohmann::json params = nlohmann::json::object();  // templates unresolved
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  StepRetry retry{};
  OnFailure on_failure = OnFailure::kAbort;
  // Consecutive steps with the same non-empty group run in parallel; the group finishes
  // when all of its steps have.
  std::string parallel_group{};
  std::optional<StepCompensation> compensate{};
  SourcePos pos{};  // where the step starts
  // Where each param key was written, for errors found after parsing ("params.name").
  std::map<std::string, SourcePos> param_pos{};
};

enum class RunbookSection { kFence, kPromote, kVerify, kCompensate };
const char* RunbookSectionName(RunbookSection s);

struct RunbookParameter {
  std::string name{};
  std::string type = "string";  // string | integer | boolean | duration
  bool required = false;
  std::optional<std::string> default_value{};
  std::string description{};
};

// A guard checked at approval and before promotion (DESIGN.md rule 3), e.g.
// {kind: target_healthy}, {kind: max_lag, max_staleness: 5m}, {kind: cooldown}.
struct RunbookGuard {
  std::string kind{};
  nlohmann::json params = nlohmann::json::object();
  SourcePos pos{};
};

struct Runbook {
  std::string name{};
  std::string description{};
  std::vector<RunbookParameter> parameters{};
  std::vector<RunbookGuard> guards{};
  std::vector<RunbookStep> fence{}, promote{}, verify{}, compensate{};
  std::string source_file{};

  const std::vector<RunbookStep>& Section(RunbookSection s) const;
};

}  // namespace icewarden
