// `icewarden gateway` between two Prism validating proxies (gateway_prism_fixture.h): what a
// client sends to the gateway and what the gateway answers (Prism A), and what the gateway
// sends to the catalog and what the catalog answers (Prism B), all against the released spec.
//
// What Prism cannot check, and how each case is checked instead:
// - A status the spec does not declare for the route (413 from the gateway on updateTable:
//   no route declares 413, and the spec has no 4XX or default response). Prism 5.14 passes the
//   answer through unchanged and logs one warning, "Violation: response Unable to match the
//   returned status code with those defined in the document: 200,400,...". The test expects
//   exactly that line for exactly that request (ExpectCleanLog's `allowed`), and checks the
//   body against the spec's ErrorModel itself (ErrorModelProblems). Any other violation fails.
// - A request Prism answers itself without forwarding: a body that is not JSON (Prism's own
//   400 {"error": {"code": "invalid_json"}}), a path the spec does not have (Prism's 404
//   NO_PATH_MATCHED_ERROR), a method the path does not have. These go to the gateway directly,
//   and its answer is checked against ErrorModel with its status (ErrorModelProblems).
// - Views: only their 2xx answers are driven (README.md): the released spec declares
//   listViews' 404 as a bare ErrorModel, unlike every other route's {"error": ...}, so Prism B
//   would flag the lab's 404 there. Nor is HEAD answered 404 (Prism 5.14 parses the empty body
//   of a proxied HEAD error as JSON and fails: "FetchError: invalid json response body"; HEAD
//   204 works).
#include "tests/conformance/gateway_prism_fixture.h"

namespace icewarden::conformance {
namespace {

using nlohmann::json;

const char* const kCreateSchema =
    R"({"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]})";

std::string Transaction(const std::vector<std::pair<std::string, std::string>>& tables) {
  json changes = json::array();
  for (const auto& [ns, name] : tables) {
    changes.push_back(
        {{"identifier", {{"namespace", {ns}}, {"name", name}}},
         {"requirements", json::array()},
         {"updates", {{{"action", "set-properties"}, {"updates", {{"conformance", "1"}}}}}}});
  }
  return json{{"table-changes", changes}}.dump();
}

std::string Rename(const std::string& from_ns, const std::string& from, const std::string& to_ns,
                   const std::string& to) {
  return json{{"source", {{"namespace", {from_ns}}, {"name", from}}},
              {"destination", {{"namespace", {to_ns}}, {"name", to}}}}
      .dump();
}

