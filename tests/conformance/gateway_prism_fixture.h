// GatewayPrismTest: the real `icewarden gateway` process between two Prism validating proxies:
//
//   client (httplib) ─► Prism A ─► gateway ─► Prism B ─► lab catalog us-east-1
//
// Prism B is PrismConformanceTest's own (prism_fixture.h), in front of the lab region; the
// gateway's region us-east-1 has Prism B as its catalog_uri, so every request the gateway sends
// there (its own GET /v1/config with icewarden's token included) and every answer it gets is
// checked. Prism A is in front of the gateway and checks what the client sends and what the
// gateway answers. The gateway forwards only to us-east-1 (forward_to), which owns the sales
// tables; eu.orders is eu-central-1's, so the gateway refuses its writes (409) without sending
// anything to eu-central-1 (whose catalog_uri is the lab's own, never reached). Ownership is in
// a real SQLite store that the test writes as the orchestrator would.
//
// A verdict of Prism B reaches the client too: the gateway passes any catalog answer through
// (status and body), and the body names Prism's error type, which ExpectNoVerdicts looks for.
// Both Prism logs are checked at the end.
#pragma once

#include <fstream>
#include <map>

#include "state/sqlite_store.h"
#include "state/state_store.h"
#include "tests/conformance/prism_fixture.h"

namespace icewarden::conformance {

using namespace std::chrono_literals;

inline constexpr const char* kOtherRegion = "eu-central-1";
inline constexpr int kMaxBody = 65536;

class GatewayPrismTest : public PrismConformanceTest {
 protected:
  void SetUp() override {
    PrismConformanceTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    auto store = OpenSqliteStore(SqliteStoreOptions{dir_ + "/icewarden.db"}, SystemClock());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store).value();
    Claim("sales.orders", kRegion);
    Claim("eu.orders", kOtherRegion);

    std::ofstream(dir_ + "/token") << kToken;
    // Prism A's port is named before the gateway starts, so the config endpoint can send
    // engines back to Prism A (advertise); StartPrism tries it first.
    gateway_prism_.port = FreePort();
    // The gateway prints its advertise URL (Prism A's), so its own port is chosen here too.
    const int gateway_port = FreePort();
    gateway_url_ = "http://127.0.0.1:" + std::to_string(gateway_port);
    config_ = dir_ + "/icewarden.yaml";
    std::ofstream(config_) << "state:\n  path: " << dir_ << "/icewarden.db\n"
                           << "regions:\n"
                           << "  - name: " << kRegion << "\n    catalog_uri: " << prism_url()
                           << "\n    warehouse: lab\n    auth: {type: bearer, token_file: " << dir_
                           << "/token}\n"
                           << "  - name: " << kOtherRegion
                           << "\n    catalog_uri: " << lab_->region_url(kOtherRegion)
                           << "\n    warehouse: lab\n    auth: {type: bearer, token_file: " << dir_
                           << "/token}\n"
                           << "ownership:\n  default_owner: " << kRegion << "\n"
                           << "  rules:\n    - {match: \"eu.*\", owner: " << kOtherRegion << "}\n"
                           << "gateways:\n"
                           << "  - name: gw\n    region: " << kRegion << "\n    forward_to: ["
                           << kRegion << "]\n"
                           << "    listen: 127.0.0.1:" << gateway_port
                           << "\n    advertise: " << gateway_prism_.url()
                           << "\n    store_poll: 10ms\n    max_body_bytes: " << kMaxBody
                           << "\n    forward_timeout: " << forward_timeout_ << "\n";
    gateway_ = std::make_unique<icewarden::testing::Subprocess>(std::vector<std::string>{
        icewarden::testing::IcewardenBinary(), "gateway", "--config", config_, "--name", "gw"});
    auto line = gateway_->ReadLine(15s);
    ASSERT_TRUE(line) << "the gateway printed nothing";
    ASSERT_NE(line->find(gateway_prism_.url() + "/v1/lab"), std::string::npos) << *line;
    StartPrism(gateway_url_, &gateway_prism_, "prism-gateway");
  }

