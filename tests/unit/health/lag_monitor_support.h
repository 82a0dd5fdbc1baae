// Scripting catalogs for the LagMonitor and inventory tests: one FakeTransport and one
// CatalogClient per region, and bodies for the listing and load-table responses.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "health/catalog_client.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_transport.h"

namespace icewarden::testing {

inline constexpr UnixMillis kLagT0 = 1'780'000'000'000;

// A region's catalog at http://<region>.test/catalog, warehouse "lake", prefix "<region>".
struct ScriptedCatalog {
  std::string region;
  FakeTransport transport;
  std::unique_ptr<CatalogClient> client;

  std::string Root() const { return "http://" + region + ".test/catalog/v1/" + region; }

  void ExpectConfig() {
    transport.Expect(
        "GET", "http://" + region + ".test/catalog/v1/config?warehouse=lake",
        JsonResponse(200, R"({"defaults": {}, "overrides": {"prefix": ")" + region + R"("}})"));
  }
  // `parent` is the encoded parent ("" for the top level, "sales%1Feu" for nested).
  void ExpectNamespaces(const std::string& parent, std::vector<std::vector<std::string>> names,
                        const std::string& page_token = "", const std::string& next = "") {
    nlohmann::json body = {{"namespaces", names}};
    if (!next.empty()) body["next-page-token"] = next;
    transport.Expect("GET",
                     Root() + "/namespaces?" + (parent.empty() ? "" : "parent=" + parent + "&") +
                         "pageToken=" + page_token + "&pageSize=100",
                     JsonResponse(200, body.dump()));
  }
  void ExpectTables(const std::string& ns, std::vector<std::string> levels,
                    std::vector<std::string> names) {
    nlohmann::json ids = nlohmann::json::array();
    for (const auto& n : names) ids.push_back({{"namespace", levels}, {"name", n}});
    transport.Expect("GET", Root() + "/namespaces/" + ns + "/tables?pageToken=&pageSize=100",
                     JsonResponse(200, nlohmann::json{{"identifiers", ids}}.dump()));
  }
  std::string TableUrl(const std::string& ns, const std::string& name) const {
    return Root() + "/namespaces/" + ns + "/tables/" + name + "?snapshots=all";
  }
  // A table whose main lineage is 1 <- 2 <- ... <- last (snapshot n committed at kLagT0 + n s).
  void ExpectLoad(const std::string& ns, const std::string& name, int last, const std::string& etag,
                  const std::string& uuid = "uuid-") {
    nlohmann::json snaps = nlohmann::json::array(), log = nlohmann::json::array();
    for (int id = 1; id <= last; ++id) {
      nlohmann::json s = {{"snapshot-id", id},
                          {"sequence-number", id},
                          {"timestamp-ms", kLagT0 + id * 1000},
                          {"manifest-list", "s3://lake/m" + std::to_string(id) + ".avro"},
                          {"summary", {{"operation", "append"}}}};
      if (id > 1) s["parent-snapshot-id"] = id - 1;
      snaps.push_back(s);
      log.push_back({{"snapshot-id", id}, {"timestamp-ms", kLagT0 + id * 1000}});
    }
    nlohmann::json metadata = {{"format-version", 2},
                               {"table-uuid", uuid == "uuid-" ? uuid + name : uuid},
                               {"location", "s3://lake/" + name},
                               {"snapshots", snaps},
                               {"snapshot-log", log}};
    if (last > 0) {
      metadata["current-snapshot-id"] = last;
      metadata["refs"] = {{"main", {{"snapshot-id", last}, {"type", "branch"}}}};
    }
    nlohmann::json body = {
        {"metadata-location", "s3://lake/" + name + "/v" + std::to_string(last) + ".metadata.json"},
        {"metadata", metadata}};
    transport.Expect("GET", TableUrl(ns, name), JsonResponse(200, body.dump(), {{"ETag", etag}}));
  }
  void ExpectNotModified(const std::string& ns, const std::string& name, const std::string& etag) {
    transport.Expect("GET", TableUrl(ns, name), HttpResponse{304, {{"ETag", etag}}, ""});
  }
};

class ScriptedCatalogs {
 public:
  ScriptedCatalog& Add(const std::string& region, FakeClock& clock) {
    auto c = std::make_unique<ScriptedCatalog>();
    c->region = region;
    CatalogClientOptions o;
    o.base_uri = "http://" + region + ".test/catalog";
    o.warehouse = "lake";
    c->client = std::make_unique<CatalogClient>(
        o, CatalogClientEnv{c->transport, clock, [] { return 0x9E3779B97F4A7C15ULL; }});
    auto& ref = *c;
    catalogs_[region] = std::move(c);
    return ref;
  }
  ScriptedCatalog& operator[](const std::string& region) { return *catalogs_.at(region); }
  std::map<std::string, CatalogClient*> Clients() {
    std::map<std::string, CatalogClient*> out;
    for (auto& [region, c] : catalogs_) out[region] = c->client.get();
    return out;
  }
  void ExpectAllConsumed() {
    for (auto& [region, c] : catalogs_) {
      EXPECT_EQ(c->transport.pending(), 0u) << region << ": expected requests not sent";
    }
  }

 private:
  std::map<std::string, std::unique_ptr<ScriptedCatalog>> catalogs_;
};

}  // namespace icewarden::testing
