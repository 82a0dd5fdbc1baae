// PrismConformanceTest: the lab running in-process on ephemeral ports, Stoplight Prism in
// front of one region as a validating proxy (`prism proxy --errors`), and icewarden's real
// CatalogClient (Beast transport, io_context run on the test thread) talking through Prism.
//
// Prism turns a request that breaks the spec into 422 and a response that breaks it into 500,
// each with a JSON body naming the violation, and logs violations. Every exchange the client
// makes goes through a RecordingTransport, so the test sees the raw statuses (the client maps
// a 500 on a commit to kStateUnknown and would otherwise hide it) and checks at the end that
// none of them was a Prism verdict and that Prism's log names no violation.
//
// The spec is the released one, ../shared/reference/iceberg-rest-catalog-open-api-1.11.0.yaml
// beside the source tree (CI checks shared/ out there); the test fails if it is missing. It
// skips only when node or the prism binary (scripts/setup.sh installs it into
// tests/conformance/node_modules) is missing.
//
// Prism validates against a copy of that spec written into the test's temporary folder with
// one change (DerivedSpec below), a workaround for Prism rather than a relaxation of the spec:
// POST /v1/oauth/tokens also allows requests without an Authorization header. The spec's
// global `security` (OAuth2 or bearer on every route) applies to the token endpoint too, so
// Prism refuses a client-credentials request with its own 401, yet that first request cannot
// carry a token: the endpoint's description, RFC 6749 4.4 and Iceberg's Java client (which
// sends none) all mean it to be anonymous, the credentials being in the form body. Everything
// else is checked as released. The catalog requires a token (static bearer, and OAuth2 in one
// variant) because Prism enforces the global `security` on every catalog route.
//
// Snapshot ids below 2^53: Prism parses JSON bodies into JavaScript numbers and serialises
// them again in both directions, so a real 63-bit snapshot id is rounded in transit (the
// catalog then sees an assert-ref-snapshot-id that never matches), and its int64 format
// becomes the safe-integer range (+-(2^53 - 1)), so such ids are also reported as violations.
// The lab's workload makes 63-bit ids like Java writers do; this fixture instead appends
// snapshots with ids below 2^53 straight to the lab (setup traffic, not validated), so the
// tables the tests load and commit to round-trip through Prism exactly.
//
// Known limits of Prism 5.14 with this spec (shared/reference/README.md) and how they are met:
// - A load or create table request without X-Iceberg-Access-Delegation crashes Prism, so the
//   client is configured with access_delegation = "vended-credentials".
// - Routes with an empty prefix do not match: the lab serves the non-empty prefix "lab".
// - Requirement types in commit bodies are not checked (the schema has no oneOf): every
//   recorded commit body's requirements are checked against the spec's TableRequirement
//   schemas here instead (requirement_check.h).
// - A proxied HEAD whose answer is a JSON error (404) makes Prism parse its empty body and
//   fail ("FetchError: invalid json response body"): no test sends a HEAD that answers 404.
// - A status the route does not declare (413: no route has it, nor 4XX/default) is passed
//   through with one warning line and an sl-violations header; ExpectCleanLog takes the
//   requests for which that one line is expected (gateway_conformance_test.cpp), and
//   ErrorModelProblems checks such bodies.
// PrismProcess and StartPrism serve more than one Prism (gateway_prism_fixture.h starts a
// second one in front of the gateway).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "examples/lab/lab.h"
#include "examples/lab/workload.h"
#include "health/beast_transport.h"
#include "health/catalog_client.h"
#include "health/http_transport.h"
#include "health/uuid_v7.h"
#include "state/clock.h"
#include "tests/conformance/prism_support.h"
#include "tests/conformance/requirement_check.h"
#include "tests/fakes/free_port.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::conformance {

class PrismConformanceTest : public ::testing::Test {
 protected:
  PrismConformanceTest() {
    dir_ = icewarden::testing::MakeTempDir("icewarden-conformance");
    options_.data_dir = dir_ + "/catalogs";
    options_.regions = {{kRegion}, {"eu-central-1"}};
    options_.default_owner = kRegion;
    options_.owner_rules = {{"eu[.].*", "eu-central-1"}};
    options_.replication_lag_ms = 200;
    options_.workload_enabled = false;
    options_.workload_interval_ms = 3'600'000;  // rounds only when SetUp asks for them
    options_.seed_tables = 7;  // sales, clickstream and eu get a few more tables to page over
    options_.warehouse = kWarehouse;
    options_.token = kToken;  // Prism enforces the spec's `security` on every catalog route
  }

