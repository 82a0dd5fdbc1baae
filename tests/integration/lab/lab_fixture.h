// LabTest: a two-region lab (us-east-1 owns by default, eu.* belongs to eu-central-1) running
// in-process on ephemeral ports with a 200 ms replication lag and the workload generator off,
// plus small helpers to talk to its catalogs with httplib::Client.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "examples/lab/lab.h"
#include "examples/lab/table_metadata.h"
#include "examples/lab/workload.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::lab::testing {

using nlohmann::json;

inline constexpr const char* kUs = "us-east-1";
inline constexpr const char* kEu = "eu-central-1";

// Polls `condition` every 20 ms until it holds or `deadline` passes; returns whether it held.
inline bool Eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds deadline = std::chrono::seconds(10)) {
  auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

// A CreateTableRequest (two columns) or a CreateViewRequest (over `sql`) named `name`.
inline json NewTableRequest(const std::string& name) {
  return {{"name", name},
          {"schema",
           {{"type", "struct"},
            {"fields", {{{"id", 1}, {"name", "id"}, {"type", "long"}, {"required", true}}}}}}};
}
inline json NewViewRequest(const std::string& name, const std::vector<std::string>& ns,
                           const std::string& sql) {
  return {{"name", name},
          {"schema",
           {{"type", "struct"},
            {"fields", {{{"id", 1}, {"name", "id"}, {"type", "long"}, {"required", true}}}}}},
          {"view-version",
           {{"version-id", 1},
            {"timestamp-ms", 1700000000000},
            {"schema-id", 0},
            {"summary", {{"engine-name", "tests"}}},
            {"representations", {{{"type", "sql"}, {"sql", sql}, {"dialect", "spark"}}}},
            {"default-namespace", ns}}},
          {"properties", {{"comment", "a lab view"}}}};
}

// The answer is the spec's error model with `code` and `type`.
inline void ExpectCatalogError(const httplib::Result& result, int code, const std::string& type) {
  ASSERT_TRUE(result) << "request failed: " << httplib::to_string(result.error());
  EXPECT_EQ(result->status, code) << result->body;
  json body = json::parse(result->body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << result->body;
  EXPECT_EQ(body["error"]["type"], type) << result->body;
  EXPECT_EQ(body["error"]["code"], code);
}

class LabTest : public ::testing::Test {
 protected:
  // Tests that need other options change options_ in their constructor.
  LabTest() {
    options_.data_dir = icewarden::testing::MakeTempDir("icewarden-lab");
    options_.regions = {{kUs}, {kEu}};
    options_.default_owner = kUs;
    options_.owner_rules = {{"eu[.].*", kEu}};
    options_.replication_lag_ms = 200;
    options_.workload_enabled = false;
  }

  void SetUp() override {
    lab_ = std::make_unique<Lab>(options_);
    auto status = lab_->Start();
    ASSERT_TRUE(status.ok()) << status.message();
  }

  void TearDown() override {
    lab_.reset();
    std::filesystem::remove_all(options_.data_dir);
  }

  std::unique_ptr<httplib::Client> Client(const std::string& region) {
    auto client = std::make_unique<httplib::Client>(lab_->region_url(region));
    client->set_connection_timeout(2);
    client->set_read_timeout(5);
    if (!bearer_.empty()) client->set_bearer_token_auth(bearer_);
    return client;
  }

  // GET a catalog path and parse the JSON body (null when the request failed or had no body).
  json GetJson(const std::string& region, const std::string& path, int* status = nullptr) {
    auto result = Client(region)->Get(path);
    if (status) *status = result ? result->status : -1;
    if (!result || result->body.empty()) return nullptr;
    return json::parse(result->body, nullptr, false);
  }

  httplib::Result PostJson(const std::string& region, const std::string& path, const json& body,
                           const httplib::Headers& headers = {}) {
    return Client(region)->Post(path, headers, body.dump(), "application/json");
  }

  static std::string TablePath(const std::string& ns, const std::string& table) {
    return "/v1/lab/namespaces/" + ns + "/tables/" + table;
  }

  // The table's current metadata in a region, straight from its catalog; null when absent.
  json Metadata(const std::string& region, const std::string& ns, const std::string& table) {
    json loaded = GetJson(region, TablePath(ns, table));
    return loaded.is_object() && loaded.contains("metadata") ? loaded["metadata"] : json();
  }

  std::string MetadataLocation(const std::string& region, const std::string& ns,
                               const std::string& table) {
    json loaded = GetJson(region, TablePath(ns, table));
    return loaded.is_object() && loaded.contains("metadata-location")
               ? loaded["metadata-location"].get<std::string>()
               : "";
  }

  // Appends one snapshot through the REST API the way a writer would; returns the response.
  httplib::Result Append(const std::string& region, const std::string& ns, const std::string& table,
                         const httplib::Headers& headers = {}) {
    json metadata = Metadata(region, ns, table);
    return PostJson(region, TablePath(ns, table), AppendCommit(metadata, "test", SystemNowMs()),
                    headers);
  }

  // The per-table entry of GET /lab/state for a dotted table name.
  json TableState(const std::string& dotted) {
    json state = lab_->State();
    for (const auto& table : state["tables"]) {
      if (table["table"] == dotted) return table;
    }
    return nullptr;
  }

  bool Replicated(const std::string& ns, const std::string& table) {
    std::string us = MetadataLocation(kUs, ns, table);
    return !us.empty() && us == MetadataLocation(kEu, ns, table);
  }

  LabOptions options_;
  std::unique_ptr<Lab> lab_;
  std::string bearer_;
};

}  // namespace icewarden::lab::testing
