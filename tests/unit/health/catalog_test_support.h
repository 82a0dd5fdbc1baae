// Shared set-up for the catalog client tests: a scripted transport, a fake clock, a
// deterministic random source, and a way to catch a callback's Result.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "health/catalog_client.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_transport.h"

namespace icewarden::testing {

inline constexpr const char* kBase = "http://catalog.test/api/catalog";
inline constexpr const char* kConfigUrl =
    "http://catalog.test/api/catalog/v1/config?warehouse=lake";
inline constexpr const char* kRoot = "http://catalog.test/api/catalog/v1/lake-eu";

// A CatalogConfig body with prefix "lake-eu"; `extra` is spliced in as more top-level fields.
inline std::string ConfigBody(const std::string& extra = "") {
  return R"({"defaults": {"prefix": "from-defaults", "clients": "4"},
             "overrides": {"prefix": "lake-eu"})" +
         (extra.empty() ? std::string() : ", " + extra) + "}";
}

// Stores the one Result a callback receives.
template <class T>
struct Caught {
  std::optional<Result<T>> result;
  CatalogCallback<T> Callback() {
    return [this](Result<T> r) { result.emplace(std::move(r)); };
  }
  const Result<T>& operator*() const { return *result; }
  const Result<T>* operator->() const { return &*result; }
};

class CatalogClientTest : public ::testing::Test {
 protected:
  CatalogClientOptions Options() {
    CatalogClientOptions o;
    o.base_uri = std::string(kBase) + "/";  // a trailing slash is tolerated
    o.warehouse = "lake";
    return o;
  }
  std::unique_ptr<CatalogClient> Client(CatalogClientOptions o) {
    return std::make_unique<CatalogClient>(
        std::move(o), CatalogClientEnv{transport_, clock_,
                                       [this] { return ++random_calls_ * 0x9E3779B97F4A7C15ULL; }});
  }
  std::unique_ptr<CatalogClient> Client() { return Client(Options()); }

  // Loads the config so that later expectations start with the call under test.
  void LoadConfig(CatalogClient& client, const std::string& extra = "") {
    transport_.Expect("GET", kConfigUrl, JsonResponse(200, ConfigBody(extra)));
    Caught<CatalogConfig> c;
    client.GetConfig(c.Callback());
    ASSERT_TRUE(c->ok()) << c->status().ToString();
  }

  void TearDown() override { EXPECT_EQ(transport_.pending(), 0u) << "expected requests not sent"; }

  FakeTransport transport_;
  FakeClock clock_;
  std::uint64_t random_calls_ = 0;
};

}  // namespace icewarden::testing
