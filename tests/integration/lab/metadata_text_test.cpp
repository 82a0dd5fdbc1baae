// The property-only commit path (ownership claims): its new metadata file, spliced from the old
// file's text, must be byte for byte what the general ApplyCommit writes, with the same verdicts;
// and the catalog must answer loads and further commits of a table whose cached file is text only.
// A difference would hand clients metadata another catalog would never have written.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "examples/lab/metadata_text.h"
#include "examples/lab/table_metadata.h"
#include "examples/lab/workload.h"
#include "tests/integration/lab/lab_fixture.h"

namespace icewarden::lab {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1'700'000'000'000;

// A table with history: two snapshots (the first no longer referenced after a tag is dropped),
// properties with characters dump() escapes, and a metadata-log near its limit.
json RichMetadata() {
  json create = {
      {"name", "orders"},
      {"schema",
       {{"type", "struct"},
        {"fields", {{{"id", 1}, {"name", "id"}, {"type", "long"}, {"required", true}}}}}},
      {"properties", {{"comment", "quote \" backslash \\ tab \t é"}, {"a", "1"}}}};
  auto created = NewTableMetadata(create, "s3://lab/sales/orders", kNow);
  EXPECT_TRUE(created.error.empty()) << created.error;
  json metadata = created.metadata;
  std::string location = "s3://lab/sales/orders/metadata/00000-x.metadata.json";
  for (int i = 0; i < 103; ++i) {
    json commit = {
        {"requirements", json::array()},
        {"updates", {{{"action", "set-properties"}, {"updates", {{"n", std::to_string(i)}}}}}}};
    if (i < 2) commit = AppendCommit(metadata, "test", kNow + i);
    auto applied = ApplyCommit(metadata, location, commit, kNow + i);
    EXPECT_EQ(applied.verdict, CommitVerdict::kApplied) << applied.message;
    metadata = applied.metadata;
    location = NextMetadataLocation(metadata, location);
  }
  return metadata;
}

json PropertyCommit(const json& metadata, json updates, json removals = json::array()) {
  json commit = {
      {"requirements", {{{"type", "assert-table-uuid"}, {"uuid", metadata["table-uuid"]}}}},
      {"updates", json::array()}};
  if (!updates.is_null())
    commit["updates"].push_back({{"action", "set-properties"}, {"updates", updates}});
  if (!removals.empty())
    commit["updates"].push_back({{"action", "remove-properties"}, {"removals", removals}});
  return commit;
}

// Checks the spliced text (from the text's members) and DumpWithChanges (from the tree) against
// ApplyCommit's dump, or the verdicts when nothing is applied.
void ExpectSameAsApplyCommit(const json& metadata, const json& commit) {
  const std::string location = "s3://lab/sales/orders/metadata/00103-y.metadata.json";
  auto full = ApplyCommit(metadata, location, commit, kNow + 500);
  std::string text = metadata.dump();
  auto members = TopLevelMembers(text);
  ASSERT_TRUE(members.has_value());
  json small = ParseSmallMembers(*members);
  EXPECT_FALSE(small.contains("snapshots"));
  auto spliced = ApplyPropertyCommit(small, location, commit, kNow + 500);
  auto from_tree = ApplyPropertyCommit(metadata, location, commit, kNow + 500);
  EXPECT_EQ(spliced.outcome.verdict, full.verdict);
  EXPECT_EQ(spliced.outcome.message, full.message);
  EXPECT_EQ(from_tree.outcome.verdict, full.verdict);
  if (full.verdict != CommitVerdict::kApplied) return;
  EXPECT_EQ(SpliceMembers(*members, spliced.changes), full.metadata.dump());
  EXPECT_EQ(DumpWithChanges(metadata, from_tree.changes), full.metadata.dump());
  EXPECT_EQ(small["location"], full.metadata["location"]);  // where the next file goes
}

TEST(LabMetadataText, PropertyCommitWritesWhatApplyCommitWrites) {
  json metadata = RichMetadata();
  ASSERT_EQ(metadata["metadata-log"].size(), 100u);  // the next commit drops the oldest entry
  ExpectSameAsApplyCommit(metadata, PropertyCommit(metadata, {{"icewarden.owner", "eu-central-1"},
                                                              {"icewarden.epoch", "7"}}));
  ExpectSameAsApplyCommit(metadata, PropertyCommit(metadata, {{"comment", "new \"one\""}}, {"a"}));
  ExpectSameAsApplyCommit(metadata, PropertyCommit(metadata, nullptr, {"a", "missing"}));
  // Verdicts: unchanged, conflict, malformed.
  ExpectSameAsApplyCommit(metadata, PropertyCommit(metadata, nullptr));
  json foreign = PropertyCommit(metadata, {{"x", "1"}});
  foreign["requirements"][0]["uuid"] = "00000000-0000-4000-8000-000000000000";
  ExpectSameAsApplyCommit(metadata, foreign);
  ExpectSameAsApplyCommit(metadata, PropertyCommit(metadata, {{"x", 1}}));
}

TEST(LabMetadataText, MembersOnlyOfCompactText) {
  json metadata = RichMetadata();
  // Kept: the members' values are views into the text (a temporary here dangled: the test
  // failed or passed depending on what reused the freed buffer).
  const std::string text = metadata.dump();
  auto members = TopLevelMembers(text);
  ASSERT_TRUE(members.has_value());
  json rebuilt = json::object();
  for (const auto& member : *members) rebuilt[member.key] = json::parse(member.value);
  EXPECT_EQ(rebuilt, metadata);
  EXPECT_FALSE(TopLevelMembers(metadata.dump(2)).has_value());  // indented: parsed whole instead
  EXPECT_FALSE(TopLevelMembers("{\"a\":1").has_value());
  EXPECT_FALSE(TopLevelMembers("{\"a\":{}").has_value());  // the value took the closing brace
  // A brace inside a string does not end the value.
  auto nested = TopLevelMembers("{\"a\":[1,{\"b\":\"}\"}],\"c\":2}");
  ASSERT_TRUE(nested.has_value());
  ASSERT_EQ(nested->size(), 2u);
  EXPECT_EQ((*nested)[0].value, "[1,{\"b\":\"}\"}]");
  EXPECT_EQ((*nested)[1].value, "2");
  EXPECT_FALSE(TopLevelMembers("[1]").has_value());
  EXPECT_TRUE(TopLevelMembers("{}").has_value());
}

TEST(LabMetadataText, SnapshotsReferencedFromMembersAsFromTheTree) {
  json metadata = RichMetadata();
  std::string text = metadata.dump();
  // The first snapshot is no longer main's.
  EXPECT_FALSE(AllSnapshotsReferencedIn(*TopLevelMembers(text)));
  EXPECT_FALSE(AllSnapshotsReferenced(metadata));
  metadata["refs"]["old"] = {{"type", "tag"},
                             {"snapshot-id", metadata["snapshots"][0]["snapshot-id"]}};
  text = metadata.dump();
  EXPECT_TRUE(AllSnapshotsReferencedIn(*TopLevelMembers(text)));
  EXPECT_TRUE(AllSnapshotsReferenced(metadata));
  metadata["snapshots"] = json::array();
  metadata["refs"] = json::object();
  text = metadata.dump();
  EXPECT_TRUE(AllSnapshotsReferencedIn(*TopLevelMembers(text)));
}

using testing::kUs;
using LabTextCacheTest = testing::LabTest;

// The catalog after a property-only commit keeps the new file as text only: a load from another
// connection, a data commit on top (which needs the parsed tree) and a refs load must all see it.
TEST_F(LabTextCacheTest, ServesATableCommittedAsTextFromOtherConnections) {
  const std::string path = TablePath("sales", "orders");
  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  json loaded = GetJson(kUs, path + "?snapshots=refs");
  ASSERT_TRUE(loaded.is_object());
  json claim = PropertyCommit(loaded["metadata"], {{"icewarden.owner", "eu-central-1"}});
  auto claimed = Client(kUs)->Post(path, claim.dump(), "application/json");
  ASSERT_TRUE(claimed);
  ASSERT_EQ(claimed->status, 200) << claimed->body;
  json committed = json::parse(claimed->body);

  for (const char* mode : {"?snapshots=refs", "?snapshots=all", ""}) {
    auto other = Client(kUs)->Get(path + mode);  // a new connection each time
    ASSERT_TRUE(other);
    ASSERT_EQ(other->status, 200);
    json body = json::parse(other->body);
    EXPECT_EQ(body["metadata-location"], committed["metadata-location"]) << mode;
    EXPECT_EQ(body["metadata"], committed["metadata"]) << mode;
    EXPECT_EQ(body["metadata"]["properties"]["icewarden.owner"], "eu-central-1");
  }
  // A data commit on top of the text-only file, then a refs load that must leave out the
  // snapshot no ref points to any more.
  ASSERT_EQ(Append(kUs, "sales", "orders")->status, 200);
  json all = Metadata(kUs, "sales", "orders");
  ASSERT_EQ(all["snapshots"].size(), 2u);
  EXPECT_EQ(all["properties"]["icewarden.owner"], "eu-central-1");
  json refs = GetJson(kUs, path + "?snapshots=refs");
  EXPECT_EQ(refs["metadata"]["snapshots"].size(), 1u);
  json second = PropertyCommit(all, {{"icewarden.epoch", "2"}});
  auto again = Client(kUs)->Post(path, second.dump(), "application/json");
  ASSERT_TRUE(again);
  ASSERT_EQ(again->status, 200) << again->body;
  json refs_after = GetJson(kUs, path + "?snapshots=refs");
  EXPECT_EQ(refs_after["metadata"]["snapshots"].size(), 1u);
  EXPECT_EQ(refs_after["metadata"]["properties"]["icewarden.epoch"], "2");
  EXPECT_EQ(Metadata(kUs, "sales", "orders")["snapshots"].size(), 2u);
}

}  // namespace
}  // namespace icewarden::lab
