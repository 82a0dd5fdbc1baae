// Webhooks: alerting systems telling icewarden that something is wrong (DESIGN.md, "alert
// webhooks" in the data flow). Alertmanager posts its webhook payload (version 4); any other
// system can post a signed event to a generic endpoint. Mapping rules from the config
// (webhooks.rules) turn an alert's labels into one effect: mark a region suspect, propose a
// failover, or nothing. A resolved alert undoes what its firing opened: the suspicion is
// lifted and a proposal nobody has approved yet is withdrawn (aborted, audited).
//
// Rule 4 of DESIGN.md: a webhook proposes and suspects, it never approves. Proposals go
// through FailoverService::Propose as ActorKind::kWebhook, actor "webhook:alertmanager".
//
// Idempotency: Alertmanager delivers at least once and re-sends every repeat_interval, so an
// alert is acted on once per groupKey + fingerprint + startsAt + status. What was done is
// recorded durably (StateStore::RecordWebhookDelivery) after the effect; a re-delivery finds
// the record and writes nothing at all. A generic event is recorded by its signature, and a
// replayed signature is refused (409).
//
// Answers: 200 once every alert was looked at (also when an effect was refused: retrying the
// same alert cannot change that); 5xx only when nothing at all was recorded, so that
// Alertmanager's retry is safe and useful; 4xx only for input that can never succeed.
//
// Files: alertmanager_payload.cpp (parsing), alert_rules.cpp (matching and templates),
// webhook_signature.cpp (HMAC, constant-time comparison, basic auth), webhook_receiver.cpp
// (the effects and the deliveries), generic_webhook.cpp (the signed endpoint), and
// webhook_alert.h (internal: one alert from either source, the reply's tally).
// Thread-safety: WebhookReceiver may be called from any number of threads; deliveries are
// processed one at a time (a mutex), so two copies of one delivery (an Alertmanager HA pair
// sends both) act once. The free functions are pure.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "orchestrator/config/config.h"
#include "state/region_health_machine.h"
#include "state/status.h"

namespace icewarden {

class Clock;
class FailoverService;
class StateStore;
struct WebhookAlert;  // webhook_alert.h
struct WebhookTally;

// ---- Alertmanager's webhook payload (alertmanager_payload.cpp) ----

using LabelSet = std::map<std::string, std::string>;

struct AlertmanagerAlert {
  std::string status;  // firing | resolved
  LabelSet labels;
  LabelSet annotations;
  std::string starts_at;  // RFC 3339, as sent: part of the idempotency key
  std::string ends_at;
  std::string generator_url;
  std::string fingerprint;
};

struct AlertmanagerPayload {
  std::string version;  // "4"
  std::string group_key;
  std::string status;
  std::string receiver;
  std::string external_url;
  std::int64_t truncated_alerts = 0;
  std::vector<AlertmanagerAlert> alerts;
};

// Why a payload is refused: kInvalidArgument with the field at fault, or kFailedPrecondition
// for a version other than "4" (a newer Alertmanager format icewarden does not read).
// Unknown fields are ignored: newer Alertmanagers add some.
Result<AlertmanagerPayload> ParseAlertmanagerPayload(std::string_view body);

// ---- Mapping rules (alert_rules.cpp) ----

// What the first matching rule asks for an alert, its templates expanded. effect is "none"
// when no rule matches; `error` is non-empty when a template names a label the alert lacks.
struct AlertEffect {
  std::string rule;  // the rule's name; empty when none matched
  std::string effect = "none";
  std::string region;           // mark_suspect
  std::string to, from, scope;  // propose_failover
  std::string error;
};
AlertEffect MatchAlert(const std::vector<WebhookRuleConfig>& rules, const LabelSet& labels);

// "${labels.NAME}" replaced by the label's value; nullopt (with the label in *missing) when
// the alert has no such label.
std::optional<std::string> ExpandLabels(const std::string& text, const LabelSet& labels,
                                        std::string* missing);

// ---- Signatures and credentials (webhook_signature.cpp) ----

// Lower-case hex of HMAC-SHA256(key, message).
std::string HmacSha256Hex(std::string_view key, std::string_view message);
// Compares in time that depends only on the lengths (CRYPTO_memcmp over SHA-256 digests).
bool ConstantTimeEquals(std::string_view a, std::string_view b);
// The (user, password) of an Authorization header "Basic base64(user:password)", or nullopt.
std::optional<std::pair<std::string, std::string>> BasicCredentials(std::string_view header);

// ---- The receiver (webhook_receiver.cpp, generic_webhook.cpp) ----

struct WebhookRequest {
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string remote;  // "127.0.0.1:5555"
};

struct WebhookReply {
  int status = 200;
  std::string body;  // JSON; refusals are {"error":{"code","message"}}
};

struct WebhookReceiverDeps {
  const Config* config = nullptr;  // webhooks:, regions and routes
  StateStore* store = nullptr;
  FailoverService* failovers = nullptr;  // null: propose_failover rules answer 503
  std::shared_ptr<Clock> clock;
  // Applies a suspicion event to a region through whatever owns its health (the daemon's
  // HealthTracker, so probes and webhooks see one record) and persists a change, audited as
  // `actor` ("webhook:alertmanager", "webhook:generic/ci"). The decision, or why it could
  // not be applied.
  std::function<Result<HealthDecision>(const std::string& region, const HealthInput& input,
                                       const std::string& actor)>
      region_event;
};

class WebhookReceiver {
 public:
  explicit WebhookReceiver(WebhookReceiverDeps deps);

