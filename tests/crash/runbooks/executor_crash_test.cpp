// Kills the executor (SIGKILL: no destructors, no flush) at every write boundary of a
// multi-step runbook, restarts it, and checks DESIGN.md rule 5 from the effects the actions
// left behind: no step that the journal recorded as succeeded ever runs again, a
// non-idempotent step takes effect at most once, and every run ends completed or rolled
// back, or in needs_attention exactly when a non-idempotent step was in flight at the kill.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "state/sqlite_store.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"
#include "tests/helpers/executor_crash_layout.h"

namespace icewarden::testing {
namespace {

using ::testing::HasSubstr;

struct Snapshot {
  std::vector<StepRecord> journal;
  Failover failover;
};

Snapshot Read(const std::string& db) {
  Snapshot s;
  auto store = OpenSqliteStore({.path = db}, std::make_shared<FakeClock>());
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return s;
  auto f = (*store)->GetFailover(kCrashFailoverId);
  if (f.ok() && f->has_value()) s.failover = **f;
  auto steps = (*store)->ListSteps(kCrashFailoverId);
  if (steps.ok()) s.journal = *steps;
  return s;
}

// "RUN p1" / "COMP p1.compensate" lines, in order.
std::vector<std::string> Effects(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::map<std::string, int> Count(const std::vector<std::string>& effects) {
  std::map<std::string, int> n;
  for (const std::string& e : effects) ++n[e];
  return n;
}

CommandResult Run(const std::string& dir, const std::string& variant, const std::string& mode,
                  int n) {
  return RunCommand({HelperBinary("executor_crash_runner"), dir + "/state.db", dir + "/effects",
                     variant, mode, std::to_string(n)},
                    {}, std::chrono::seconds(20));
}

// A fast place for the many small fsyncing databases this test creates.
std::string ScratchDir(const std::string& prefix) {
  if (std::filesystem::is_directory("/dev/shm")) {
    std::string tmpl = "/dev/shm/" + prefix + "-XXXXXX";
    if (mkdtemp(tmpl.data()) != nullptr) return tmpl;
  }
  return MakeTempDir(prefix);
}

// One scenario: kill at (mode, n), restart, check. Returns false once n is past the last
// write (the run completed without being killed).
bool KillAndRestart(const std::string& variant, const std::string& mode, int n,
                    const std::string& expected_end) {
  SCOPED_TRACE(variant + " kill " + mode + " write " + std::to_string(n));
  const std::string dir = ScratchDir("executor-crash");
  const std::string db = dir + "/state.db", effects = dir + "/effects";

  CommandResult killed = Run(dir, variant, mode, n);
  if (killed.exit_code == 0) {
    std::filesystem::remove_all(dir);
    return false;
  }
  EXPECT_EQ(killed.exit_code, -9) << killed.err;

  const Snapshot at_kill = Read(db);
  const std::map<std::string, int> effects_at_kill = Count(Effects(effects));
  std::string in_flight_non_idempotent;
  for (const StepRecord& r : at_kill.journal) {
    const bool in_flight = r.state == StepState::kRunning || r.state == StepState::kCompensating;
    if (in_flight && NonIdempotentCrashKinds().count(r.action) > 0)
      in_flight_non_idempotent = r.step_id;
  }

  CommandResult restarted = Run(dir, variant, "none", 0);
  EXPECT_EQ(restarted.exit_code, 0) << restarted.err;
  const Snapshot end = Read(db);
  const std::vector<std::string> final_effects = Effects(effects);
  const std::map<std::string, int> effects_at_end = Count(final_effects);

  // How it ends.
  if (in_flight_non_idempotent.empty()) {
    EXPECT_EQ(FailoverPhaseName(end.failover.phase), expected_end) << restarted.out;
  } else {
    EXPECT_EQ(end.failover.phase, FailoverPhase::kNeedsAttention) << restarted.out;
    EXPECT_THAT(end.failover.last_reason,
                HasSubstr("step " + in_flight_non_idempotent + " (action rec."));
    EXPECT_THAT(end.failover.last_reason,
                HasSubstr("was in flight when the executor stopped and rec."));
    EXPECT_THAT(end.failover.last_reason, HasSubstr("is not idempotent: check its effect by hand"));
  }

  std::map<std::string, StepState> state_at_kill;
  std::map<std::string, std::string> action_of;
  for (const StepRecord& r : at_kill.journal) state_at_kill[r.step_id] = r.state;
  for (const StepRecord& r : end.journal) action_of[r.step_id] = r.action;
  for (const auto& [line, count] : effects_at_end) {
    const std::string id = line.substr(line.find(' ') + 1);
    const auto before = effects_at_kill.find(line);
    const int count_at_kill = before == effects_at_kill.end() ? 0 : before->second;
    const auto kill_state = state_at_kill.find(id);
    const bool done_at_kill =
        kill_state != state_at_kill.end() && (kill_state->second == StepState::kSucceeded ||
                                              kill_state->second == StepState::kCompensated);
    const bool in_flight_at_kill =
        kill_state != state_at_kill.end() && (kill_state->second == StepState::kRunning ||
                                              kill_state->second == StepState::kCompensating);
    // Rule 5: a completed step never runs again.
    if (done_at_kill) {
      EXPECT_EQ(count, count_at_kill) << line << " ran again after it completed";
    }
    if (NonIdempotentCrashKinds().count(action_of[id]) > 0) {
      EXPECT_LE(count, 1) << line << ": a non-idempotent step took effect twice";
    } else {
      EXPECT_LE(count, 2) << line;
      if (count == 2) {
        EXPECT_TRUE(in_flight_at_kill) << line << " ran twice without a crash in it";
      }
    }
  }

  if (end.failover.phase == FailoverPhase::kCompleted) {
    for (const char* id : {"f1", "f2", "f3", "p1", "p2", "p3", "v1", "v2"})
      EXPECT_GE(effects_at_end.count(std::string("RUN ") + id), 1u) << id << " never ran";
    for (const StepRecord& r : end.journal) EXPECT_EQ(r.state, StepState::kSucceeded) << r.step_id;
  }
  if (end.failover.phase == FailoverPhase::kRolledBack) {
    // Undone newest first, each once in the order of first effect, then the compensate
    // section.
    std::vector<std::string> order;
    for (const std::string& e : final_effects) {
      if ((e.starts_with("COMP ") || e == "RUN c1") &&
          std::find(order.begin(), order.end(), e) == order.end())
        order.push_back(e);
    }
    EXPECT_THAT(order, ::testing::ElementsAre("COMP p2.compensate", "COMP p1.compensate",
                                              "COMP f3.compensate", "COMP f2.compensate",
                                              "COMP f1.compensate", "RUN c1"));
  }
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir);
  return true;
}

void KillAtEveryBoundary(const std::string& variant, const std::string& expected_end) {
  // A run without a kill: ends as expected, and says how many writes there are.
  const std::string dir = ScratchDir("executor-crash-dry");
  CommandResult dry = Run(dir, variant, "none", 0);
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  ASSERT_TRUE(dry.out.starts_with("END " + expected_end + " ")) << dry.out;
  const int writes = std::stoi(dry.out.substr(dry.out.find(' ', 4) + 1));
  std::filesystem::remove_all(dir);
  ASSERT_GT(writes, 10);

  int scenarios = 0;
  for (int n = 0; n <= writes; ++n) {
    for (const char* mode : {"before", "after"}) {
      if (n == 0 && std::string(mode) == "after") continue;
      const bool killed = KillAndRestart(variant, mode, n, expected_end);
      if (::testing::Test::HasFatalFailure() || ::testing::Test::HasFailure()) return;
      scenarios += killed ? 1 : 0;
    }
  }
  // Every boundary before the last write kills the runner.
  EXPECT_GE(scenarios, 2 * writes - 1);
}

TEST(ExecutorCrashTest, KilledAtEveryWriteCompletedStepsNeverRunTwice) {
  KillAtEveryBoundary("complete", "completed");
}

TEST(ExecutorCrashTest, KilledAtEveryWriteDuringRollbackCompensationsRunOnceInReverse) {
  KillAtEveryBoundary("rollback", "rolled_back");
}

}  // namespace
}  // namespace icewarden::testing