TEST_F(GatewayPrismTest, RoutesThroughTheGatewayConformOnBothHops) {
  // The config: the gateway rewrites overrides.uri, prefix and namespace-separator.
  Exchange config = Send("GET", "/v1/config?warehouse=lab");
  ASSERT_EQ(config.status, 200) << config.response_body;
  json c = json::parse(config.response_body);
  EXPECT_EQ(c["overrides"]["uri"], gateway_prism_.url());
  EXPECT_EQ(c["overrides"]["prefix"], "lab");
  EXPECT_EQ(c["overrides"]["namespace-separator"], "%1F");

  EXPECT_EQ(Send("GET", "/v1/lab/namespaces").status, 200);
  EXPECT_EQ(Send("GET", "/v1/lab/namespaces?parent=sales&pageSize=1").status, 200);
  Exchange created_ns = Send("POST", "/v1/lab/namespaces",
                             R"({"namespace":["conformance"],"properties":{"owner":"test"}})");
  EXPECT_EQ(created_ns.status, 200) << created_ns.response_body;
  EXPECT_EQ(Send("GET", "/v1/lab/namespaces/sales").status, 200);
  EXPECT_EQ(Send("HEAD", "/v1/lab/namespaces/sales").status, 204);
  EXPECT_EQ(Send("GET", "/v1/lab/namespaces/sales/tables").status, 200);
  EXPECT_EQ(Send("GET", "/v1/lab/namespaces/sales%1Farchive/tables").status, 200);
  EXPECT_EQ(Send("HEAD", "/v1/lab/namespaces/sales/tables/orders").status, 204);
  EXPECT_EQ(Send("GET", "/v1/lab/namespaces/sales/tables/no_such_table").status, 404);

  // Load, then commit on top of it with the requirements an engine sends.
  Exchange loaded = Send("GET", "/v1/lab/namespaces/sales/tables/orders?snapshots=all");
  ASSERT_EQ(loaded.status, 200) << loaded.response_body;
  json metadata = json::parse(loaded.response_body)["metadata"];
  json commit = {
      {"requirements",
       {{{"type", "assert-table-uuid"}, {"uuid", metadata["table-uuid"]}},
        {{"type", "assert-ref-snapshot-id"},
         {"ref", "main"},
         {"snapshot-id", metadata["current-snapshot-id"]}}}},
      {"updates", {{{"action", "set-properties"}, {"updates", {{"conformance", "1"}}}}}}};
  Exchange committed = Send("POST", "/v1/lab/namespaces/sales/tables/orders", commit.dump());
  EXPECT_EQ(committed.status, 200) << committed.response_body;
  // Another table's uuid: the catalog's 409 CommitFailedException, passed on.
  commit["requirements"][0]["uuid"] = "00000000-0000-4000-8000-000000000000";
  Exchange stale = Send("POST", "/v1/lab/namespaces/sales/tables/orders", commit.dump());
  EXPECT_EQ(stale.status, 409) << stale.response_body;
  EXPECT_EQ(ErrorType(stale), "CommitFailedException");

  // Create a table (its owner is the rule's: us-east-1), then one that exists already.
  const std::string create =
      std::string(R"({"name":"conformance_new","schema":)").append(kCreateSchema).append("}");
  Exchange created = Send("POST", "/v1/lab/namespaces/sales/tables", create);
  EXPECT_EQ(created.status, 200) << created.response_body;
  EXPECT_EQ(Send("POST", "/v1/lab/namespaces/sales/tables", create).status, 409);

  // A transaction over two of the owner's tables, a rename, a drop, and a register of the
  // dropped table's last metadata file: forwarded to the owner, answered 2xx there.
  Exchange transaction = Send("POST", "/v1/lab/transactions/commit",
                              Transaction({{"sales", "orders"}, {"sales", "customers"}}));
  EXPECT_EQ(transaction.status, 204) << transaction.response_body;
  Exchange renamed = Send("POST", "/v1/lab/tables/rename",
                          Rename("sales", "conformance_new", "sales", "conformance_renamed"));
  EXPECT_EQ(renamed.status, 204) << renamed.response_body;
  Exchange renamed_load = Send("GET", "/v1/lab/namespaces/sales/tables/conformance_renamed");
  ASSERT_EQ(renamed_load.status, 200) << renamed_load.response_body;
  const std::string location = json::parse(renamed_load.response_body)["metadata-location"];
  Exchange dropped = Send("DELETE", "/v1/lab/namespaces/sales/tables/conformance_renamed");
  EXPECT_EQ(dropped.status, 204) << dropped.response_body;
  Exchange registered =
      Send("POST", "/v1/lab/namespaces/sales/register",
           json{{"name", "conformance_registered"}, {"metadata-location", location}}.dump());
  EXPECT_EQ(registered.status, 200) << registered.response_body;
  EXPECT_EQ(Send("DELETE",
                 "/v1/lab/namespaces/sales/tables/conformance_registered?"
                 "purgeRequested=true")
                .status,
            204);
  EXPECT_EQ(Send("DELETE", "/v1/lab/namespaces/sales/tables/conformance_registered").status, 404);

  // Views: create, list, load, HEAD, replace, rename, drop (2xx answers: the released spec's
  // listViews 404 is a bare ErrorModel, which the lab's error body is not; see README.md).
  const std::string view =
      std::string(R"({"name":"conformance_view","schema":)")
          .append(kCreateSchema)
          .append(R"(,"view-version":{"version-id":1,"timestamp-ms":1700000000000,"schema-id":0,)"
                  R"("summary":{"engine-name":"conformance"},"representations":[{"type":"sql",)"
                  R"("sql":"SELECT 1","dialect":"spark"}],"default-namespace":["sales"]},)"
                  R"("properties":{}})");
  Exchange created_view = Send("POST", "/v1/lab/namespaces/sales/views", view);
  ASSERT_EQ(created_view.status, 200) << created_view.response_body;
  const std::string uuid = json::parse(created_view.response_body)["metadata"]["view-uuid"];
  EXPECT_EQ(Send("GET", "/v1/lab/namespaces/sales/views").status, 200);
  EXPECT_EQ(Send("GET", "/v1/lab/namespaces/sales/views/conformance_view").status, 200);
  EXPECT_EQ(Send("HEAD", "/v1/lab/namespaces/sales/views/conformance_view").status, 204);
  json replace = {{"requirements", {{{"type", "assert-view-uuid"}, {"uuid", uuid}}}},
                  {"updates", {{{"action", "set-properties"}, {"updates", {{"a", "b"}}}}}}};
  Exchange replaced =
      Send("POST", "/v1/lab/namespaces/sales/views/conformance_view", replace.dump());
  EXPECT_EQ(replaced.status, 200) << replaced.response_body;
  Exchange renamed_view = Send("POST", "/v1/lab/views/rename",
                               Rename("sales", "conformance_view", "sales", "conformance_view2"));
  EXPECT_EQ(renamed_view.status, 204) << renamed_view.response_body;
  EXPECT_EQ(Send("DELETE", "/v1/lab/namespaces/sales/views/conformance_view2").status, 204);

  ExpectNoVerdicts(exchanges_);
  ExpectCleanLog(gateway_prism_);
  ExpectCleanLog(prism_);
}

