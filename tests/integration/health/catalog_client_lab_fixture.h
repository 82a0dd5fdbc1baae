// CatalogClientLabTest: icewarden's CatalogClient over the real Beast transport, on an
// io_context run by the test thread, against the in-process lab (tests/integration/lab/
// lab_fixture.h). Every exchange goes through a RecordingTransport, so tests can count the
// requests the client really sent (retries included) and read their headers.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + C++20)

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "health/beast_transport.h"
#include "health/catalog_client.h"
#include "tests/fakes/fake_clock.h"
#include "tests/integration/lab/lab_fixture.h"

namespace icewarden::testing {

// One request the client sent and what came back (status 0: a transport error).
struct Exchange {
  HttpRequest request;
  int status = 0;
  HttpHeaders response_headers;
  Status error;  // the transport error when status is 0

  bool IsTokenRequest() const { return request.url.find("/v1/oauth/tokens") != std::string::npos; }
  std::string Header(std::string_view name) const { return request.headers.Get(name).value_or(""); }
};

// Forwards to a real transport and records every exchange. `on_response` runs on the
// executor before the client sees the response (tests use it to change the lab's faults
// between a response and the client's next request).
class RecordingTransport final : public HttpTransport {
 public:
  explicit RecordingTransport(HttpTransport& inner) : inner_(inner) {}

  void Send(HttpRequest request, std::chrono::milliseconds deadline,
            std::function<void(Result<HttpResponse>)> done) override {
    auto index = exchanges_.size();
    exchanges_.push_back({request, 0, {}, Status::Ok()});
    inner_.Send(std::move(request), deadline,
                [this, index, done = std::move(done)](Result<HttpResponse> r) {
                  Exchange& e = exchanges_[index];
                  if (r.ok()) {
                    e.status = r->status;
                    e.response_headers = r->headers;
                  } else {
                    e.error = r.status();
                  }
                  if (on_response) on_response(exchanges_[index]);
                  done(std::move(r));
                });
  }

  void RunAfter(std::chrono::milliseconds delay, std::function<void()> fn) override {
    inner_.RunAfter(delay, std::move(fn));
  }

  const std::vector<Exchange>& exchanges() const { return exchanges_; }
  void Clear() { exchanges_.clear(); }

  // Exchanges whose method is `method` and whose URL contains `url_part`.
  std::vector<Exchange> Matching(const std::string& method, const std::string& url_part) const {
    std::vector<Exchange> out;
    for (const auto& e : exchanges_) {
      if (e.request.method == method && e.request.url.find(url_part) != std::string::npos) {
        out.push_back(e);
      }
    }
    return out;
  }
  int TokenRequests() const {
    int n = 0;
    for (const auto& e : exchanges_) n += e.IsTokenRequest() ? 1 : 0;
    return n;
  }

  std::function<void(const Exchange&)> on_response;

 private:
  HttpTransport& inner_;
  std::vector<Exchange> exchanges_;
};

class CatalogClientLabTest : public lab::testing::LabTest {
 protected:
  CatalogClientLabTest() {
    // sales: orders, customers, seed_00000, seed_00003, seed_00006 -> three pages of two.
    options_.seed_tables = 7;
  }

  void SetUp() override {
    LabTest::SetUp();
    if (HasFatalFailure()) return;
    beast_ = MakeBeastTransport(io_);
    transport_ = std::make_unique<RecordingTransport>(*beast_);
  }

  void TearDown() override {
    clients_.clear();
    // Let exchanges still in flight (a hung request the client gave up on has already
    // completed; this is only for safety) finish before the transport goes away.
    io_.restart();
    io_.run_for(std::chrono::milliseconds(50));
    transport_.reset();
    beast_.reset();
    LabTest::TearDown();
  }

  CatalogClientOptions Options(const std::string& region = lab::testing::kUs) const {
    CatalogClientOptions o;
    o.base_uri = lab_->region_url(region);
    o.warehouse = "lab";
    o.page_size = 2;
    o.default_deadline = std::chrono::seconds(5);
    return o;
  }

  // A client on the recording transport; `clock` defaults to the system clock.
  CatalogClient& Client(CatalogClientOptions options, const Clock* clock = nullptr) {
    clients_.push_back(std::make_unique<CatalogClient>(
        std::move(options),
        CatalogClientEnv{*transport_, clock ? *clock : *system_clock_, SystemRandomBits()}));
    return *clients_.back();
  }
  CatalogClient& Client() { return Client(Options()); }

  // Starts a call with a callback and runs the io_context on this thread until the callback
  // has run (or `limit` passed: then the result is a kInternal "timed out" status).
  template <class T>
  Result<T> Await(const std::function<void(CatalogCallback<T>)>& call,
                  std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    auto out = std::make_shared<std::optional<Result<T>>>();
    call([out](Result<T> r) { out->emplace(std::move(r)); });
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!out->has_value() && std::chrono::steady_clock::now() < end) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(10));
    }
    if (!out->has_value()) {
      return Status::Internal("the client did not call back within the test's limit");
    }
    return std::move(**out);
  }

  Result<CatalogConfig> GetConfig(CatalogClient& c, CallOptions call = {}) {
    return Await<CatalogConfig>([&](auto done) { c.GetConfig(std::move(done), call); });
  }
  Result<std::vector<Namespace>> ListNamespaces(CatalogClient& c, std::optional<Namespace> parent,
                                                CallOptions call = {}) {
    return Await<std::vector<Namespace>>(
        [&](auto done) { c.ListNamespaces(parent, std::move(done), call); });
  }
  Result<std::vector<TableIdent>> ListTables(CatalogClient& c, Namespace ns,
                                             CallOptions call = {}) {
    return Await<std::vector<TableIdent>>(
        [&](auto done) { c.ListTables(ns, std::move(done), call); });
  }
  Result<LoadTableOutcome> Load(CatalogClient& c, const TableIdent& table,
                                std::optional<std::string> etag = std::nullopt,
                                CallOptions call = {}) {
    return Await<LoadTableOutcome>(
        [&](auto done) { c.LoadTable(table, etag, std::move(done), call); });
  }
  Result<CommitOutcome> Commit(CatalogClient& c, const TableCommit& commit, CallOptions call = {}) {
    return Await<CommitOutcome>([&](auto done) { c.CommitTable(commit, std::move(done), call); });
  }

  // A set-properties commit guarded by the table's uuid.
  static TableCommit SetProperties(const TableIdent& table, const std::string& uuid,
                                   std::map<std::string, std::string> properties) {
    TableCommit commit;
    commit.table = table;
    commit.requirements.push_back(AssertTableUuid{uuid});
    commit.updates.push_back(SetPropertiesUpdate{std::move(properties)});
    return commit;
  }

  // The table's properties straight from the lab's catalog (not through the client).
  nlohmann::json LabProperties(const std::string& region, const TableIdent& table) {
    auto metadata = Metadata(region, PercentEncode(table.NamespaceKey()), table.name);
    return metadata.is_object() ? metadata["properties"] : nlohmann::json();
  }

  static TableIdent Orders() { return {{"sales"}, "orders"}; }

  boost::asio::io_context io_;
  std::unique_ptr<HttpTransport> beast_;
  std::unique_ptr<RecordingTransport> transport_;
  std::shared_ptr<Clock> system_clock_ = SystemClock();
  std::vector<std::unique_ptr<CatalogClient>> clients_;
};

}  // namespace icewarden::testing