  // The name of the alertmanager receiver whose credentials `authorization` carries (bearer
  // or basic), or nullopt. Examines every receiver, comparing in constant time.
  std::optional<std::string> AuthenticateAlertmanager(std::string_view authorization) const;
  bool HasAlertmanagerReceivers() const;

  // POST /api/v1/webhooks/alertmanager from an authenticated `receiver`.
  WebhookReply HandleAlertmanager(const std::string& receiver, const WebhookRequest& request);

  // POST /api/v1/webhooks/generic/{name}: X-Icewarden-Timestamp (unix seconds) and
  // X-Icewarden-Signature ("sha256=" + hex HMAC over "<timestamp>.<body>") authenticate it;
  // the body is {"id", "status": "firing"|"resolved", "labels", "annotations"?, "url"?}.
  WebhookReply HandleGeneric(const std::string& name, const WebhookRequest& request);

 private:
  void Process(const WebhookAlert& alert, WebhookTally& tally);
  void Fire(const WebhookAlert& alert, WebhookTally& tally);
  void Resolve(const WebhookAlert& alert, WebhookTally& tally);
  // Records the delivery with its effect and adds `outcome` to the reply.
  void Done(const WebhookAlert& alert, WebhookTally& tally, const std::string& result,
            const std::string& effect, const std::string& region, const std::string& failover_id,
            const std::string& outcome);
  Status Record(const WebhookAlert& alert, const std::string& effect, const std::string& region,
                const std::string& failover_id, const std::string& outcome);

  // The deliveries most recently recorded or found in the store. A record never changes once
  // written, and Alertmanager re-sends every firing alert each repeat_interval (and a delivery
  // it timed out on at once), so re-deliveries are answered from here without a store read.
  struct SeenDelivery {
    std::string outcome, failover_id;
  };
  static constexpr size_t kSeenCapacity = 4096;
  void Remember(const std::string& key, const std::string& outcome, const std::string& failover_id);

  WebhookReceiverDeps d_;
  std::mutex mu_;  // one delivery at a time: the dedup check and the record must not interleave
  std::unordered_map<std::string, SeenDelivery> seen_;  // under mu_
  std::deque<std::string> seen_order_;                  // oldest first; under mu_
};

}  // namespace icewarden