TEST_F(GatewayPrismTest, TheGatewaysRefusalsAreTheSpecsErrorModel) {
  const std::size_t catalog_before = ReadFile(prism_.log).size();
  const std::string set_property =
      R"({"requirements":[],"updates":[{"action":"set-properties","updates":{"a":"b"}}]})";
  // 409: eu.orders is eu-central-1's, which this gateway does not forward to.
  Exchange elsewhere = Send("POST", "/v1/lab/namespaces/eu/tables/orders", set_property);
  EXPECT_EQ(elsewhere.status, 409) << elsewhere.response_body;
  EXPECT_NE(ErrorType(elsewhere).find("OwnedByAnotherRegion"), std::string::npos);

  // 400: a transaction, and a rename, over tables of two owners.
  Exchange spans = Send("POST", "/v1/lab/transactions/commit",
                        Transaction({{"sales", "orders"}, {"eu", "orders"}}));
  EXPECT_EQ(spans.status, 400) << spans.response_body;
  EXPECT_EQ(Send("POST", "/v1/lab/tables/rename", Rename("sales", "orders", "eu", "orders")).status,
            400);
  // 400: a name the gateway will not forward.
  Exchange bad_name =
      Send("POST", "/v1/lab/namespaces/sales/tables",
           std::string(R"({"name":"..","schema":)").append(kCreateSchema).append("}"));
  EXPECT_EQ(bad_name.status, 400) << bad_name.response_body;
  // 404: a prefix other than the gateway's.
  Exchange warehouse = Send("GET", "/v1/other/namespaces");
  EXPECT_EQ(warehouse.status, 404) << warehouse.response_body;
  EXPECT_EQ(ErrorType(warehouse), "NoSuchWarehouseException");

  // None of those reached the catalog (Prism B saw no request).
  EXPECT_EQ(ReadFile(prism_.log).substr(catalog_before).find("Request received"), std::string::npos)
      << "a refused request reached the catalog's Prism";

  // 503 with Retry-After once the gateway has read the fence (it polls the store every 10 ms;
  // a commit sent before that goes through, which is harmless here).
  Fence(kRegion, true);
  std::optional<Exchange> fenced;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  do {
    fenced = Send("POST", "/v1/lab/namespaces/sales/tables/orders", set_property);
  } while (fenced->status != 503 && std::chrono::steady_clock::now() < deadline);
  ASSERT_EQ(fenced->status, 503) << fenced->response_body;
  EXPECT_EQ(RetryAfterOfLast(), "1");
  EXPECT_EQ(ErrorType(*fenced), "ServiceUnavailableException");
  Fence(kRegion, false);

  // 413: a valid commit over max_body_bytes. No route declares 413 (see the header comment):
  // Prism logs its one "Unable to match the returned status code" warning for it.
  json big = json::parse(set_property);
  big["updates"][0]["updates"]["a"] = std::string(kMaxBody, 'x');
  Exchange oversize = Send("POST", "/v1/lab/namespaces/sales/tables/orders", big.dump());
  EXPECT_EQ(oversize.status, 413);
  const YAML::Node spec = YAML::LoadFile(spec_);
  for (const auto& p : ErrorModelProblems(spec, oversize.response_body, 413)) ADD_FAILURE() << p;
  // The same warning as the log line, in Prism's sl-violations header: expected, then cleared
  // so that ExpectNoVerdicts still fails on any other.
  EXPECT_NE(oversize.violations_header.find("Unable to match the returned status code"),
            std::string::npos)
      << oversize.violations_header;
  exchanges_.back().violations_header.clear();

  // Every refusal above in the error model, as Prism checked it.
  for (const auto& e : exchanges_) {
    if (e.status < 400) continue;
    for (const auto& p : ErrorModelProblems(spec, e.response_body, e.status)) {
      ADD_FAILURE() << e.method << " " << e.url << ": " << p;
    }
  }
  ExpectNoVerdicts(exchanges_);
  ExpectCleanLog(gateway_prism_, {"post /v1/lab/namespaces/sales/tables/orders"},
                 "Unable to match the returned status code");
  ExpectCleanLog(prism_);
}

