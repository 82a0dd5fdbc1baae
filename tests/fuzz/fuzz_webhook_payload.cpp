// The webhook payloads (orchestrator/webhooks/): Alertmanager's version 4 payload, and the
// generic endpoint's event body behind a valid signature (the harness signs whatever it is
// given, so the fuzzer reaches the body parser, not just the signature check).
// Seeds: tests/compat/alertmanager/ and tests/fuzz/seeds/webhook/.
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "orchestrator/config/config.h"
#include "orchestrator/webhooks/webhooks.h"
#include "state/clock.h"
#include "state/sqlite_store.h"

namespace {

using namespace icewarden;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // a log line per input is most of the time otherwise
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  (void)ParseAlertmanagerPayload(body);

  // A receiver over a fresh in-memory store, with rules that match nothing the payload
  // cannot name: both entry points run to a reply.
  auto clock = SystemClock();
  auto store = OpenSqliteStore(SqliteStoreOptions{":memory:"}, clock);
  if (!store.ok()) std::abort();
  Config config;
  config.webhooks.alertmanager = {WebhookReceiverConfig{"am", Secret("am-token"), "", Secret()}};
  config.webhooks.generic = {GenericWebhookConfig{"ci", Secret("s3cret"), std::chrono::minutes(5)}};
  WebhookRuleConfig suspect;
  suspect.name = "s";
  suspect.match = {{"alertname", "Down"}};
  suspect.effect = "mark_suspect";
  config.webhooks.rules = {suspect};
  WebhookReceiverDeps d;
  d.config = &config;
  d.store = store->get();
  d.clock = clock;
  d.region_event = [](const std::string& region, const HealthInput&,
                      const std::string&) -> Result<HealthDecision> {
    return Status::NotFound(region);
  };
  WebhookReceiver receiver(d);
  WebhookRequest am;
  am.body = body;
  am.remote = "127.0.0.1:9093";
  (void)receiver.HandleAlertmanager("am", am);

  const std::string ts = std::to_string(std::time(nullptr));
  WebhookRequest generic;
  generic.body = body;
  generic.remote = "127.0.0.1:9094";
  generic.headers["x-icewarden-timestamp"] = ts;
  generic.headers["x-icewarden-signature"] = "sha256=" + HmacSha256Hex("s3cret", ts + "." + body);
  (void)receiver.HandleGeneric("ci", generic);
  return 0;
}
