// CatalogClient over the real BeastTransport and a cpp-httplib catalog stand-in on
// loopback: the asynchronous pieces (io_context callbacks, Retry-After timers) compose.
#include <utility>  // before Asio (Boost 1.74 + C++20)

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <optional>
#include <thread>

#include "health/beast_transport.h"
#include "health/catalog_client.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;

TEST(CatalogClientLoopbackTest, ConfigThenListWithOneRetryAfter) {
  httplib::Server server;
  std::atomic<int> namespace_calls{0};
  server.Get("/v1/config", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"defaults": {}, "overrides": {"prefix": "lake"}})", "application/json");
  });
  server.Get("/v1/lake/namespaces", [&](const httplib::Request& req, httplib::Response& res) {
    if (namespace_calls++ == 0) {
      res.status = 503;
      res.set_header("Retry-After", "0");
      res.set_content(
          R"({"error": {"message": "Slow down", "type": "SlowDownException", "code": 503}})",
          "application/json");
      return;
    }
    EXPECT_EQ(req.get_header_value("Authorization"), "Bearer t0k3n");
    res.set_content(R"({"namespaces": [["sales"], ["ops"]]})", "application/json");
  });
  int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { server.listen_after_bind(); });

  boost::asio::io_context io;
  auto transport = MakeBeastTransport(io);
  CatalogClientOptions options;
  options.base_uri = "http://127.0.0.1:" + std::to_string(port);
  options.auth = CatalogAuth::Bearer("t0k3n");
  auto clock = SystemClock();
  CatalogClient client(options, {*transport, *clock, SystemRandomBits()});

  std::optional<Result<std::vector<Namespace>>> out;
  client.ListNamespaces(std::nullopt,
                        [&](Result<std::vector<Namespace>> r) { out.emplace(std::move(r)); });
  io.run_for(10s);
  server.stop();
  thread.join();

  ASSERT_TRUE(out.has_value());
  ASSERT_TRUE(out->ok()) << out->status().ToString();
  EXPECT_EQ(out->value(), (std::vector<Namespace>{{"sales"}, {"ops"}}));
  EXPECT_EQ(namespace_calls.load(), 2);
}

}  // namespace
}  // namespace icewarden
