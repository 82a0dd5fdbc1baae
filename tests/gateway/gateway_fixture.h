// GatewayTest: the real `icewarden gateway` process in front of the lab's two catalogs,
// deciding writes by an SQLite state store that the test writes as the orchestrator would:
// ownership rows, failovers in each phase, the fenced overlay. Gateways: gw-us (reads and
// writes anywhere), gw-eu-only (may forward only to eu-central-1), gw-us-impatient (300 ms
// forward timeout) and, with the openssl CLI, gw-us-tls (serves TLS; ca_ signed it).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <regex>

#include "examples/lab/workload.h"
#include "state/sqlite_store.h"
#include "state/state_store.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_pki.h"
#include "tests/integration/lab/lab_fixture.h"

namespace icewarden::lab::testing {

using namespace std::chrono_literals;
using icewarden::testing::IcewardenBinary;
using icewarden::testing::Subprocess;

class GatewayTest : public LabTest {
 protected:
  void SetUp() override {
    LabTest::SetUp();
    if (HasFatalFailure()) return;
    db_ = options_.data_dir + "/icewarden.db";
    auto store = OpenSqliteStore(SqliteStoreOptions{db_}, SystemClock());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store).value();
    ASSERT_NO_FATAL_FAILURE(ClaimSeededTables());
    WriteConfig("state:\n  path: " + db_ + "\n",
                "  - name: gw-us\n    region: us-east-1\n    listen: 127.0.0.1:0\n"
                "    store_poll: 10ms\n    max_body_bytes: 65536\n"
                "  - name: gw-eu-only\n    region: eu-central-1\n"
                "    listen: 127.0.0.1:0\n    forward_to: [eu-central-1]\n"
                "  - name: gw-us-impatient\n    region: us-east-1\n"
                "    listen: 127.0.0.1:0\n    forward_timeout: 300ms\n");
    // With the openssl CLI, one more gateway serves TLS with a certificate for 127.0.0.1.
    if (icewarden::testing::HaveOpenSslCli()) {
      std::string error;
      const std::string dir = options_.data_dir;
      ASSERT_TRUE(icewarden::testing::MakeTestCa(dir, "ca", &ca_, &error)) << error;
      icewarden::testing::TestLeaf leaf;
      ASSERT_TRUE(icewarden::testing::MakeTestLeaf(dir, "gateway", ca_, "IP:127.0.0.1",
                                                   "serverAuth", &leaf, &error))
          << error;
      std::ofstream(config_, std::ios::app)
          << "  - name: gw-us-tls\n    region: us-east-1\n    listen: 127.0.0.1:0\n"
          << "    store_poll: 10ms\n"
          << "    tls: {cert_file: " << leaf.cert << ", key_file: " << leaf.key
          << ", ca_file: " << ca_.cert << "}\n";
    }
  }

  // Every seeded table in both regions first, as replication leaves them; then us-east-1 owns
  // sales and clickstream, eu-central-1 owns eu.
  void ClaimSeededTables() {
    for (auto [ns, t] :
         {std::pair{"sales", "orders"}, {"clickstream", "events"}, {"eu", "orders"}}) {
      ASSERT_TRUE(Eventually([&] { return Replicated(ns, t); })) << ns << "." << t;
    }
    Claim("sales.orders", kUs);
    Claim("clickstream.events", kUs);
    Claim("eu.orders", kEu);
  }

  // config_: the lab's two regions, eu.* owned by eu-central-1, and `gateways_yaml` (items of
  // the gateways: list) over the store `state_yaml` names.
  void WriteConfig(const std::string& state_yaml, const std::string& gateways_yaml) {
    config_ = options_.data_dir + "/icewarden.yaml";
    std::ofstream(config_) << state_yaml << "regions:\n"
                           << "  - name: us-east-1\n    catalog_uri: " << lab_->region_url(kUs)
                           << "\n    warehouse: lab\n"
                           << "  - name: eu-central-1\n    catalog_uri: " << lab_->region_url(kEu)
                           << "\n    warehouse: lab\n"
                           << "ownership:\n  default_owner: us-east-1\n"
                           << "  rules:\n    - {match: \"eu.*\", owner: eu-central-1}\n"
                           << "gateways:\n"
                           << gateways_yaml;
  }

