// The audit log's seal as an operator meets it: `icewarden serve` appends sealed events,
// `icewarden audit verify --config` (reading the state file itself) says the log is intact and
// prints its head; someone edits an event in the file with sqlite3, and both the CLI (exit 1,
// naming the event) and the running daemon's /metrics (icewarden_audit_chain_intact 0 and the
// event's seq, what the IcewardenAuditLogBroken rule alerts on) say so.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_configs.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;
using testing::CommandResult;
using testing::IcewardenBinary;
using testing::RunCommand;
using testing::Subprocess;

class AuditSealE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("icewarden-audit-seal");
    config_ = dir_ + "/icewarden.yaml";
    std::ofstream(config_)
        << "api:\n  listen: 127.0.0.1:0\npolicies:\n  audit_verify_interval: 1s\n"
        << testing::kUnreachableRegionsYaml;
    serve_ = std::make_unique<Subprocess>(
        std::vector<std::string>{IcewardenBinary(), "serve", "--config", config_});
    auto line = serve_->ReadLine(30s);
    ASSERT_TRUE(line) << "serve did not start";
    const auto at = line->find("http://");
    ASSERT_NE(at, std::string::npos) << *line;
    url_ = line->substr(at, line->find(' ', at) - at);
  }
  void TearDown() override {
    if (serve_) {
      serve_->Signal(SIGTERM);
      serve_->Wait(20s);
    }
    std::filesystem::remove_all(dir_);
  }

  CommandResult Verify(std::vector<std::string> more = {}) {
    std::vector<std::string> args{IcewardenBinary(), "audit", "verify", "--config", config_};
    args.insert(args.end(), more.begin(), more.end());
    return RunCommand(args, {});
  }
  // The value of an unlabelled gauge on /metrics, or -1.
  double Gauge(const std::string& name) {
    httplib::Client c(url_);
    c.set_read_timeout(10, 0);
    auto r = c.Get("/metrics");
    if (!r || r->status != 200) return -1;
    const auto at = r->body.find("\n" + name + " ");
    if (at == std::string::npos) return -1;
    return std::stod(r->body.substr(at + name.size() + 2));
  }
  bool Eventually(const std::function<bool()>& done) {
    for (auto until = std::chrono::steady_clock::now() + 15s;
         std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(100ms))
      if (done()) return true;
    return false;
  }

  std::string dir_, config_, url_;
  std::unique_ptr<Subprocess> serve_;
};

TEST_F(AuditSealE2eTest, AnEventEditedInTheFileIsNamedByTheCliAndTheMetric) {
  // serve records both regions at start: the log has events, all sealed.
  ASSERT_TRUE(Eventually([&] { return Gauge("icewarden_audit_chain_intact") == 1; }));
  EXPECT_TRUE(Eventually([&] { return Gauge("icewarden_audit_chain_events") >= 2; }));
  EXPECT_EQ(Gauge("icewarden_audit_chain_broken_at_seq"), 0);

  CommandResult ok = Verify();
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("audit log intact: "), std::string::npos) << ok.out;
  const auto head_at = ok.out.find("\nhead ");
  ASSERT_NE(head_at, std::string::npos) << ok.out;
  const std::string head = ok.out.substr(head_at + 6, ok.out.find('\n', head_at + 1) - head_at - 6);
  CommandResult anchored = Verify({"--anchor", head});
  EXPECT_EQ(anchored.exit_code, 0) << anchored.err;
  EXPECT_NE(anchored.out.find("anchor"), std::string::npos) << anchored.out;

  // What someone with the file could do: drop the append-only trigger and rewrite a reason.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ + "/state.db").c_str(), &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db,
                         "DROP TRIGGER audit_is_append_only_update;"
                         "UPDATE audit SET reason = 'nothing to see' WHERE seq = 2",
                         nullptr, nullptr, &error),
            SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);

  CommandResult broken = Verify();
  EXPECT_EQ(broken.exit_code, 1) << broken.out;
  EXPECT_NE(broken.err.find("broken at event 2"), std::string::npos) << broken.err;
  EXPECT_NE(broken.err.find("edited"), std::string::npos) << broken.err;
  EXPECT_TRUE(Eventually([&] { return Gauge("icewarden_audit_chain_intact") == 0; }));
  EXPECT_EQ(Gauge("icewarden_audit_chain_broken_at_seq"), 2);

  CommandResult bad_anchor = Verify({"--anchor", "7:not-a-digest"});
  EXPECT_EQ(bad_anchor.exit_code, 2);
  EXPECT_NE(bad_anchor.err.find("SEQ:SHA256"), std::string::npos) << bad_anchor.err;
}

}  // namespace
}  // namespace icewarden