// The catalog's own 503 (with Retry-After) is passed on; with the catalog unreachable (Prism B
// stopped) the gateway answers 503 itself, for a read and for a commit nothing was sent for.
TEST_F(GatewayPrismTest, UnavailableCatalogsAnswerPerSpec) {
  ASSERT_TRUE(
      lab_->PatchFaults(kRegion, {{"error_rate", 1.0}, {"error_status", 503}, {"retry_after_s", 1}})
          .ok());
  Exchange busy = Send("GET", "/v1/lab/namespaces");
  EXPECT_EQ(busy.status, 503) << busy.response_body;
  EXPECT_EQ(RetryAfterOfLast(), "1");
  ASSERT_TRUE(lab_->ClearFaults(kRegion).ok());
  ExpectCleanLog(prism_);

  prism_.Stop();
  Exchange read = Send("GET", "/v1/lab/namespaces/sales/tables");
  EXPECT_EQ(read.status, 503) << read.response_body;
  const std::string set_property =
      R"({"requirements":[],"updates":[{"action":"set-properties","updates":{"a":"b"}}]})";
  Exchange write = Send("POST", "/v1/lab/namespaces/sales/tables/orders", set_property);
  EXPECT_EQ(write.status, 503) << write.response_body;
  EXPECT_EQ(RetryAfterOfLast(), "1") << "nothing was sent: safe to retry";
  EXPECT_EQ(ErrorType(write), "ServiceUnavailableException");

  ExpectNoVerdicts(exchanges_);
  ExpectCleanLog(gateway_prism_);
}

// A commit the catalog took but did not answer within forward_timeout: the gateway's 504
// CommitStateUnknownException, which updateTable declares.
class ImpatientGatewayPrismTest : public GatewayPrismTest {
 protected:
  ImpatientGatewayPrismTest() { forward_timeout_ = "1s"; }
};

TEST_F(ImpatientGatewayPrismTest, ACommitWithoutAnAnswerIsUnknown) {
  ASSERT_TRUE(lab_->PatchFaults(kRegion, {{"commit_latency_ms", 3000}}).ok());
  const std::size_t catalog_before = ReadFile(prism_.log).size();
  const std::string set_property =
      R"({"requirements":[],"updates":[{"action":"set-properties","updates":{"a":"b"}}]})";
  Exchange slow = Send("POST", "/v1/lab/namespaces/sales/tables/orders", set_property);
  EXPECT_EQ(slow.status, 504) << slow.response_body;
  EXPECT_EQ(ErrorType(slow), "CommitStateUnknownException");
  // Prism B's check of the catalog's late answer is part of the exchange: wait for it.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (ReadFile(prism_.log).substr(catalog_before).find("Received forward response") ==
             std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_NE(ReadFile(prism_.log).substr(catalog_before).find("Received forward response"),
            std::string::npos)
      << "the catalog's answer never reached Prism B";
  ASSERT_TRUE(lab_->ClearFaults(kRegion).ok());
  ExpectNoVerdicts(exchanges_);
  ExpectCleanLog(gateway_prism_);
  ExpectCleanLog(prism_);
}

