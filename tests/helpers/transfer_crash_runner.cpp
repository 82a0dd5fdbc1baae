// Runs one ownership.transfer (failover fo-crash: every table owned by us-east-1 moves to
// eu-central-1, markers in eu-central-1's catalog) against a lab started by the test, on the
// test's SQLite store; the test SIGKILLs it at a random moment and runs it again
// (tests/crash/actions/transfer_crash_test.cpp).
//
//   transfer_crash_runner DB EU_CATALOG_URL
//
// Prints "END <outcome> <detail json>" when the transfer returns.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "actions/catalog_checks.h"
#include "health/catalog_client.h"
#include "state/sqlite_store.h"

namespace icewarden::testing {
namespace {

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DB EU_CATALOG_URL\n", argv[0]);
    return 2;
  }
  const std::string db = argv[1], eu_url = argv[2];
  auto store = OpenSqliteStore({.path = db}, SystemClock());
  if (!store.ok()) {
    std::fprintf(stderr, "store: %s\n", store.status().ToString().c_str());
    return 1;
  }
  ActionEnv env;
  env.clock = SystemClock();
  env.store = store->get();
  env.catalog = [&](const std::string& region) -> std::optional<CatalogClientOptions> {
    if (region != "eu-central-1") return std::nullopt;
    CatalogClientOptions o;
    o.base_uri = eu_url;
    o.warehouse = "lab";
    o.default_deadline = std::chrono::seconds(10);
    return o;
  };
  ActionContext ctx;
  ctx.failover_id = "fo-crash";
  ctx.step_id = "promote-ownership";
  ctx.idempotency_key = "fo-crash/promote-ownership";
  ctx.from = "us-east-1";
  ctx.to = "eu-central-1";
  ctx.scope = "owner:us-east-1";
  ctx.deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  auto result = MakeOwnershipTransferAction(env)->Run(
      nlohmann::json{{"concurrency", 8}, {"batch_size", 20}}, ctx);
  std::printf("END %s %s\n", OutcomeName(result.outcome), result.detail_json.c_str());
  std::fflush(stdout);
  return result.ok() ? 0 : 1;
}

}  // namespace
}  // namespace icewarden::testing

int main(int argc, char** argv) { return icewarden::testing::Main(argc, argv); }