  void SetUp() override {
    const std::string source = icewarden::testing::SourceDir();
    spec_ = ReleasedSpecPath();
    ASSERT_TRUE(std::filesystem::exists(spec_))
        << "the Iceberg REST spec is missing: expected " << spec_
        << " (shared/reference/ checked out beside the source tree)";

    node_ = FindOnPath("node");
    if (node_.empty()) GTEST_SKIP() << "node is not on PATH; run scripts/setup.sh";
    std::filesystem::path prism_bin =
        std::filesystem::path(source) / "tests/conformance/node_modules/.bin/prism";
    std::error_code ec;
    std::filesystem::path prism_js = std::filesystem::canonical(prism_bin, ec);
    if (ec || !std::filesystem::exists(prism_js)) {
      GTEST_SKIP() << "prism is not installed at " << prism_bin.string()
                   << "; run scripts/setup.sh";
    }
    prism_js_ = prism_js.string();

    std::string error;
    std::string derived = DerivedSpec(spec_, &error);
    ASSERT_FALSE(derived.empty()) << error;
    validated_spec_ = dir_ + "/" + kSpecName;
    std::ofstream(validated_spec_) << derived;

    lab_ = std::make_unique<lab::Lab>(options_);
    auto status = lab_->Start();
    ASSERT_TRUE(status.ok()) << status.message();
    // Seeded tables have no snapshots: give the ones the tests use two each, so loads return
    // snapshots, refs and logs.
    for (const char* table : {"sales/tables/orders", "sales%1Farchive/tables/orders_2024"}) {
      for (int i = 0; i < 2; ++i) {
        AppendSnapshot(table);
        if (HasFatalFailure()) return;
      }
    }

    StartPrism(lab_->region_url(kRegion), &prism_);
    if (HasFailure()) return;

    transport_ = MakeBeastTransport(io_);
    recorder_ = std::make_unique<RecordingTransport>(*transport_);
  }

  void TearDown() override {
    StopPrisms();
    if (HasFailure() && recorder_) {
      // An ASSERT may have stopped the test before ExpectNoViolations: show Prism's verdicts
      // in full (the client's own messages cut response bodies short).
      for (const auto& e : recorder_->exchanges()) {
        if (IsPrismVerdict(e.response_body)) {
          std::cerr << "prism verdict on " << e.method << " " << e.url << " -> " << e.status
                    << ":\n"
                    << e.response_body << "\nrequest body: " << e.request_body << "\n";
        }
      }
    }
    if (!HasFailure()) {
      std::filesystem::remove_all(dir_);
    } else if (!prism_.log.empty()) {
      std::cerr << "prism log kept in " << prism_.log << "\n";
    }
    lab_.reset();
  }

  // Subclasses that start more Prism processes stop them here, before the lab goes.
  virtual void StopPrisms() { prism_.Stop(); }

  // Starts prism proxying to `upstream` and waits (60 s at most: node is slow to start on a
  // loaded machine) until it answers a request it forwards. A port taken between FreePort and
  // prism's bind makes prism exit; then it is tried again on another port. A port already in
  // `p->port` is tried first (a subclass that had to name it beforehand).
  void StartPrism(const std::string& upstream, PrismProcess* p, const std::string& name = "prism") {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (int attempt = 1;; ++attempt) {
      if (attempt > 1 || p->port == 0) p->port = FreePort();
      ASSERT_NE(p->port, 0);
      p->log = dir_ + "/" + name + "-" + std::to_string(attempt) + ".log";
      std::string command = "exec " + ShellQuote(node_) + " " + ShellQuote(prism_js_) +
                            " proxy --errors -h 127.0.0.1 -p " + std::to_string(p->port) + " " +
                            ShellQuote(validated_spec_) + " " + ShellQuote(upstream) + " >" +
                            ShellQuote(p->log) + " 2>&1";
      p->process = std::make_unique<icewarden::testing::Subprocess>(
          std::vector<std::string>{"/bin/sh", "-c", command});
      if (WaitForPrism(p, deadline)) return;
      if (HasFailure()) return;
      auto code = p->process->Wait(std::chrono::milliseconds(0));
      ASSERT_TRUE(code && attempt < 3)
          << name << " exited with " << code.value_or(0) << " before serving:\n"
          << ReadFile(p->log);
    }
  }

