// Drives one failover through a runbook with recording actions, and kills itself with
// SIGKILL at a chosen journal/transition write (tests/crash/runbooks/executor_crash_test.cpp).
//
//   executor_crash_runner DB EFFECTS VARIANT none|before|after N
//
// Creates the failover (approved) if the store does not have it, drives it, and prints
// "END <phase> <writes>" followed by the summary. With before/after it raises SIGKILL just
// before or just after write N (UpdateFailover and PutStep calls, counted from 1).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "runbooks/executor.h"
#include "state/sqlite_store.h"
#include "tests/fakes/crash_point_store.h"
#include "tests/fakes/machine_transitions.h"
#include "tests/helpers/executor_crash_layout.h"

namespace icewarden::testing {
namespace {

// Appends one line and makes it durable before the action reports success.
void AppendEffect(const std::string& path, const std::string& line) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) std::abort();
  const std::string text = line + "\n";
  if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) std::abort();
  if (fsync(fd) != 0) std::abort();
  close(fd);
}

class RecordingAction final : public Action {
 public:
  RecordingAction(std::string kind, bool idempotent, bool fails, std::string effects)
      : kind_(std::move(kind)),
        idempotent_(idempotent),
        fails_(fails),
        effects_(std::move(effects)) {}
  std::string_view kind() const override { return kind_; }
  bool idempotent() const override { return idempotent_; }
  std::vector<ParamError> Validate(const nlohmann::json&) const override { return {}; }
  std::string Plan(const nlohmann::json&) const override { return kind_; }
  ActionResult Run(const nlohmann::json&, const ActionContext& ctx) override {
    if (fails_) return ActionResult::Failed(ctx.step_id + " refused (by design)");
    AppendEffect(effects_, "RUN " + ctx.step_id);
    return ActionResult::Succeeded(ctx.step_id + " done", nlohmann::json{{"by", kind_}}.dump());
  }
  bool has_compensation() const override { return !fails_; }
  ActionResult Compensate(const nlohmann::json&, const nlohmann::json&,
                          const ActionContext& ctx) override {
    AppendEffect(effects_, "COMP " + ctx.step_id);
    return ActionResult::Succeeded(ctx.step_id + " undone");
  }

 private:
  std::string kind_;
  bool idempotent_;
  bool fails_;
  std::string effects_;
};

RunbookStep Step(std::string id, std::string action) {
  RunbookStep s;
  s.id = std::move(id);
  s.action = std::move(action);
  s.timeout = std::chrono::seconds(10);
  return s;
}

Runbook CrashRunbook(const std::string& variant) {
  Runbook rb;
  rb.name = "crash-" + variant;
  rb.fence = {Step("f1", "rec.idem"), Step("f2", "rec.idem"), Step("f3", "rec.idem")};
  rb.promote = {Step("p1", "rec.once"), Step("p2", "rec.idem"), Step("p3", "rec.once")};
  rb.verify = {Step("v1", "rec.idem"), Step("v2", "rec.once")};
  rb.verify[0].parallel_group = rb.verify[1].parallel_group = "checks";
  if (variant == "rollback") {
    rb.promote[2] = Step("p3", "rec.fail");
    rb.promote[2].on_failure = OnFailure::kCompensate;
    rb.compensate = {Step("c1", "rec.once")};
  }
  return rb;
}

int Main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s DB EFFECTS complete|rollback none|before|after N\n", argv[0]);
    return 2;
  }
  const std::string db = argv[1], effects = argv[2], variant = argv[3], mode = argv[4];
  const int kill_at = std::atoi(argv[5]);

  auto clock = SystemClock();
  auto opened = OpenSqliteStore({.path = db}, clock);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
    return 1;
  }
  if (mode != "none" && kill_at == 0) raise(SIGKILL);
  CrashPointStore store(**opened, [&](int n, bool before) {
    if (n == kill_at && ((before && mode == "before") || (!before && mode == "after")))
      raise(SIGKILL);
  });

  auto existing = store.GetFailover(kCrashFailoverId);
  if (!existing.ok()) return 1;
  if (!existing->has_value()) {
    auto created = CreateTestFailover(store, kCrashFailoverId);
    if (!created.ok()) {
      std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
      return 1;
    }
  }

  ActionRegistry registry;
  (void)registry.Register(std::make_unique<RecordingAction>("rec.idem", true, false, effects));
  (void)registry.Register(std::make_unique<RecordingAction>("rec.once", false, false, effects));
  (void)registry.Register(std::make_unique<RecordingAction>("rec.fail", false, true, effects));
  MachineTransitions transitions(store, clock);
  RunbookExecutor executor(store, registry, transitions, clock);
  TemplateBindings bindings;
  bindings.failover_id = kCrashFailoverId;
  auto report = executor.Drive(kCrashFailoverId, CrashRunbook(variant), bindings);
  if (!report.ok()) {
    std::fprintf(stderr, "%s\n", report.status().ToString().c_str());
    return 1;
  }
  std::printf("END %s %d\n%s\n", FailoverPhaseName(report->phase), store.writes(),
              report->summary.c_str());
  return 0;
}

}  // namespace
}  // namespace icewarden::testing

int main(int argc, char** argv) { return icewarden::testing::Main(argc, argv); }