// What Prism answers itself, never forwarding: the gateway's answers to the same requests,
// sent to it directly, must still be the spec's error model with their status.
TEST_F(GatewayPrismTest, RefusalsPrismAnswersItselfAreTheErrorModelToo) {
  struct Case {
    std::string method, target, body;
    int status;
  };
  const std::vector<Case> cases = {
      {"POST", "/v1/lab/namespaces/sales/tables", "{not json", 400},
      {"POST", "/v1/lab/transactions/commit", "[1,2", 400},
      {"GET", "/v1/lab/nothing-here", "", 404},
      {"GET", "/v1/nothing-here", "", 404},
      {"PUT", "/v1/lab/namespaces/sales/tables/orders", "{}", 405},
      {"POST", "/v1/lab/namespaces/sales/tables/orders", std::string(kMaxBody + 10, 'x'), 413},
  };
  const std::size_t catalog_before = ReadFile(prism_.log).size();
  const YAML::Node spec = YAML::LoadFile(spec_);
  for (const Case& c : cases) {
    // Through Prism first: it answers itself (the reason these go to the gateway directly).
    Exchange via_prism = Send(c.method, c.target, c.body);
    EXPECT_TRUE(IsPrismVerdict(via_prism.response_body) ||
                via_prism.response_body.find("invalid_json") != std::string::npos)
        << c.method << " " << c.target << " -> " << via_prism.status << " "
        << via_prism.response_body << ": Prism forwarded it, so it belongs in the other tests";
    Exchange direct = Send(c.method, c.target, c.body, gateway_url_);
    EXPECT_EQ(direct.status, c.status)
        << c.method << " " << c.target << ": " << direct.response_body;
    for (const auto& p : ErrorModelProblems(spec, direct.response_body, c.status)) {
      ADD_FAILURE() << c.method << " " << c.target << ": " << p;
    }
  }
  EXPECT_EQ(ReadFile(prism_.log).substr(catalog_before).find("Request received"), std::string::npos)
      << "a refused request reached the catalog's Prism";
}

// The error model check itself (no Prism needed): it must catch what it stands in for Prism on.
TEST(ErrorModelCheckTest, CatchesBodiesOutsideTheErrorModel) {
  const std::string spec_path = ReleasedSpecPath();
  ASSERT_TRUE(std::filesystem::exists(spec_path))
      << "the Iceberg REST spec is missing: " << spec_path;
  const YAML::Node spec = YAML::LoadFile(spec_path);
  EXPECT_TRUE(
      ErrorModelProblems(spec, R"({"error":{"message":"m","type":"T","code":413}})", 413).empty());
  EXPECT_EQ(ErrorModelProblems(spec, R"({"error":{"message":"m","type":"T"}})", 400).size(), 1u);
  EXPECT_EQ(
      ErrorModelProblems(spec, R"({"error":{"message":"m","type":"T","code":404}})", 400).size(),
      1u);
  EXPECT_EQ(
      ErrorModelProblems(spec, R"({"error":{"message":"m","type":7,"code":400}})", 400).size(), 1u);
  EXPECT_EQ(ErrorModelProblems(spec, R"({"message":"m","type":"T","code":400})", 400).size(), 1u);
  EXPECT_EQ(
      ErrorModelProblems(spec, R"({"error":{"message":"m","type":"T","code":400},"x":1})", 400)
          .size(),
      1u);
  EXPECT_EQ(ErrorModelProblems(spec, "not json", 400).size(), 1u);
}

}  // namespace
}  // namespace icewarden::conformance
