// ParseTableResult's rules on bodies the corpus does not hold: what is malformed (and says so,
// as an answer from a live catalog), what is tolerated. The corpus (compat_corpus_test.cpp)
// covers what real catalogs send.
#include <gtest/gtest.h>

#include <string>

#include "health/catalog_json.h"

namespace icewarden {
namespace {

std::string Body(const std::string& metadata_fields) {
  return R"({"metadata-location":"s3://b/t/metadata/00001.json","metadata":{"format-version":2,)"
         R"("table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1")" +
         (metadata_fields.empty() ? "" : "," + metadata_fields) + "}}";
}

void ExpectMalformed(const std::string& body, const std::string& why) {
  auto r = ParseTableResult(body, "LoadTableResult");
  ASSERT_FALSE(r.ok()) << body;
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().reply(), PeerReply::kUnparsed) << "an answer, so the catalog is alive";
  EXPECT_EQ(r.status().message(), "catalog returned a malformed LoadTableResult: " + why) << body;
}

TEST(TableResultJson, ReadsTheFieldsTheTransferAndLagNeed) {
  auto r = ParseTableResult(
      Body(R"("current-snapshot-id":9007199254740993,"last-sequence-number":4,)"
           R"("properties":{"icewarden.owner":"eu-central-1","icewarden.epoch":"7","gone":null},)"
           R"("snapshots":[{"snapshot-id":9007199254740993,"parent-snapshot-id":null,)"
           R"("timestamp-ms":1700000000000,"summary":{"operation":"append"}}],)"
           R"("refs":{"main":{"snapshot-id":9007199254740993,"type":"branch"}},)"
           R"("snapshot-log":[{"snapshot-id":9007199254740993,"timestamp-ms":1700000000000}],)"
           R"("metadata-log":[{"metadata-file":"s3://b/t/metadata/00000.json","timestamp-ms":1}],)"
           R"("some-future-field":{"x":[1,2,3]})"),
      "LoadTableResult");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->metadata_location, "s3://b/t/metadata/00001.json");
  EXPECT_EQ(r->table_uuid, "9c12d441-03fe-4693-9a96-a0705ddf69c1");
  EXPECT_EQ(r->format_version, 2);
  EXPECT_EQ(r->current_snapshot_id, 9007199254740993);  // past 2^53: no double on the way
  EXPECT_EQ(r->last_sequence_number, 4);
  EXPECT_EQ(r->properties.size(), 2u) << "a null property is an absent one";
  EXPECT_EQ(r->properties.at("icewarden.epoch"), "7");
  ASSERT_EQ(r->snapshots.size(), 1u);
  EXPECT_FALSE(r->snapshots[0].parent_snapshot_id.has_value());
  EXPECT_EQ(r->snapshots[0].operation, "append");
  EXPECT_EQ(r->refs.at("main"), 9007199254740993);
  ASSERT_EQ(r->snapshot_log.size(), 1u);
  ASSERT_EQ(r->metadata_log.size(), 1u);
  EXPECT_EQ(r->metadata_log[0].metadata_file, "s3://b/t/metadata/00000.json");
}

TEST(TableResultJson, MinusOneAndNullCurrentSnapshotMeanAnEmptyTable) {
  for (const char* v : {"-1", "null"}) {
    auto r = ParseTableResult(Body(std::string("\"current-snapshot-id\":") + v), "x");
    ASSERT_TRUE(r.ok()) << v << ": " << r.status().ToString();
    EXPECT_FALSE(r->current_snapshot_id.has_value()) << v;
  }
}

TEST(TableResultJson, MalformedBodiesSayWhatIsWrong) {
  ExpectMalformed("", "not JSON");
  ExpectMalformed(Body("").substr(0, 40), "not JSON");  // cut off mid-body
  ExpectMalformed(Body("") + " {}", "not JSON");        // trailing content
  ExpectMalformed("[1,2]", "not a JSON object");
  ExpectMalformed(R"({"metadata":null})", "missing \"metadata\"");
  ExpectMalformed(R"({"metadata":[]})", "\"metadata\" is not an object");
  ExpectMalformed(R"({"metadata":{"format-version":2}})", "missing \"table-uuid\"");
  ExpectMalformed(Body(R"("current-snapshot-id":1.5)"),
                  "\"current-snapshot-id\" is not an integer");
  ExpectMalformed(Body(R"("properties":{"a":1})"), "\"properties\" is not a string");
  ExpectMalformed(Body(R"("properties":[])"), "\"properties\" is not an object");
  ExpectMalformed(Body(R"("snapshots":[{"snapshot-id":1}])"), "missing \"timestamp-ms\"");
  ExpectMalformed(Body(R"("snapshots":[7])"), "a snapshot is not an object");
  ExpectMalformed(Body(R"("refs":{"main":{"type":"branch"}})"), "missing \"snapshot-id\"");
  ExpectMalformed(R"({"metadata-location":7,"metadata":{"format-version":2,"table-uuid":"u"}})",
                  "\"metadata-location\" is not a string");
}

TEST(TableResultJson, InvalidUtf8IsNotJson) {
  ExpectMalformed(Body("\"properties\":{\"a\":\"\xff\xfe\"}"), "not JSON");
}

}  // namespace
}  // namespace icewarden
