// The StateStore contract, one suite for both backends: every TEST_P in store_contract_*_test.cpp
// runs against the SQLite store (a fresh file) and the etcd store (a real etcd member, a fresh
// key prefix), and again against etcd over TLS with a client certificate and a user's
// password (etcd_tls_auth: --client-cert-auth, auth enabled, a user whose role covers "/").
// Reopen() opens a new store on the same record, as a restart would.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

#include "state/drill_store.h"
#include "state/etcd_store.h"
#include "state/sqlite_store.h"
#include "tests/etcd/etcd_member.h"
#include "tests/fakes/etcd_admin.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/store_builders.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::testing {

class StoreContractTest : public ::testing::TestWithParam<std::string> {
 protected:
  // One etcd member for the whole binary's run of a suite (ctest runs each test in its own
  // process, so in practice one per test); every test takes its own prefix.
  static void SetUpTestSuite() {}
  static void TearDownTestSuite() {
    member_.reset();
    secured_.reset();
    if (!pki_dir_.empty()) std::filesystem::remove_all(pki_dir_);
    pki_dir_.clear();
  }

  void SetUp() override {
    dir_ = MakeTempDir("store-contract");
    if (secured() && !HaveOpenSslCli()) GTEST_SKIP() << "openssl CLI is not installed";
    if (etcd()) {
      if (secured()) {
        if (secured_ == nullptr) StartSecured();
        ASSERT_NE(secured_, nullptr);
        client_ = std::make_shared<EtcdClient>(secured_options_);
      } else {
        if (member_ == nullptr) {
          member_ = std::make_unique<EtcdMember>(std::vector<std::string>{"--max-txn-ops", "1024"});
          ASSERT_TRUE(member_->WaitReady()) << "etcd did not start";
        }
        client_ = std::make_shared<EtcdClient>(EtcdClientOptions{{member_->url()}});
      }
      prefix_ = "/contract-" + std::to_string(++tests_) + "/";
    }
    Reopen();
  }
  // The etcd_tls_auth member: a CA, its certificate and the client's, auth enabled.
  static void StartSecured() {
    pki_dir_ = MakeTempDir("store-contract-pki");
    EtcdTestPki pki;
    std::string e;
    ASSERT_TRUE(MakeEtcdTestPki(pki_dir_, &pki, &e)) << e;
    const TestCa& ca = pki.ca;
    const TestLeaf& member = pki.member;
    const TestLeaf& client = pki.client;
    const std::string key = ReadTestFile(client.key);
    const EtcdMemberTls tls{member.cert, member.key, ca.cert};
    auto started = std::make_unique<EtcdMember>(
        std::vector<std::string>{"--max-txn-ops", "1024", "--auth-token", "simple"}, &tls);
    const EtcdTlsOptions client_tls{ca.cert, client.cert, key};
    ASSERT_TRUE(started->WaitReady(client_tls)) << "etcd did not start at " << started->url();
    ASSERT_TRUE(EtcdAdmin(started->url(), {client.cert, client.key})
                    .EnableAuth("root-pw", "icewarden", "icewarden-pw", &e))
        << e;
    secured_options_ = EtcdClientOptions{
        {started->url()}, std::chrono::seconds(2), client_tls, {"icewarden", "icewarden-pw"}};
    secured_ = std::move(started);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  bool etcd() const { return GetParam().rfind("etcd", 0) == 0; }
  bool secured() const { return GetParam() == "etcd_tls_auth"; }

  Result<std::unique_ptr<StateStore>> Open(bool read_only = false) {
    if (etcd()) {
      EtcdStoreOptions o;
      o.prefix = prefix_;
      o.max_txn_ops = 1024;
      o.read_only = read_only;
      return OpenEtcdStore(client_, o, clock_);
    }
    SqliteStoreOptions o;
    o.path = dir_ + "/state.db";
    o.read_only = read_only;
    return OpenSqliteStore(o, clock_);
  }
  void Reopen() {
    store_.reset();
    Result<std::unique_ptr<StateStore>> opened = Open();
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
  }
  DrillStore& drills() { return *DrillStoreOf(*store_); }

  Ownership MustGet(std::string_view table) { return MustGetOwnership(*store_, table); }
  std::vector<AuditEvent> AllAudit() { return WholeAudit(*store_); }

  static inline std::unique_ptr<EtcdMember> member_;
  static inline std::unique_ptr<EtcdMember> secured_;
  static inline EtcdClientOptions secured_options_;
  static inline std::string pki_dir_;
  static inline int tests_ = 0;
  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>();
  std::shared_ptr<EtcdClient> client_;
  std::string prefix_;
  std::string dir_;
  std::unique_ptr<StateStore> store_;
};

inline std::string BackendName(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

}  // namespace icewarden::testing
