// Two real `icewarden serve` replicas on one real etcd member (issue 12, item 2): one leads,
// the other stands by, answers reads from the record and sends commands to the leader; the
// leader killed, the standby takes over; the leader paused past its lease, it stops as soon as
// it runs again and none of its writes lands.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "state/etcd_store.h"
#include "tests/etcd/etcd_member.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;
using Steady = std::chrono::steady_clock;

constexpr int kTtlSeconds = 2;

class ServeLeaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(etcd_.WaitReady());
    dir_ = MakeTempDir("serve-leader");
    std::ofstream(dir_ + "/admin.token") << "admin-secret-1\n";
  }
  void TearDown() override {
    for (auto& r : replicas_)
      if (r.process) r.process->Signal(SIGKILL);
    std::filesystem::remove_all(dir_);
  }

  struct Replica {
    std::string name, url;
    std::unique_ptr<Subprocess> process;
  };

  // Starts replica `name` on its own port and returns the first line it printed. Both regions'
  // catalogs are a dead port unless `eu_catalog` names another for eu-central-1.
  std::string Start(Replica& r, const std::string& name,
                    const std::string& eu_catalog = "http://127.0.0.1:9/catalog") {
    r.name = name;
    const int port = FreePort();
    r.url = "http://127.0.0.1:" + std::to_string(port);
    const std::string config = WriteConfig(name, port, eu_catalog);
    r.process = std::make_unique<Subprocess>(
        std::vector<std::string>{IcewardenBinary(), "serve", "--config", config});
    auto line = r.process->ReadLine(std::chrono::seconds(20));
    return line.value_or("");
  }

  // Replica `name`'s config, listening on `port`; returns its path.
  std::string WriteConfig(const std::string& name, int port, const std::string& eu_catalog) {
    const std::string config = dir_ + "/" + name + ".yaml";
    std::ofstream(config) << "api:\n  listen: 127.0.0.1:" << port << R"(
  tokens:
    - {name: ada, role: admin, token_file: admin.token}
state:
  backend: etcd
  etcd:
    endpoints: [)" << etcd_.url()
                          << R"(]
    leader_ttl: )" << kTtlSeconds
                          << R"(s
    replica: )" << name << R"(
    replicas: [replica-a, replica-b, replica-c]
policies:
  unreachable_for: 1s
  fencing_evidence: [old_region_unreachable, operator]
  probe: {interval: 200ms, timeout: 150ms}
regions:
  - name: us-east-1
    catalog_uri: http://127.0.0.1:9/catalog
  - name: eu-central-1
    catalog_uri: )" << eu_catalog
                          << R"(
