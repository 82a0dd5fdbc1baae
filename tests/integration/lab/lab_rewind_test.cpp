// Rewinding a diverged replica (POST /lab/regions/{r}/rewind, Lab::RewindRegion), the lab's
// stand-in for re-seeding a replica from its owner. The rogue writer makes eu-central-1's copies
// of us-east-1's four workload tables diverge; a rewind replaces each with the owner's copy,
// reports the rogue commits' snapshots as discarded, and leaves replicas that have not
// diverged to replication, which fast-forwards a rewound replica again.
#include <set>
#include <string>
#include <vector>

#include "tests/integration/lab/lab_fixture.h"

namespace icewarden::lab::testing {
namespace {

struct ReplicaTable {
  std::string dotted, ns, name;  // ns as the REST path spells it
};

// The workload tables us-east-1 owns, which eu-central-1 holds as a replica.
const std::vector<ReplicaTable>& UsTables() {
  static const std::vector<ReplicaTable> tables = {
      {"sales.orders", "sales", "orders"},
      {"sales.customers", "sales", "customers"},
      {"clickstream.events", "clickstream", "events"},
      {"sales.archive.orders_2024", "sales%1Farchive", "orders_2024"}};
  return tables;
}

std::set<int64_t> RewindSnapshotIds(const json& metadata) {
  std::set<int64_t> ids;
  if (!metadata.is_object()) return ids;
  for (const auto& snapshot : metadata["snapshots"]) {
    ids.insert(snapshot["snapshot-id"].get<int64_t>());
  }
  return ids;
}

std::set<std::string> TableNames(const json& rewound) {
  std::set<std::string> names;
  for (const auto& entry : rewound) names.insert(entry["table"].get<std::string>());
  return names;
}

class LabRewindTest : public LabTest {
 protected:
  // The workload is driven by WorkloadRoundNow: its own thread would wait a minute.
  LabRewindTest() { options_.workload_interval_ms = 60'000; }

  void SetUp() override {
    LabTest::SetUp();
    ASSERT_TRUE(Eventually([&] {
      for (const auto& table : UsTables()) {
        if (!Replicated(table.ns, table.name)) return false;
      }
      return Replicated("eu", "orders") && Replicated("eu", "customers");
    }));
  }

  // One round of eu-central-1's rogue writer: a commit only eu-central-1 has in each of the
  // four tables, so all four diverge.
  void Diverge() {
    ASSERT_TRUE(lab_->SetRogueWriter(kEu, true).ok());
    ASSERT_EQ(lab_->WorkloadRoundNow(), 4);
    ASSERT_TRUE(lab_->SetRogueWriter(kEu, false).ok());
    for (const auto& table : UsTables()) {
      ASSERT_EQ(TableState(table.dotted)["regions"][kEu]["diverged"], true) << table.dotted;
    }
  }

  // The snapshot ids of the rogue writer's commits to `dotted`, oldest first (GET /lab/commits).
  json RogueSnapshotIds(const std::string& dotted) {
    const json log = lab_->Commits(dotted);
    json ids = json::array();
    for (const auto& commit : log["commits"]) {
      if (commit["writer"] == "rogue") ids.push_back(commit["snapshot_id"]);
    }
    return ids;
  }

  httplib::Result Rewind(const std::string& region, const std::string& body = "") {
    httplib::Client admin(lab_->admin_url());
    return admin.Post("/lab/regions/" + region + "/rewind", body, "application/json");
  }

  // The 200 answer of a rewind, parsed; null (after a failed assertion) otherwise.
  json RewindOk(const std::string& region, const std::string& body = "") {
    auto result = Rewind(region, body);
    EXPECT_TRUE(result) << httplib::to_string(result.error());
    if (!result) return nullptr;
    EXPECT_EQ(result->status, 200) << result->body;
    return result->status == 200 ? json::parse(result->body) : json();
  }

  bool Diverged(const std::string& dotted) {
    return TableState(dotted)["regions"][kEu]["diverged"] == true;
  }

  // The answer of a failed rewind: {status, error message}.
  std::pair<int, std::string> RewindError(const std::string& region, const std::string& body) {
    auto result = Rewind(region, body);
    if (!result) return {-1, httplib::to_string(result.error())};
    json answer = json::parse(result->body, nullptr, false);
    return {result->status, answer.is_object() ? answer.value("error", "") : result->body};
  }
};

TEST_F(LabRewindTest, ReplacesEveryDivergedReplicaWithItsOwnersCopy) {
  Diverge();
  // The owner moves on too: the replica must receive what it never had, not just lose its own.
  auto appended = Append(kUs, "sales", "orders");
  ASSERT_EQ(appended->status, 200) << appended->body;
  const int64_t owner_snapshot = json::parse(appended->body)["metadata"]["current-snapshot-id"];
  const json owner_before = Metadata(kUs, "sales", "orders");
  const std::string owner_location = MetadataLocation(kUs, "sales", "orders");
  const json rogue = RogueSnapshotIds("sales.orders");
  ASSERT_EQ(rogue.size(), 1u);
  ASSERT_TRUE(RewindSnapshotIds(Metadata(kEu, "sales", "orders")).count(rogue[0].get<int64_t>()));

  json answer = RewindOk(kEu);
  ASSERT_TRUE(answer.is_object());
  EXPECT_EQ(answer["region"], kEu);
  EXPECT_EQ(answer["unchanged"], 0);
  ASSERT_EQ(answer["rewound"].size(), 4u) << answer.dump(2);
  for (const auto& table : UsTables()) {
    SCOPED_TRACE(table.dotted);
    json entry;
    for (const auto& candidate : answer["rewound"]) {
      if (candidate["table"] == table.dotted) entry = candidate;
    }
    ASSERT_TRUE(entry.is_object()) << answer.dump(2);
    const std::string location = MetadataLocation(kUs, table.ns, table.name);
    EXPECT_EQ(entry, (json{{"table", table.dotted},
                           {"owner", kUs},
                           {"discarded_snapshot_ids", RogueSnapshotIds(table.dotted)},
                           {"metadata_location", location}}));
    ASSERT_FALSE(entry["discarded_snapshot_ids"].empty());
    EXPECT_TRUE(entry["discarded_snapshot_ids"][0].is_number_integer());
    // The replica's copy is the owner's: same file, so the same uuid, snapshots, refs, logs
    // and properties.
    EXPECT_EQ(MetadataLocation(kEu, table.ns, table.name), location);
    EXPECT_EQ(Metadata(kEu, table.ns, table.name), Metadata(kUs, table.ns, table.name));
    json state = TableState(table.dotted)["regions"][kEu];
    EXPECT_EQ(state["diverged"], false);
    EXPECT_EQ(state["pending_commits"], 0);
    EXPECT_EQ(state["current_snapshot_id"],
              TableState(table.dotted)["regions"][kUs]["current_snapshot_id"]);
  }
  json replica = Metadata(kEu, "sales", "orders");
  EXPECT_EQ(replica["current-snapshot-id"], owner_snapshot);
  EXPECT_FALSE(RewindSnapshotIds(replica).count(rogue[0].get<int64_t>()));
  // The owner is left as it was.
  EXPECT_EQ(MetadataLocation(kUs, "sales", "orders"), owner_location);
  EXPECT_EQ(Metadata(kUs, "sales", "orders"), owner_before);
}

TEST_F(LabRewindTest, ReplicationFastForwardsARewoundReplica) {
  Diverge();
  ASSERT_EQ(RewindOk(kEu)["rewound"].size(), 4u);
  lab_->PauseReplication();
  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  auto appended = Append(kUs, "sales", "orders");
  ASSERT_EQ(appended->status, 200);
  const json committed = json::parse(appended->body);
  // Behind by two of the owner's commits, not diverged: the rewound history is the owner's.
  json state = TableState("sales.orders")["regions"][kEu];
  EXPECT_EQ(state["diverged"], false);
  EXPECT_EQ(state["pending_commits"], 2);

  lab_->ResumeReplication();
  ASSERT_TRUE(Eventually(
      [&] { return MetadataLocation(kEu, "sales", "orders") == committed["metadata-location"]; }));
  EXPECT_EQ(Metadata(kEu, "sales", "orders"), committed["metadata"]);
  EXPECT_EQ(TableState("sales.orders")["regions"][kEu]["diverged"], false);
}

TEST_F(LabRewindTest, DiscardsOnlyTheReplicasOwnSnapshotsWhenTheOwnerHasExpiredSharedOnes) {
  // 100 snapshots, as many as the appends keep: from here on each commit expires the oldest.
  for (int i = 0; i < 100; ++i) ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  ASSERT_TRUE(Eventually([&] { return Replicated("sales", "orders"); }));
  ASSERT_EQ(Metadata(kEu, "sales", "orders")["snapshots"].size(), 100u);
  Diverge();
  for (int i = 0; i < 5; ++i) ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  // The replica still has shared snapshots the owner has expired since: not the replica's own.
  const json rogue = RogueSnapshotIds("sales.orders");
  ASSERT_EQ(rogue.size(), 1u);
  std::set<int64_t> only_in_replica;
  const std::set<int64_t> owner = RewindSnapshotIds(Metadata(kUs, "sales", "orders"));
  for (int64_t id : RewindSnapshotIds(Metadata(kEu, "sales", "orders"))) {
    if (!owner.count(id)) only_in_replica.insert(id);
  }
  ASSERT_EQ(only_in_replica.size(), 5u);  // the rogue commit's and 4 expired in the owner

  json answer = RewindOk(kEu, R"({"table":"sales.orders"})");
  ASSERT_EQ(answer["rewound"].size(), 1u) << answer.dump(2);
  EXPECT_EQ(answer["rewound"][0]["discarded_snapshot_ids"], rogue);
  EXPECT_EQ(Metadata(kEu, "sales", "orders"), Metadata(kUs, "sales", "orders"));
}

TEST_F(LabRewindTest, ATableFilterRewindsThatTableOnly) {
  Diverge();
  json answer = RewindOk(kEu, R"({"table":"sales.orders"})");
  ASSERT_EQ(answer["rewound"].size(), 1u) << answer.dump(2);
  EXPECT_EQ(answer["rewound"][0]["table"], "sales.orders");
  EXPECT_EQ(answer["unchanged"], 0);
  EXPECT_FALSE(Diverged("sales.orders"));
  EXPECT_TRUE(Diverged("sales.customers"));
  EXPECT_TRUE(Diverged("clickstream.events"));
  EXPECT_TRUE(Diverged("sales.archive.orders_2024"));

  // A table that has not diverged is counted as unchanged and left alone.
  const std::string location = MetadataLocation(kEu, "sales", "orders");
  answer = RewindOk(kEu, R"({"table":"sales.orders"})");
  EXPECT_EQ(answer, (json{{"region", kEu}, {"rewound", json::array()}, {"unchanged", 1}}));
  EXPECT_EQ(MetadataLocation(kEu, "sales", "orders"), location);

  // Nested namespaces are spelled with dots.
  answer = RewindOk(kEu, R"({"table":"sales.archive.orders_2024"})");
  EXPECT_EQ(TableNames(answer["rewound"]), std::set<std::string>{"sales.archive.orders_2024"});
  EXPECT_FALSE(Diverged("sales.archive.orders_2024"));

  // Without a filter: the two still diverged, and the two rewound already as unchanged.
  answer = RewindOk(kEu);
  EXPECT_EQ(TableNames(answer["rewound"]),
            (std::set<std::string>{"sales.customers", "clickstream.events"}));
  EXPECT_EQ(answer["unchanged"], 2);
}

TEST_F(LabRewindTest, LeavesAReplicaThatIsOnlyBehindToReplication) {
  lab_->PauseReplication();
  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  const std::string behind = MetadataLocation(kEu, "sales", "orders");
  ASSERT_EQ(TableState("sales.orders")["regions"][kEu]["pending_commits"], 1);

  EXPECT_EQ(RewindOk(kEu), (json{{"region", kEu}, {"rewound", json::array()}, {"unchanged", 4}}));
  EXPECT_EQ(MetadataLocation(kEu, "sales", "orders"), behind);
  EXPECT_EQ(TableState("sales.orders")["regions"][kEu]["pending_commits"], 1);
}

TEST_F(LabRewindTest, NothingToRewindInAFreshLab) {
  json result;
  auto status = lab_->RewindRegion(kEu, std::nullopt, &result);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(result, (json{{"region", kEu}, {"rewound", json::array()}, {"unchanged", 4}}));
  // us-east-1 holds eu-central-1's two tables as a replica.
  status = lab_->RewindRegion(kUs, std::nullopt, &result);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(result, (json{{"region", kUs}, {"rewound", json::array()}, {"unchanged", 2}}));
  // Over HTTP, with an empty body (tests/e2e/lab_docs_commands_test.cpp sends none at all).
  EXPECT_EQ(RewindOk(kEu, ""),
            (json{{"region", kEu}, {"rewound", json::array()}, {"unchanged", 4}}));
}

TEST_F(LabRewindTest, ErrorsSayWhatWasWrongAndChangeNothing) {
  Diverge();
  using Answer = std::pair<int, std::string>;
  EXPECT_EQ(RewindError("mars-1", ""), (Answer{404, "unknown region: mars-1"}));
  EXPECT_EQ(RewindError(kEu, R"({"table":"eu.orders"})"),
            (Answer{400, "eu-central-1 owns eu.orders; only a replica can be rewound"}));
  EXPECT_EQ(RewindError(kUs, R"({"table":"sales.orders"})"),
            (Answer{400, "us-east-1 owns sales.orders; only a replica can be rewound"}));
  EXPECT_EQ(RewindError(kEu, R"({"table":"sales.nope"})"),
            (Answer{400, "unknown table: sales.nope"}));
  EXPECT_EQ(RewindError(kEu, R"({"table":"orders"})").first, 400);
  EXPECT_EQ(RewindError(kEu, R"({"table":7})").first, 400);
  // A misspelt field must not rewind every table.
  EXPECT_EQ(RewindError(kEu, R"({"tabel":"sales.orders"})").first, 400);
  EXPECT_EQ(RewindError(kEu, R"(["sales.orders"])"),
            (Answer{400, "the body must be a JSON object"}));

  // In-process, the same errors as LabStatus values.
  json result = "untouched";
  auto status = lab_->RewindRegion(kEu, "eu.customers", &result);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "eu-central-1 owns eu.customers; only a replica can be rewound");
  EXPECT_EQ(result, "untouched");
  EXPECT_EQ(lab_->RewindRegion("mars-1", std::nullopt, &result).message(),
            "unknown region: mars-1");

