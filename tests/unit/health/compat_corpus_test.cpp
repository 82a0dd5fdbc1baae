// Feeds every payload in tests/compat/corpus (bodies recorded or used as fixtures by real
// Iceberg REST catalog implementations; see tests/compat/corpus/README.md) to the parser
// icewarden uses for it, and checks what a user relies on: the body parses, 64-bit
// snapshot ids survive exactly, an empty table's current snapshot (null, missing or -1)
// reads as none, and fields icewarden does not know are ignored.
//
// The file name's prefix up to "__" says what the body is: config, namespaces, tables,
// load (LoadTableResult), commit (CommitTableResponse), metadata (a bare TableMetadata,
// which icewarden only ever sees inside a LoadTableResult, so it is wrapped in one), error
// (IcebergErrorResponse), oauth_error (RFC 6749 {"error", "error_description"}) and token
// (OAuth token response).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "health/catalog_json.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Payloads a parser does not accept, by path under the corpus folder, with why. A listed
// payload must still fail, so fixing the parser makes this test ask for the entry's removal.
const std::map<std::string, std::string>& ExpectedFailures() {
  static const std::map<std::string, std::string> kFailures = {};
  return kFailures;
}

fs::path CorpusDir() { return fs::path(SourceDir()) / "tests" / "compat" / "corpus"; }

struct Payload {
  std::string relative;  // "iceberg-rust/config__catalog_rs_create_config_mock.json"
  std::string kind;      // "config"
};

// gtest prints a failing parameter; the path names the payload.
void PrintTo(const Payload& p, std::ostream* os) { *os << p.relative; }

std::vector<Payload> PayloadsOfKind(const std::string& kind) {
  std::vector<Payload> out;
  if (!fs::is_directory(CorpusDir())) return out;
  for (const auto& entry : fs::recursive_directory_iterator(CorpusDir())) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    const std::string name = entry.path().filename().string();
    const auto sep = name.find("__");
    if (sep == std::string::npos || name.substr(0, sep) != kind) continue;
    out.push_back({fs::relative(entry.path(), CorpusDir()).generic_string(), kind});
  }
  std::sort(out.begin(), out.end(),
            [](const Payload& a, const Payload& b) { return a.relative < b.relative; });
  return out;
}