ownership:
  default_owner: us-east-1
)";
    return config;
  }

  httplib::Result Get(const std::string& url, const std::string& path) {
    httplib::Client c(url);
    c.set_connection_timeout(2, 0);
    c.set_read_timeout(5, 0);
    return c.Get(path, {{"Authorization", "Bearer admin-secret-1"}});
  }

  // GET /api/v1/cluster on `url` every 100 ms until `done` says so or `tries` run out; the
  // last answer.
  json ClusterUntil(const std::string& url, const std::function<bool(const json&)>& done,
                    int tries) {
    json cluster;
    for (int i = 0; i < tries; ++i) {
      auto r = Get(url, "/api/v1/cluster");
      EXPECT_TRUE(r);
      if (!r || r->status != 200) {
        ADD_FAILURE() << (r ? r->body : "no answer");
        return cluster;
      }
      cluster = json::parse(r->body);
      if (done(cluster)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return cluster;
  }

  // Reads the record as etcd holds it, without any fence.
  std::unique_ptr<StateStore> Record() {
    auto client = std::make_shared<EtcdClient>(EtcdClientOptions{{etcd_.url()}});
    auto s = OpenEtcdStore(client, EtcdStoreOptions{}, std::make_shared<FakeClock>());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }

  EtcdMember etcd_;
  std::string dir_;
  Replica replicas_[3];
};

TEST_F(ServeLeaderTest, AStandbySendsClientsToTheLeaderAndTakesOverWhenItIsKilled) {
  Replica& a = replicas_[0];
  Replica& b = replicas_[1];
  std::string first = Start(a, "replica-a");
  ASSERT_NE(first.find("serving"), std::string::npos) << first;
  EXPECT_NE(first.find("leader"), std::string::npos) << first;
  std::string second = Start(b, "replica-b");
  ASSERT_NE(second.find("standby"), std::string::npos) << second;

  auto ready = Get(b.url, "/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503);
  json about = json::parse(ready->body);
  EXPECT_EQ(about["role"], "standby");
  EXPECT_EQ(about["leader"]["replica"], "replica-a");
  EXPECT_EQ(about["leader"]["api"], a.url);
  // Both replicas probe and publish their views (issue 12, item 4): the standby sees the
  // leader's view change and its own, and both heard nothing from port 9 (the regions'), so a
  // majority agrees each region is unreachable.
  json cluster = ClusterUntil(
      b.url, [](const json& c) { return c["quorum"]["us-east-1"]["unreachable"] == true; }, 100);
  EXPECT_EQ(cluster["role"], "standby") << cluster.dump(2);
  EXPECT_EQ(cluster["leader"]["replica"], "replica-a");
  ASSERT_EQ(cluster["views"].size(), 2u) << cluster.dump(2);
  EXPECT_EQ(cluster["views"][0]["replica"], "replica-b");
  EXPECT_EQ(cluster["views"][0]["self"], true);
  EXPECT_EQ(cluster["views"][1]["replica"], "replica-a");
  EXPECT_FALSE(cluster["views"][1]["heard_ms_ago"].is_null()) << cluster.dump(2);
  EXPECT_EQ(cluster["views"][1]["regions"]["us-east-1"]["silent"], true);
  EXPECT_EQ(cluster["quorum"]["us-east-1"]["unreachable"], true) << cluster.dump(2);
  EXPECT_EQ(cluster["quorum"]["us-east-1"]["votes"], 2);
  EXPECT_EQ(cluster["quorum"]["us-east-1"]["needed"], 2) << "a majority of the three listed";
  // The CLI asks the standby itself (it answers /api/v1/cluster rather than redirecting).
  CommandResult cluster_cli =
      RunCommand({IcewardenBinary(), "cluster", "status", "--server", b.url},
                 {{"ICEWARDEN_TOKEN", "admin-secret-1"}});
  ASSERT_EQ(cluster_cli.exit_code, 0) << cluster_cli.err;
  EXPECT_NE(cluster_cli.out.find("asked: replica-b (standby)"), std::string::npos)
      << cluster_cli.out;
  EXPECT_NE(cluster_cli.out.find("leader: replica-a at " + a.url), std::string::npos)
      << cluster_cli.out;
  EXPECT_NE(cluster_cli.out.find("replica-b (this)"), std::string::npos) << cluster_cli.out;
  EXPECT_NE(cluster_cli.out.find("YES"), std::string::npos) << cluster_cli.out;
  EXPECT_NE(cluster_cli.out.find("2 of 3 (a majority is 2)"), std::string::npos) << cluster_cli.out;
  auto led = Get(a.url, "/api/v1/cluster");
  ASSERT_TRUE(led);
  ASSERT_EQ(led->status, 200) << led->body;
  json leader_view = json::parse(led->body);
  EXPECT_EQ(leader_view["role"], "leader");
  EXPECT_EQ(leader_view["lease"]["ttl_s"], kTtlSeconds);
  EXPECT_LT(leader_view["lease"]["since_renewal_ms"].get<int>(), kTtlSeconds * 1000);
  EXPECT_EQ(leader_view["views"].size(), 2u) << leader_view.dump(2);

  // The standby answers reads from the record itself (etcd's reads are linearizable): the
  // leader's write is there at once. Commands, and what only the leader has, go to it.
  httplib::Client to_a(a.url);
  auto fenced =
      to_a.Post("/api/v1/regions/eu-central-1/fence", {{"Authorization", "Bearer admin-secret-1"}},
                R"({"reason":"read back through a standby"})", "application/json");
  ASSERT_TRUE(fenced);
  ASSERT_EQ(fenced->status, 200) << fenced->body;
  auto regions = Get(b.url, "/api/v1/regions");
  ASSERT_TRUE(regions);
  ASSERT_EQ(regions->status, 200) << regions->body;
  EXPECT_EQ(regions->get_header_value("X-Icewarden-Replica"), "replica-b (standby)");
  bool eu_fenced = false;
  const json listed = json::parse(regions->body);
  for (const json& r : listed["regions"])
    if (r["name"] == "eu-central-1") eu_fenced = r["fenced"].get<bool>();
  EXPECT_TRUE(eu_fenced) << regions->body;
  auto audit = Get(b.url, "/api/v1/audit?target=eu-central-1");
  ASSERT_TRUE(audit);
  ASSERT_EQ(audit->status, 200) << audit->body;
  EXPECT_NE(audit->body.find("read back through a standby"), std::string::npos) << audit->body;
  auto unfence = httplib::Client(b.url).Post("/api/v1/regions/eu-central-1/unfence",
                                             {{"Authorization", "Bearer admin-secret-1"}},
                                             R"({"reason":"x"})", "application/json");
  ASSERT_TRUE(unfence);
  EXPECT_EQ(unfence->status, 307) << "a command goes to the leader";
  EXPECT_EQ(unfence->get_header_value("Location"), a.url + "/api/v1/regions/eu-central-1/unfence");
  auto owned = Get(b.url, "/api/v1/ownership");
  ASSERT_TRUE(owned);
  EXPECT_EQ(owned->status, 200) << owned->body;
  EXPECT_EQ(owned->get_header_value("X-Icewarden-Replica"), "replica-b (standby)");
  // What only the leader measures or decides goes to it, even on a route read here.
  for (const std::string path :
       {"/api/v1/ownership?state=behind", "/api/v1/failovers/x?plan=true", "/api/v1/readiness"}) {
    auto sent = Get(b.url, path);
    ASSERT_TRUE(sent);
    EXPECT_EQ(sent->status, 307) << path;
    EXPECT_EQ(sent->get_header_value("Location"), a.url + path);
  }
  auto lag = Get(b.url, "/api/v1/lag");
  ASSERT_TRUE(lag);
  EXPECT_EQ(lag->status, 307) << "lag rounds run on the leader";
  EXPECT_EQ(lag->get_header_value("Location"), a.url + "/api/v1/lag");
  // The same tokens as on the leader.
  auto anonymous = httplib::Client(b.url).Get("/api/v1/cluster");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401) << anonymous->body;
  auto wrong =
      httplib::Client(b.url).Get("/api/v1/regions", {{"Authorization", "Bearer not-a-token"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401) << wrong->body;
  // The CLI reads through the standby.
  CommandResult status =
      RunCommand({IcewardenBinary(), "status", "--output", "json", "--server", b.url},
                 {{"ICEWARDEN_TOKEN", "admin-secret-1"}});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(json::parse(status.out)["regions"].size(), 2u);

  a.process->Signal(SIGKILL);
  ASSERT_EQ(a.process->Wait(std::chrono::seconds(5)), -SIGKILL);
  // B leads once A's lease ends; a liveness bound, not a timing goal (the takeover
  // benchmark measures it).
  auto line = b.process->ReadLine(std::chrono::seconds(kTtlSeconds * 5));
  ASSERT_TRUE(line.has_value()) << "the standby never took over";
  EXPECT_NE(line->find("serving"), std::string::npos) << *line;
  auto direct = Get(b.url, "/api/v1/regions");
  ASSERT_TRUE(direct);
  EXPECT_EQ(direct->status, 200) << direct->body;

  // A graceful stop gives the key up at once.
  b.process->Signal(SIGTERM);
  EXPECT_EQ(b.process->Wait(std::chrono::seconds(15)), 0);
  auto client = std::make_shared<EtcdClient>(EtcdClientOptions{{etcd_.url()}});
  auto key = client->Range("/icewarden/leader");
  ASSERT_TRUE(key.ok());
  EXPECT_TRUE(key->kvs.empty()) << "the leader key outlived a graceful stop";
}

TEST_F(ServeLeaderTest, ALeaderPausedPastItsLeaseStopsWhenItRunsAgainAndItsWriteDoesNotLand) {
  Replica& a = replicas_[0];
  Replica& b = replicas_[1];
  ASSERT_NE(Start(a, "replica-a").find("serving"), std::string::npos);
  ASSERT_NE(Start(b, "replica-b").find("standby"), std::string::npos);

  a.process->Signal(SIGSTOP);
  auto line = b.process->ReadLine(std::chrono::seconds(kTtlSeconds * 5));
  ASSERT_TRUE(line.has_value() && line->find("serving") != std::string::npos)
      << "the standby never took over from a paused leader";

  // A write sent to the paused leader waits in its socket; it is read when A runs again.
  std::thread fence([&] {
    httplib::Client c(a.url);
    c.set_read_timeout(10, 0);
    c.Post("/api/v1/regions/eu-central-1/fence", {{"Authorization", "Bearer admin-secret-1"}},
           R"({"reason":"sent to a deposed leader"})", "application/json");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  a.process->Signal(SIGCONT);
  EXPECT_EQ(a.process->Wait(std::chrono::seconds(10)), 1) << "a deposed leader must stop";
  fence.join();

  std::unique_ptr<StateStore> record = Record();
  ASSERT_NE(record, nullptr);
  auto region = record->GetRegion("eu-central-1");
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  if (region->has_value()) {
    EXPECT_FALSE((*region)->fenced) << "the deposed leader's write landed";
  }
  auto audit = record->ListAudit(AuditQuery{0, 0, std::string("eu-central-1")});
  ASSERT_TRUE(audit.ok());
  for (const AuditEvent& e : *audit) EXPECT_NE(e.reason, "sent to a deposed leader");
  // B still leads and acts.
  auto direct = Get(b.url, "/api/v1/regions");
  ASSERT_TRUE(direct);
  EXPECT_EQ(direct->status, 200);
}

// Other replicas send clients to the address a replica advertises, so a port the kernel picks
// (unknown until the server listens, and not the same for the standby's and the leader's
// server) is refused at start-up unless state.etcd.advertise says where clients reach it.
TEST_F(ServeLeaderTest, AnyFreePortWithoutAnAdvertisedAddressIsRefusedAtStartUp) {
  const std::string config = WriteConfig("replica-a", FreePort(), "http://127.0.0.1:9/catalog");
  CommandResult run =
      RunCommand({IcewardenBinary(), "serve", "--config", config, "--listen", "127.0.0.1:0"}, {});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("give api.listen (or --listen) a fixed port"), std::string::npos)
      << run.err;
  auto client = std::make_shared<EtcdClient>(EtcdClientOptions{{etcd_.url()}});
  auto key = client->Range("/icewarden/", EtcdClient::PrefixEnd("/icewarden/"));
  ASSERT_TRUE(key.ok());
  EXPECT_TRUE(key->kvs.empty()) << "a refused replica wrote to etcd";
}

// Issue 12, item 4, with real processes: the leader is cut off from one region (its config
// points eu-central-1 at a dead port) while the other two replicas hear it. The leader's own
// silence is one vote of three, so eu-central-1 is not unreachable, which is what the
// old_region_unreachable evidence reads; us-east-1, which nobody hears, is.
TEST_F(ServeLeaderTest, ALeaderCutOffFromARegionThatTheOthersHearIsOneVoteAndNoQuorum) {
  httplib::Server catalog;  // any answer is life (DESIGN.md rule 7)
  catalog.Get(".*", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"defaults": {}, "overrides": {}})", "application/json");
  });
  const int catalog_port = catalog.bind_to_any_port("127.0.0.1");
  ASSERT_GT(catalog_port, 0);
  std::thread serving([&] { catalog.listen_after_bind(); });
  const std::string live = "http://127.0.0.1:" + std::to_string(catalog_port) + "/catalog";

  Replica& a = replicas_[0];
  std::string first = Start(a, "replica-a");  // eu-central-1 at the dead port
  ASSERT_NE(first.find("serving"), std::string::npos) << first;
  ASSERT_NE(Start(replicas_[1], "replica-b", live).find("standby"), std::string::npos);
  ASSERT_NE(Start(replicas_[2], "replica-c", live).find("standby"), std::string::npos);

  // Whatever else lies under the views' prefix is no view and no vote: a key whose view names
  // another replica (replica-z claims to be b, silent on eu), a value too large to be a view.
  EtcdClient etcd(EtcdClientOptions{{etcd_.url()}});
  const std::string silent_us =
      R"({"probed": true, "silent": true, "silent_for_ms": 60000, "silent_rounds": 60,
          "detail": "x", "round_age_ms": 0})";
  ASSERT_TRUE(
      etcd.Put("/icewarden/views/replica-z",
               R"({"replica": "replica-b", "regions": {"eu-central-1": )" + silent_us + "}}")
          .ok());
  ASSERT_TRUE(etcd.Put("/icewarden/views/replica-y", std::string(70 * 1024, ' ')).ok());
  json cluster = ClusterUntil(
      a.url, [](const json& c) { return c["quorum"]["us-east-1"]["votes"] == 3; }, 150);
  catalog.stop();
  serving.join();
  EXPECT_EQ(cluster["role"], "leader") << cluster.dump(2);
  ASSERT_EQ(cluster["quorum"]["us-east-1"]["votes"], 3) << cluster.dump(2);
  EXPECT_EQ(cluster["quorum"]["us-east-1"]["unreachable"], true);
  const json& eu = cluster["quorum"]["eu-central-1"];
  EXPECT_EQ(eu["unreachable"], false) << eu.dump(2);
  EXPECT_EQ(eu["votes"], 1);
  ASSERT_EQ(eu["by_replica"].size(), 3u);
  EXPECT_EQ(eu["by_replica"][0]["replica"], "replica-a");
  EXPECT_EQ(eu["by_replica"][0]["silent_for_window"], true) << "the leader hears nothing";
  EXPECT_EQ(eu["by_replica"][1]["saw"], "answered");
  EXPECT_EQ(eu["by_replica"][2]["saw"], "answered");
  EXPECT_EQ(cluster["views"].size(), 3u) << "replica-z and replica-y are not views";
  // The health the leader keeps follows the quorum too: eu-central-1, which only the leader
  // cannot hear, is degraded and says why; us-east-1, which nobody hears, is unreachable.
  auto regions = Get(a.url, "/api/v1/regions");
  ASSERT_TRUE(regions);
  ASSERT_EQ(regions->status, 200) << regions->body;
  const json listed = json::parse(regions->body);
  std::map<std::string, json> by_name;
  for (const json& r : listed["regions"]) by_name[r["name"]] = r;
  EXPECT_EQ(by_name["eu-central-1"]["health"], "degraded") << regions->body;
  EXPECT_NE(by_name["eu-central-1"]["reason"].get<std::string>().find(
                "not unreachable: 1 of 3 replicas heard nothing from eu-central-1"),
            std::string::npos)
      << regions->body;
  EXPECT_EQ(by_name["us-east-1"]["health"], "unreachable") << regions->body;
}

}  // namespace
}  // namespace icewarden::testing