  void TearDown() override {
    gateways_.clear();
    store_.reset();
    LabTest::TearDown();
  }

  AuditEvent Why(const std::string& action) {
    AuditEvent e;
    e.actor = "test";
    e.source = "test";
    e.action = action;
    e.reason = "gateway test";
    return e;
  }

  void Claim(const std::string& dotted, const std::string& owner) {
    OwnershipChange c{*icewarden::TableIdent::Parse(dotted), 0, owner, ""};
    ASSERT_TRUE(store_->CompareAndSetOwnership({&c, 1}, Why("ownership.claim")).ok());
  }

  void Move(const std::string& dotted, const std::string& to, const std::string& failover) {
    auto row = store_->GetOwnership(*icewarden::TableIdent::Parse(dotted));
    ASSERT_TRUE(row.ok() && *row);
    OwnershipChange c{(*row)->table, (*row)->epoch, to, failover};
    ASSERT_TRUE(store_->CompareAndSetOwnership({&c, 1}, Why("ownership.transfer")).ok());
  }

  // A failover of owner:us-east-1 to eu-central-1, created in `phase`.
  void PutFailover(const std::string& id, FailoverPhase phase) {
    auto existing = store_->GetFailover(id);
    ASSERT_TRUE(existing.ok());
    if (!*existing) {
      Failover f;
      f.id = id;
      f.scope = "owner:us-east-1";
      f.from = kUs;
      f.to = kEu;
      f.runbook = "test";
      f.phase = phase;
      f.proposed_by = "test";
      ASSERT_TRUE(store_->CreateFailover(f, Why("failover.propose")).ok());
      return;
    }
    Failover f = **existing;
    f.phase = phase;
    ASSERT_TRUE(store_->UpdateFailover(f, f.version, Why("failover.transition")).ok());
  }

  // Starts `icewarden gateway --name NAME` and returns its base URL once it serves.
  std::string StartGateway(const std::string& name) {
    gateways_.push_back(std::make_unique<Subprocess>(std::vector<std::string>{
        IcewardenBinary(), "gateway", "--config", config_, "--name", name}));
    auto line = gateways_.back()->ReadLine(15s);
    EXPECT_TRUE(line) << "the gateway printed nothing";
    if (!line) return "";
    std::smatch m;
    EXPECT_TRUE(std::regex_search(*line, m, std::regex("(https?://127\\.0\\.0\\.1:[0-9]+)/v1/lab")))
        << *line;
    return m.size() > 1 ? m[1].str() : "";
  }

  // A client of `url`; one of https:// trusts the test's CA.
  std::unique_ptr<httplib::Client> To(const std::string& url) const {
    auto c = std::make_unique<httplib::Client>(url);
    if (url.rfind("https://", 0) == 0) c->set_ca_cert_path(ca_.cert);
    c->set_connection_timeout(2);
    c->set_read_timeout(10);
    return c;
  }

  // One append to `table` built from what the gateway loads, committed through it.
  httplib::Result AppendVia(const std::string& gateway, const std::string& ns,
                            const std::string& table, const httplib::Headers& headers = {}) {
    auto loaded = To(gateway)->Get(TablePath(ns, table));
    if (!loaded || loaded->status != 200) return loaded;
    json metadata = json::parse(loaded->body)["metadata"];
    return To(gateway)->Post(TablePath(ns, table), headers,
                             AppendCommit(metadata, "gateway-test", SystemNowMs()).dump(),
                             "application/json");
  }

  std::size_t Snapshots(const std::string& region, const std::string& ns, const std::string& t) {
    json m = Metadata(region, ns, t);
    return m.is_object() && m.contains("snapshots") ? m["snapshots"].size() : 0;
  }

  static json Error(const httplib::Result& r) {
    if (!r) return nullptr;
    json j = json::parse(r->body, nullptr, false);
    return j.is_object() && j.contains("error") ? j["error"] : json();
  }

  std::string db_, config_;
  std::unique_ptr<StateStore> store_;
  std::vector<std::unique_ptr<Subprocess>> gateways_;
  icewarden::testing::TestCa ca_;  // signed gw-us-tls's certificate
};

}  // namespace icewarden::lab::testing
