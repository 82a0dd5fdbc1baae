// End to end against each implementation's flavour (issue 11, item 1): the real
// `icewarden serve` probes two replay catalogs (tests/e2e/replay_catalog.h) that answer with
// one implementation's recorded payloads. Both regions must become healthy through
// catalog_config and table_load probes, the tables the payloads list must be discovered and
// claimed, and a lag round must compare every table in both regions and find it caught up
// (the same payloads on both sides). A payload icewarden misreads shows up here as a region
// that never turns healthy, an empty inventory, or a lag row that is not caught_up.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/e2e/lab_stack.h"
#include "tests/e2e/replay_catalog.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::IcewardenBinary;
using testing::ReplayCatalog;
using testing::ReplayFlavour;
using testing::RunCommand;
using testing::Subprocess;

fs::path Corpus() { return fs::path(testing::SourceDir()) / "tests" / "compat" / "corpus"; }

std::vector<std::string> Flavours() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(Corpus()))
    if (e.is_directory()) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

class ReplayCatalogE2eTest : public ::testing::TestWithParam<std::string> {
 protected:
  void TearDown() override {
    if (server_) {
      server_->Signal(SIGKILL);
      server_->Wait(std::chrono::seconds(5));
    }
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  void StartServe(const std::string& a, const std::string& b, const std::string& table) {
    dir_ = testing::MakeTempDir("icewarden-replay");
    std::ofstream(dir_ + "/viewer.token") << "viewer-secret-1\n";
    std::ofstream(dir_ + "/icewarden.yaml") << R"(api:
  listen: 127.0.0.1:0
  tokens:
    - {name: vera, role: viewer, token_file: viewer.token}
state:
  path: state.db
regions:
  - name: region-a
    catalog_uri: )" << a << R"(
  - name: region-b
    catalog_uri: )" << b << R"(
ownership:
  default_owner: region-a
policies:
  lag_interval: 1s
  probe:
    interval: 500ms
    timeout: 400ms
    fall: 3
    rise: 2
    kinds: [catalog_config, table_load]
    canary_table: )" << table << "\n";
    server_ = std::make_unique<Subprocess>(
        std::vector<std::string>{IcewardenBinary(), "serve", "--config", dir_ + "/icewarden.yaml"});
    auto line = server_->ReadLine(std::chrono::seconds(20));
    ASSERT_TRUE(line.has_value()) << "serve printed nothing";
    auto at = line->find("http://");
    ASSERT_NE(at, std::string::npos) << *line;
    url_ = line->substr(at, line->find(' ', at) - at);
  }

  json Read(const std::vector<std::string>& args) {
    std::vector<std::string> argv{IcewardenBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--server", url_, "--output", "json"});
    auto r = RunCommand(argv, {{"ICEWARDEN_TOKEN", "viewer-secret-1"}});
    if (r.exit_code != 0) return json();
    return json::parse(r.out, nullptr, false);
  }

  std::string dir_, url_;
  std::unique_ptr<Subprocess> server_;
};

TEST_P(ReplayCatalogE2eTest, ProbesHealthDiscoveryAndLagWorkOnThisImplementationsPayloads) {
  const ReplayFlavour flavour = testing::LoadFlavour(Corpus() / GetParam());
  std::string served;
  for (const auto& s : flavour.sources) served += "\n  " + s;
  SCOPED_TRACE(GetParam() + " serves:" + served);
  ReplayCatalog a(flavour), b(flavour);
  const std::string url_a = a.Start(), url_b = b.Start();
  ASSERT_NO_FATAL_FAILURE(StartServe(url_a, url_b, flavour.table));

  json status;
  bool healthy = testing::Eventually(
      [&] {
        status = Read({"status"});
        if (!status.is_object() || status["regions"].size() != 2) return false;
        for (const auto& r : status["regions"])
          if (r["health"] != "healthy") return false;
        return true;
      },
      std::chrono::seconds(20));
  ASSERT_TRUE(healthy) << status.dump(2);
  EXPECT_GT(a.loads(), 0) << "table_load never loaded " << flavour.table;

  // Discovery claimed what the payloads list, for the default owner.
  const std::size_t listed = json::parse(flavour.tables)["identifiers"].size();
  json owned;
  ASSERT_TRUE(testing::Eventually(
      [&] {
        owned = Read({"ownership", "list"});
        return owned.is_object() && owned["tables"].size() >= listed;
      },
      std::chrono::seconds(20)))
      << owned.dump(2);
  for (const auto& row : owned["tables"]) EXPECT_EQ(row["owner"], "region-a") << row.dump();

  // A complete lag round compared every table with its replica and found it caught up.
  json lag;
  ASSERT_TRUE(testing::Eventually(
      [&] {
        lag = Read({"lag"});
        return lag.is_object() && lag["summary"]["complete"] == true &&
               lag["tables"].size() >= listed;
      },
      std::chrono::seconds(20)))
      << lag.dump(2);
  for (const auto& row : lag["tables"]) {
    EXPECT_EQ(row["state"], "caught_up") << row.dump(2);
    EXPECT_EQ(row["replica"], "region-b");
    EXPECT_EQ(row["missing_commits"], 0);
    EXPECT_EQ(row["owner_uuid"], row["replica_uuid"]);
  }
  EXPECT_EQ(lag["summary"]["total_missing"], 0);
  EXPECT_EQ(lag["summary"]["any_divergence"], false);
}

INSTANTIATE_TEST_SUITE_P(Corpus, ReplayCatalogE2eTest, ::testing::ValuesIn(Flavours()),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace icewarden