  for (const auto& table : UsTables()) EXPECT_TRUE(Diverged(table.dotted)) << table.dotted;
}

TEST_F(LabRewindTest, AStoppedRegionCannotBeRewoundNorRewoundFromAStoppedOwner) {
  Diverge();
  ASSERT_TRUE(lab_->StopRegion(kEu).ok());
  EXPECT_EQ(RewindError(kEu, ""),
            (std::pair<int, std::string>{400, "region eu-central-1 is stopped"}));
  ASSERT_TRUE(lab_->StartRegion(kEu).ok());
  for (const auto& table : UsTables()) EXPECT_TRUE(Diverged(table.dotted)) << table.dotted;

  // Replication copies nothing from a stopped region, and neither does a rewind.
  ASSERT_TRUE(lab_->StopRegion(kUs).ok());
  auto [code, message] = RewindError(kEu, R"({"table":"sales.orders"})");
  EXPECT_EQ(code, 400);
  EXPECT_EQ(message,
            "the owner of sales.orders, us-east-1, is stopped; start it to rewind eu-central-1 "
            "from it");
  for (const auto& table : UsTables()) EXPECT_TRUE(Diverged(table.dotted)) << table.dotted;

  ASSERT_TRUE(lab_->StartRegion(kUs).ok());
  EXPECT_EQ(RewindOk(kEu)["rewound"].size(), 4u);
}

TEST_F(LabRewindTest, ARegionWithPausedWritesCanBeRewound) {
  Diverge();
  ASSERT_TRUE(lab_->SetWritesPaused(kEu, true).ok());
  // A rewind is replication, not a write: the fence does not stop it.
  json answer = RewindOk(kEu);
  EXPECT_EQ(answer["rewound"].size(), 4u) << answer.dump(2);
  for (const auto& table : UsTables()) {
    EXPECT_EQ(Metadata(kEu, table.ns, table.name), Metadata(kUs, table.ns, table.name));
    EXPECT_FALSE(Diverged(table.dotted)) << table.dotted;
  }
  EXPECT_EQ(lab_->State()["regions"][kEu]["writes_paused"], true);
}

}  // namespace
}  // namespace icewarden::lab::testing