std::string TestName(const ::testing::TestParamInfo<Payload>& info) {
  std::string name = info.param.relative;
  name = name.substr(0, name.size() - std::string(".json").size());
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class CompatCorpus : public ::testing::TestWithParam<Payload> {
 protected:
  void SetUp() override {
    body_ = ReadBytes(CorpusDir() / GetParam().relative);
    ASSERT_FALSE(body_.empty()) << GetParam().relative;
    // The reference reading: nlohmann's own parse of the raw text, integers as integers.
    raw_ = json::parse(body_, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(raw_.is_discarded()) << GetParam().relative << " is not JSON";
  }

  // True when the payload is listed as a known gap; then `parsed_ok` must be false.
  bool ExpectedToFail(bool parsed_ok, const std::string& error) {
    auto it = ExpectedFailures().find(GetParam().relative);
    if (it == ExpectedFailures().end()) return false;
    EXPECT_FALSE(parsed_ok) << GetParam().relative
                            << " parses now; remove it from ExpectedFailures() (" << it->second
                            << ")";
    if (!parsed_ok) std::cout << "[ expected failure ] " << error << "\n";
    return true;
  }

  std::string body_;
  json raw_;
};

// ---- Table results (load, commit, bare metadata) ----------------------------------------

std::optional<std::int64_t> RawCurrentSnapshot(const json& m) {
  auto it = m.find("current-snapshot-id");
  if (it == m.end() || it->is_null()) return std::nullopt;
  const auto id = it->get<std::int64_t>();
  if (id == -1) return std::nullopt;
  return id;
}

void ExpectTableMatchesRaw(const TableSnapshotView& t, const json& result) {
  const json& m = result.at("metadata");
  EXPECT_EQ(t.format_version, m.at("format-version").get<int>());
  EXPECT_EQ(t.table_uuid, m.at("table-uuid").get<std::string>());
  if (result.contains("metadata-location") && !result["metadata-location"].is_null()) {
    EXPECT_EQ(t.metadata_location, result["metadata-location"].get<std::string>());
  }
  EXPECT_EQ(t.current_snapshot_id, RawCurrentSnapshot(m));

  const json snapshots = m.value("snapshots", json::array());
  ASSERT_EQ(t.snapshots.size(), snapshots.size());
  for (std::size_t i = 0; i < snapshots.size(); ++i) {
    EXPECT_EQ(t.snapshots[i].snapshot_id, snapshots[i].at("snapshot-id").get<std::int64_t>());
    if (snapshots[i].contains("parent-snapshot-id") &&
        !snapshots[i]["parent-snapshot-id"].is_null()) {
      EXPECT_EQ(t.snapshots[i].parent_snapshot_id,
                snapshots[i]["parent-snapshot-id"].get<std::int64_t>());
    }
    EXPECT_EQ(t.snapshots[i].timestamp_ms, snapshots[i].at("timestamp-ms").get<std::int64_t>());
  }
  const json refs = m.value("refs", json::object());
  ASSERT_EQ(t.refs.size(), refs.size());
  for (const auto& [name, ref] : refs.items()) {
    ASSERT_TRUE(t.refs.count(name)) << name;
    EXPECT_EQ(t.refs.at(name), ref.at("snapshot-id").get<std::int64_t>()) << name;
  }
  EXPECT_EQ(t.snapshot_log.size(), m.value("snapshot-log", json::array()).size());
  EXPECT_EQ(t.metadata_log.size(), m.value("metadata-log", json::array()).size());
}

class CompatTableResult : public CompatCorpus {
 protected:
  void Check(std::string_view what) {
    const bool bare = GetParam().kind == "metadata";
    // A bare metadata file goes in unchanged, as the value of "metadata".
    const std::string body = bare ? "{\"metadata\":" + body_ + "}" : body_;
    const json result = bare ? json{{"metadata", raw_}} : raw_;
    auto r = ParseTableResult(body, what);
    if (ExpectedToFail(r.ok(), r.ok() ? "" : r.status().ToString())) return;
    ASSERT_TRUE(r.ok()) << GetParam().relative << ": " << r.status().ToString();
    ExpectTableMatchesRaw(r.value(), result);
  }
};

class CompatLoad : public CompatTableResult {};
class CompatCommit : public CompatTableResult {};
class CompatMetadata : public CompatTableResult {};

TEST_P(CompatLoad, ParsesWithExactSnapshotIds) { Check("LoadTableResult"); }
TEST_P(CompatCommit, ParsesWithExactSnapshotIds) { Check("CommitTableResponse"); }
TEST_P(CompatMetadata, ParsesWithExactSnapshotIds) { Check("LoadTableResult"); }

INSTANTIATE_TEST_SUITE_P(CompatCorpus, CompatLoad, ::testing::ValuesIn(PayloadsOfKind("load")),
                         TestName);
INSTANTIATE_TEST_SUITE_P(CompatCorpus, CompatCommit, ::testing::ValuesIn(PayloadsOfKind("commit")),
                         TestName);
INSTANTIATE_TEST_SUITE_P(CompatCorpus, CompatMetadata,
                         ::testing::ValuesIn(PayloadsOfKind("metadata")), TestName);

// Format-1 metadata carries the old single `schema` and often the newer `schemas` beside
// it; at least one such payload must be in the corpus and must parse.
TEST(CompatCorpusCoverage, FormatOneWithSchemaAndSchemasIsAccepted) {
  int seen = 0;
  for (const std::string kind : {"load", "metadata"}) {
    for (const Payload& p : PayloadsOfKind(kind)) {
      const std::string bytes = ReadBytes(CorpusDir() / p.relative);
      json j = json::parse(bytes);
      const bool bare = kind == "metadata";
      const json& m = bare ? j : j.at("metadata");
      if (m.value("format-version", 0) != 1 || !m.contains("schema") || !m.contains("schemas"))
        continue;
      ++seen;
      auto r = ParseTableResult(bare ? "{\"metadata\":" + bytes + "}" : bytes, "LoadTableResult");
      EXPECT_TRUE(r.ok()) << p.relative << ": " << r.status().ToString();
    }
  }
  EXPECT_GT(seen, 0) << "no format-1 payload with both schema and schemas in the corpus";
}

// The corpus must cover every kind and the table states users hit: an empty table, one
// with a snapshot id past 2^53 (where a double loses digits), and all three formats.
TEST(CompatCorpusCoverage, CoversEveryKindAndTableState) {
  for (const std::string kind : {"config", "namespaces", "tables", "load", "commit", "metadata",
                                 "error", "oauth_error", "token"}) {
    EXPECT_FALSE(PayloadsOfKind(kind).empty()) << kind;
  }
  bool empty_table = false, big_id = false;
  std::map<int, int> formats;
  for (const std::string kind : {"load", "commit", "metadata"}) {
    for (const Payload& p : PayloadsOfKind(kind)) {
      json j = json::parse(ReadBytes(CorpusDir() / p.relative));
      const json& m = kind == "metadata" ? j : j.at("metadata");
      ++formats[m.value("format-version", 0)];
      if (!RawCurrentSnapshot(m)) empty_table = true;
      for (const auto& s : m.value("snapshots", json::array())) {
        if (s.at("snapshot-id").get<std::int64_t>() > (std::int64_t{1} << 53)) big_id = true;
      }
    }
  }
  EXPECT_TRUE(empty_table);
  EXPECT_TRUE(big_id);
  for (int v : {1, 2, 3}) EXPECT_GT(formats[v], 0) << "format-version " << v;
}

// ---- Config, lists, errors, tokens -------------------------------------------------------

class CompatConfig : public CompatCorpus {};

TEST_P(CompatConfig, Parses) {
  auto r = ParseCatalogConfig(body_, {});
  if (ExpectedToFail(r.ok(), r.ok() ? "" : r.status().ToString())) return;
  ASSERT_TRUE(r.ok()) << GetParam().relative << ": " << r.status().ToString();
  // Overrides win over defaults; null values are absent ones.
  std::map<std::string, std::string> expected;
  for (const char* layer : {"defaults", "overrides"}) {
    const json values = raw_.value(layer, json::object());
    for (const auto& [k, v] : values.items()) {
      if (!v.is_null()) expected[k] = v.get<std::string>();
    }
  }
  EXPECT_EQ(r.value().properties, expected);
  const json endpoints = raw_.value("endpoints", json::array());
  if (endpoints.empty()) {
    EXPECT_FALSE(r.value().endpoints.has_value());
  } else {
    ASSERT_TRUE(r.value().endpoints.has_value());
    EXPECT_EQ(*r.value().endpoints, endpoints.get<std::vector<std::string>>());
  }
}

INSTANTIATE_TEST_SUITE_P(CompatCorpus, CompatConfig, ::testing::ValuesIn(PayloadsOfKind("config")),
                         TestName);

std::optional<std::string> RawPageToken(const json& j) {
  auto it = j.find("next-page-token");
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<std::string>();
}

class CompatNamespaces : public CompatCorpus {};

TEST_P(CompatNamespaces, Parses) {
  auto r = ParseListNamespacesResponse(body_);
  if (ExpectedToFail(r.ok(), r.ok() ? "" : r.status().ToString())) return;
  ASSERT_TRUE(r.ok()) << GetParam().relative << ": " << r.status().ToString();
  std::vector<Namespace> expected;
  for (const auto& ns : raw_.value("namespaces", json::array()))
    expected.push_back(ns.get<Namespace>());
  EXPECT_EQ(r.value().namespaces, expected);
  EXPECT_EQ(r.value().next_page_token, RawPageToken(raw_));
}

INSTANTIATE_TEST_SUITE_P(CompatCorpus, CompatNamespaces,
                         ::testing::ValuesIn(PayloadsOfKind("namespaces")), TestName);

class CompatTables : public CompatCorpus {};

TEST_P(CompatTables, Parses) {
  auto r = ParseListTablesResponse(body_);
  if (ExpectedToFail(r.ok(), r.ok() ? "" : r.status().ToString())) return;
  ASSERT_TRUE(r.ok()) << GetParam().relative << ": " << r.status().ToString();
  const json identifiers = raw_.value("identifiers", json::array());
  ASSERT_EQ(r.value().identifiers.size(), identifiers.size());
  for (std::size_t i = 0; i < identifiers.size(); ++i) {
    EXPECT_EQ(r.value().identifiers[i].namespace_levels,
              identifiers[i].at("namespace").get<Namespace>());
    EXPECT_EQ(r.value().identifiers[i].name, identifiers[i].at("name").get<std::string>());
  }
  EXPECT_EQ(r.value().next_page_token, RawPageToken(raw_));
}

INSTANTIATE_TEST_SUITE_P(CompatCorpus, CompatTables, ::testing::ValuesIn(PayloadsOfKind("tables")),
                         TestName);

class CompatError : public CompatCorpus {};

TEST_P(CompatError, IsRecognisedWithItsMessage) {
  auto e = ParseIcebergError(body_);
  if (ExpectedToFail(e.has_value(), "ParseIcebergError returned nullopt")) return;
  ASSERT_TRUE(e.has_value()) << GetParam().relative << " not recognised as an error";
  const json& raw = raw_.at("error");
  EXPECT_EQ(e->message, raw.at("message").get<std::string>());
  EXPECT_FALSE(e->message.empty());
  EXPECT_EQ(e->type, raw.value("type", std::string()));
  EXPECT_EQ(e->code, raw.value("code", 0));
  EXPECT_FALSE(ParseOAuthError(body_).has_value()) << "an IcebergError read as an OAuth error";
}

INSTANTIATE_TEST_SUITE_P(CompatCorpus, CompatError, ::testing::ValuesIn(PayloadsOfKind("error")),
                         TestName);

class CompatOAuthError : public CompatCorpus {};

TEST_P(CompatOAuthError, IsRecognisedWithItsDescription) {
  auto e = ParseOAuthError(body_);
  if (ExpectedToFail(e.has_value(), "ParseOAuthError returned nullopt")) return;
  ASSERT_TRUE(e.has_value()) << GetParam().relative << " not recognised as an OAuth error";
  std::string expected = raw_.at("error").get<std::string>();
  if (raw_.contains("error_description") && raw_["error_description"].is_string()) {
    expected += ": " + raw_["error_description"].get<std::string>();
  }
  EXPECT_EQ(*e, expected);
}

// A gateway or identity provider in front of a catalog answers with an OAuth error; the
// catalog client reads every error body with ParseIcebergError first (StatusForCode), so
// one that claims an OAuth body yields a detail with no message and the reason is lost.
// Known gaps, per payload, with the reason (none since ParseIcebergError requires an
// ErrorModel object: it used to take {"error": "<string>"} for an empty IcebergError).
const std::map<std::string, std::string>& OAuthErrorsTakenForIcebergErrors() {
  static const std::map<std::string, std::string> kGaps = {};
  return kGaps;
}

TEST_P(CompatOAuthError, IsNotTakenForAnIcebergError) {
  auto e = ParseIcebergError(body_);
  auto gap = OAuthErrorsTakenForIcebergErrors().find(GetParam().relative);
  if (gap != OAuthErrorsTakenForIcebergErrors().end()) {
    EXPECT_TRUE(e.has_value()) << GetParam().relative
                               << " is no longer taken for an IcebergError; remove it from "
                                  "OAuthErrorsTakenForIcebergErrors()";
    if (e) std::cout << "[ expected failure ] " << gap->second << "\n";
    return;
  }
  EXPECT_FALSE(e.has_value()) << GetParam().relative << " read as IcebergError \"" << e->type
                              << ": " << e->message << "\"";
}

INSTANTIATE_TEST_SUITE_P(CompatCorpus, CompatOAuthError,
                         ::testing::ValuesIn(PayloadsOfKind("oauth_error")), TestName);

class CompatToken : public CompatCorpus {};

TEST_P(CompatToken, Parses) {
  auto r = ParseOAuthTokenResponse(body_);
  if (ExpectedToFail(r.ok(), r.ok() ? "" : r.status().ToString())) return;
  ASSERT_TRUE(r.ok()) << GetParam().relative << ": " << r.status().ToString();
  EXPECT_EQ(r.value().access_token, raw_.at("access_token").get<std::string>());
  if (raw_.contains("expires_in")) {
    ASSERT_TRUE(r.value().expires_in.has_value());
    EXPECT_EQ(r.value().expires_in->count(), raw_["expires_in"].get<std::int64_t>());
  } else {
    EXPECT_FALSE(r.value().expires_in.has_value());
  }
  // A token response is not an error of either shape.
  EXPECT_FALSE(ParseOAuthError(body_).has_value());
}

INSTANTIATE_TEST_SUITE_P(CompatCorpus, CompatToken, ::testing::ValuesIn(PayloadsOfKind("token")),
                         TestName);

}  // namespace
}  // namespace icewarden::testing