  // True once prism answers; false if it exited first. Fails the test at `deadline`.
  bool WaitForPrism(PrismProcess* p, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      if (p->process->Wait(std::chrono::milliseconds(0))) return false;
      httplib::Client probe("127.0.0.1", p->port);
      probe.set_connection_timeout(1);
      probe.set_read_timeout(5);
      probe.set_bearer_token_auth(kToken);
      // Any HTTP answer means prism has loaded the spec and proxies. The probe's log lines
      // are not checked: the test's own traffic starts after them.
      if (auto r = probe.Get("/v1/config?warehouse=" + std::string(kWarehouse))) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let it log the probe
        p->log_offset = ReadFile(p->log).size();
        return true;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "prism did not answer on port " << p->port << " within 60 s:\n"
                      << ReadFile(p->log);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  // Appends one snapshot to `table` ("sales/tables/orders") in kRegion, straight to the lab
  // with its static token, as a writer would (the lab's AppendCommit), but with a snapshot id
  // below 2^53 (see the header comment).
  void AppendSnapshot(const std::string& table) {
    httplib::Client lab(lab_->region_url(kRegion));
    lab.set_bearer_token_auth(kToken);
    const std::string path = "/v1/" + std::string(kWarehouse) + "/namespaces/" + table;
    auto loaded = lab.Get(path);
    ASSERT_TRUE(loaded && loaded->status == 200) << path;
    nlohmann::json metadata = nlohmann::json::parse(loaded->body)["metadata"];
    nlohmann::json commit = lab::AppendCommit(metadata, "conformance", lab::SystemNowMs());
    const auto id = commit["updates"][0]["snapshot"]["snapshot-id"].get<std::int64_t>();
    ReplaceId(commit, id,
              static_cast<std::int64_t>(random_() & ((std::uint64_t{1} << 53) - 1)) | 1);
    auto committed = lab.Post(path, commit.dump(), "application/json");
    ASSERT_TRUE(committed && committed->status == 200)
        << path << ": " << (committed ? committed->body : httplib::to_string(committed.error()));
  }

  // Every occurrence of snapshot id `from` in `j` (numbers, and inside strings such as the
  // manifest list's name) becomes `to`.
  static void ReplaceId(nlohmann::json& j, std::int64_t from, std::int64_t to) {
    if (j.is_number_integer() && j.get<std::int64_t>() == from) {
      j = to;
    } else if (j.is_string()) {
      std::string s = j.get<std::string>();
      const std::string old_text = std::to_string(from), new_text = std::to_string(to);
      for (auto at = s.find(old_text); at != std::string::npos; at = s.find(old_text, at)) {
        s.replace(at, old_text.size(), new_text);
        at += new_text.size();
      }
      j = s;
    } else if (j.is_structured()) {
      for (auto& child : j) ReplaceId(child, from, to);
    }
  }

  std::string prism_url() const { return prism_.url(); }

  // A client whose every request goes through prism.
  std::unique_ptr<CatalogClient> MakeClient(CatalogAuth auth = CatalogAuth::Bearer(kToken),
                                            int page_size = 2,
                                            const std::string& warehouse = kWarehouse) {
    CatalogClientOptions options;
    options.base_uri = prism_url();
    options.warehouse = warehouse;
    options.auth = std::move(auth);
    options.page_size = page_size;
    options.default_deadline = std::chrono::seconds(20);  // prism validates in node
    options.access_delegation = "vended-credentials";     // see the header comment
    return std::make_unique<CatalogClient>(
        options, CatalogClientEnv{*recorder_, *clock_, SystemRandomBits()});
  }

  // Runs the io_context on this thread until `start`'s callback delivers (30 s at most).
  template <class T>
  Result<T> Await(const std::function<void(CatalogCallback<T>)>& start) {
    std::optional<Result<T>> out;
    start([&out](Result<T> r) { out.emplace(std::move(r)); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!out && std::chrono::steady_clock::now() < deadline) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(50));
    }
    if (!out) return Status::Unavailable("the call did not complete within 30 s");
    return std::move(*out);
  }

  // Every recorded exchange, for failure messages.
  std::string Transcript() const {
    std::string out;
    for (const auto& e : recorder_->exchanges()) {
      out += "  " + e.method + " " + e.url + " -> " +
             (e.status ? std::to_string(e.status) : "transport error: " + e.error) + "\n";
    }
    return out;
  }

