// CatalogLabTest: the two-region lab (tests/integration/lab/lab_fixture.h: us-east-1 owns by
// default, eu.* belongs to eu-central-1, 200 ms replication lag, workload off) plus two seeded
// extra eu tables, a SQLite state store whose ownership mirrors the lab's (epoch 1 each), and an
// ActionEnv that reaches the lab's catalogs. Region health comes from health_, which tests edit.
#pragma once

#include <map>
#include <nlohmann/json.hpp>

#include "actions/action_kinds.h"
#include "actions/catalog_checks.h"
#include "health/catalog_client.h"
#include "state/sqlite_store.h"
#include "tests/integration/lab/lab_fixture.h"

namespace icewarden::lab::testing {

class CatalogLabTest : public LabTest {
 protected:
  CatalogLabTest() { options_.seed_tables = 6; }  // two more per namespace: eu has four

  void SetUp() override {
    LabTest::SetUp();
    if (HasFatalFailure()) return;
    auto store = OpenSqliteStore({options_.data_dir + "/state.db"}, SystemClock());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    // The lab's table status comes from its replicator's passes.
    json tables;
    ASSERT_TRUE(Eventually([&] {
      tables = lab_->State()["tables"];
      return tables.size() >= 6u + options_.seed_tables;
    }));
    for (const auto& table : tables) {
      std::string dotted = table["table"];
      ::icewarden::OwnershipChange claim{*::icewarden::TableIdent::Parse(dotted), 0, table["owner"],
                                         ""};
      ASSERT_TRUE(store_->CompareAndSetOwnership(std::span(&claim, 1), {}).ok());
      if (dotted.rfind("eu.", 0) == 0) eu_tables_.push_back(dotted);
    }
    ASSERT_GE(eu_tables_.size(), 4u);
    health_[kUs] = Region{kUs};
    health_[kEu] = Region{kEu};
    env_.clock = SystemClock();
    env_.store = store_.get();
    env_.catalog = [this](const std::string& region) -> std::optional<CatalogClientOptions> {
      if (lab_->region_port(region) == 0) return std::nullopt;
      CatalogClientOptions options;
      options.base_uri = lab_->region_url(region);
      options.warehouse = "lab";
      options.default_deadline = std::chrono::milliseconds(3000);
      return options;
    };
    env_.region_health = [this](const std::string& region) -> std::optional<Region> {
      auto it = health_.find(region);
      if (it == health_.end()) return std::nullopt;
      return it->second;
    };
    // Every eu table is in us-east-1 before a test starts moving it there.
    ASSERT_TRUE(Eventually([&] {
      for (const auto& t : eu_tables_)
        if (!Replicated("eu", t.substr(3))) return false;
      return true;
    }));
  }

  ActionContext Ctx(std::chrono::milliseconds timeout = std::chrono::seconds(30)) const {
    ActionContext ctx;
    ctx.failover_id = "fo-1";
    ctx.step_id = "promote-ownership";
    ctx.idempotency_key = "fo-1/promote-ownership";
    ctx.from = kEu;
    ctx.to = kUs;
    ctx.scope = "namespace:eu.*";
    ctx.deadline = std::chrono::steady_clock::now() + timeout;
    return ctx;
  }

  ::icewarden::Ownership Row(const std::string& dotted) {
    return **store_->GetOwnership(*::icewarden::TableIdent::Parse(dotted));
  }

  // The table's icewarden.* properties in a region's catalog.
  std::pair<std::string, std::string> Marker(const std::string& region, const std::string& dotted) {
    auto t = *::icewarden::TableIdent::Parse(dotted);
    json m = Metadata(region, t.namespace_levels[0], t.name);
    if (!m.is_object() || !m.contains("properties")) return {};
    auto p = m["properties"];
    return {p.value("icewarden.owner", ""), p.value("icewarden.epoch", "")};
  }

  static json Detail(const ActionResult& r) { return json::parse(r.detail_json); }

  std::unique_ptr<StateStore> store_;
  std::map<std::string, Region> health_;
  ActionEnv env_;
  std::vector<std::string> eu_tables_;
};

}  // namespace icewarden::lab::testing
