// Internal to orchestrator/webhooks/: one alert from either source in one shape, and the
// tally of what a delivery did, which becomes the reply. Callers use webhooks.h.
// Thread-safety: plain values.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/webhooks/webhooks.h"

namespace icewarden {

struct WebhookAlert {
  std::string key;     // the delivery's idempotency key
  std::string source;  // "alertmanager" | "generic/<name>"
  std::string actor;   // "webhook:alertmanager" | "webhook:generic/<name>"
  std::string id;      // fingerprint or event id
  std::string status;  // firing | resolved
  std::string starts_at, ends_at;
  LabelSet labels, annotations;
  std::string url;     // generatorURL
  std::string via;     // the receiver (or API token) that authenticated it
  std::string remote;  // "127.0.0.1:5555"
  bool via_alertmanager = true;
  bool record_always = false;  // signed events: recorded even when they do nothing

  static WebhookAlert From(const AlertmanagerPayload& payload, const AlertmanagerAlert& alert);
  // "alert IcebergCatalogDown{region=us-east-1} firing (fingerprint 6f1c...)"
  std::string Describe() const;
};

// Alertmanager's key: groupKey + fingerprint + startsAt + status (webhook_receiver.cpp).
std::string AlertmanagerDeliveryKey(const std::string& group_key, const AlertmanagerAlert& a);

struct WebhookTally {
  struct Row {
    std::string id, status, result, decision, failover_id;
  };
  std::vector<Row> alerts;  // the reply's "alerts", in delivery order
  int recorded = 0;         // alerts whose effect or delivery was written
  int failed = 0;           // alerts nothing was written for, on a retryable error
  int duplicates = 0;       // alerts received before
  std::string first_failure;

  void Add(const WebhookAlert& a, const std::string& result, const std::string& decision,
           const std::string& failover_id);
  void Failed(const WebhookAlert& a, const Status& why);
  // 200 with every alert's result; 503 when an alert failed and nothing was recorded, so
  // that the sender's retry is safe (nothing happened) and useful.
  WebhookReply Reply(std::int64_t truncated_alerts) const;
};

WebhookReply ErrorReply(int status, const std::string& code, const std::string& message);

}  // namespace icewarden