  void StopPrisms() override {
    gateway_prism_.Stop();
    if (gateway_) {
      gateway_->Signal(SIGTERM);
      gateway_->Wait(5s);
      gateway_.reset();
    }
    PrismConformanceTest::StopPrisms();
  }

  void TearDown() override {
    if (HasFailure()) {
      for (const auto& e : exchanges_) {
        std::cerr << "  " << e.method << " " << e.url << " -> " << e.status << " "
                  << e.response_body.substr(0, 600) << "\n";
      }
      if (!gateway_prism_.log.empty()) {
        std::cerr << "gateway's prism log kept in " << gateway_prism_.log << "\n";
      }
    }
    PrismConformanceTest::TearDown();
    store_.reset();
  }

  AuditEvent Why(const std::string& action) {
    AuditEvent e;
    e.actor = "test";
    e.source = "test";
    e.action = action;
    e.reason = "gateway conformance test";
    return e;
  }

  void Claim(const std::string& dotted, const std::string& owner) {
    OwnershipChange c{*icewarden::TableIdent::Parse(dotted), 0, owner, ""};
    ASSERT_TRUE(store_->CompareAndSetOwnership({&c, 1}, Why("ownership.claim")).ok());
  }

  void Fence(const std::string& region, bool fenced) {
    auto row = store_->GetRegion(region);
    ASSERT_TRUE(row.ok());
    Region r = *row ? **row : Region{};
    r.name = region;
    r.fenced = fenced;
    ASSERT_TRUE(store_->PutRegion(r, Why(fenced ? "region.fence" : "region.unfence")).ok());
  }

  // One exchange with `base` (Prism A unless a test goes to the gateway directly), recorded.
  // Every request carries the catalog's token, and loads and creates the access delegation
  // header (prism_fixture.h: Prism crashes without it).
  Exchange Send(const std::string& method, const std::string& target, const std::string& body = "",
                const std::string& base = "") {
    httplib::Client c(base.empty() ? gateway_prism_.url() : base);
    c.set_connection_timeout(2);
    c.set_read_timeout(30);  // two node processes validate on the way
    httplib::Request req;
    req.method = method;
    req.path = target;
    req.body = body;
    req.set_header("Authorization", std::string("Bearer ") + kToken);
    req.set_header("X-Iceberg-Access-Delegation", "vended-credentials");
    if (!body.empty()) req.set_header("Content-Type", "application/json");
    Exchange e{method, target, body, 0, "", "", ""};
    if (auto r = c.send(req)) {
      e.status = r->status;
      e.response_body = r->body;
      e.violations_header = r->get_header_value("sl-violations");
      retry_after_[exchanges_.size()] = r->get_header_value("Retry-After");
    } else {
      e.error = httplib::to_string(r.error());
    }
    exchanges_.push_back(std::move(e));
    return exchanges_.back();
  }

  std::string RetryAfterOfLast() { return retry_after_[exchanges_.size() - 1]; }

  // The error type of an answer, "" when it has none.
  static std::string ErrorType(const Exchange& e) {
    nlohmann::json j = nlohmann::json::parse(e.response_body, nullptr, false);
    if (!j.is_object() || !j.contains("error") || !j["error"].is_object()) return "";
    return j["error"].value("type", "");
  }

  std::string forward_timeout_ = "30s";  // a subclass's constructor may shorten it
  std::unique_ptr<StateStore> store_;
  std::string config_;
  std::unique_ptr<icewarden::testing::Subprocess> gateway_;
  std::string gateway_url_;
  PrismProcess gateway_prism_;  // Prism A, in front of the gateway
  std::vector<Exchange> exchanges_;
  std::map<std::size_t, std::string> retry_after_;
};

}  // namespace icewarden::conformance
