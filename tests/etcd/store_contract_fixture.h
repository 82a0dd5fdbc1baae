// The StateStore contract, one suite for both backends: every TEST_P in store_contract_*_test.cpp
// runs against the SQLite store (a fresh file) and the etcd store (a real etcd member, a fresh
// key prefix). Reopen() opens a new store on the same record, as a restart would.
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
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/store_builders.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::testing {

class StoreContractTest : public ::testing::TestWithParam<std::string> {
 protected:
  // One etcd member for the whole binary's run of a suite (ctest runs each test in its own
  // process, so in practice one per test); every test takes its own prefix.
  static void SetUpTestSuite() {}
  static void TearDownTestSuite() { member_.reset(); }

  void SetUp() override {
    dir_ = MakeTempDir("store-contract");
    if (etcd()) {
      if (member_ == nullptr) {
        member_ = std::make_unique<EtcdMember>(std::vector<std::string>{"--max-txn-ops", "1024"});
        ASSERT_TRUE(member_->WaitReady()) << "etcd did not start";
      }
      client_ = std::make_shared<EtcdClient>(EtcdClientOptions{{member_->url()}});
      prefix_ = "/contract-" + std::to_string(++tests_) + "/";
    }
    Reopen();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  bool etcd() const { return GetParam() == "etcd"; }

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