  // No exchange got a Prism verdict (422: the request broke the spec; 500: the response did;
  // 401 from Prism: the request did not meet the spec's `security`; sl-violations: a
  // violation below error level), and Prism logged no violation or refusal.
  void ExpectNoViolations() {
    ASSERT_TRUE(recorder_);
    ExpectNoVerdicts(recorder_->exchanges());
    ExpectCleanLog(prism_);
  }

  void ExpectNoVerdicts(const std::vector<Exchange>& exchanges) {
    EXPECT_FALSE(exchanges.empty());
    for (const auto& e : exchanges) {
      const std::string what = e.method + " " + e.url + " -> " + std::to_string(e.status);
      EXPECT_NE(e.status, 422) << what << ": prism says the request breaks the spec:\n"
                               << e.response_body << "\nrequest body: " << e.request_body;
      // The lab's own 500s (injected faults) carry an IcebergErrorResponse, Prism's do not.
      EXPECT_TRUE(e.status != 500 || (allow_server_errors_ && !IsPrismVerdict(e.response_body)))
          << what << ": prism says the response breaks the spec:\n"
          << e.response_body;
      EXPECT_FALSE(IsPrismVerdict(e.response_body))
          << what << ": prism refused the exchange:\n"
          << e.response_body << "\nrequest body: " << e.request_body;
      EXPECT_EQ(e.violations_header, "") << what;
      EXPECT_NE(e.status, 0) << e.method << " " << e.url << ": " << e.error;
    }
    // What Prism skips: the requirements of every commit.
    const YAML::Node spec = YAML::LoadFile(spec_);
    for (const auto& e : exchanges) {
      if (e.method != "POST" || e.url.find("/tables/") == std::string::npos ||
          e.url.find("/tables/rename") != std::string::npos) {
        continue;
      }
      for (const auto& problem : RequirementProblems(spec, e.request_body)) {
        ADD_FAILURE() << e.method << " " << e.url << ": " << problem
                      << "\nrequest body: " << e.request_body;
      }
    }
  }

  // Prism's log since the probe names no violation, except that `allowed` says "method path"
  // (as Prism logs it: "post /v1/lab/...") for which the one line `allowed_line_part` is
  // expected: a status the spec does not declare for that route (see gateway_conformance_test).
  void ExpectCleanLog(const PrismProcess& p, const std::vector<std::string>& allowed = {},
                      const std::string& allowed_line_part = "") {
    std::vector<std::string> unexpected;
    std::stringstream in(ReadFile(p.log).substr(p.log_offset));
    std::string line, request;
    std::size_t allowed_seen = 0;
    while (std::getline(in, line)) {
      const auto received = line.find("[HTTP SERVER] ");
      if (received != std::string::npos && line.find("Request received") != std::string::npos) {
        request = line.substr(received + 14, line.find(" \u2139") - received - 14);
      }
      if (ViolationLines(line).empty()) continue;
      if (!allowed_line_part.empty() && line.find(allowed_line_part) != std::string::npos &&
          std::find(allowed.begin(), allowed.end(), request) != allowed.end()) {
        ++allowed_seen;
        continue;
      }
      unexpected.push_back("  (" + request + ") " + line);
    }
    std::string joined;
    for (const auto& l : unexpected) joined += l + "\n";
    EXPECT_TRUE(unexpected.empty()) << "prism logged violations (" << p.log << "):\n" << joined;
    EXPECT_EQ(allowed_seen, allowed.size())
        << "expected one '" << allowed_line_part << "' line for each of "
        << ::testing::PrintToString(allowed);
  }

  // How many recorded exchanges hit a URL containing `fragment` with `method`.
  int Count(const std::string& method, const std::string& fragment) const {
    int n = 0;
    for (const auto& e : recorder_->exchanges()) {
      if (e.method == method && e.url.find(fragment) != std::string::npos) ++n;
    }
    return n;
  }

  std::string dir_;
  lab::LabOptions options_;
  std::unique_ptr<lab::Lab> lab_;
  std::string spec_;            // the released spec under ../shared
  std::string validated_spec_;  // the copy Prism validates against (see DerivedSpec)
  std::string node_;
  std::string prism_js_;
  PrismProcess prism_;  // in front of kRegion's catalog
  bool allow_server_errors_ = false;

  std::mt19937_64 random_{std::random_device{}()};
  std::shared_ptr<Clock> clock_ = SystemClock();
  boost::asio::io_context io_;
  std::unique_ptr<HttpTransport> transport_;
  std::unique_ptr<RecordingTransport> recorder_;
};

}  // namespace icewarden::conformance
