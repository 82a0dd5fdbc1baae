// The receiver: authentication of Alertmanager receivers, and what one alert does (the
// effects, the withdrawal on resolve, the delivery record that makes a re-delivery a no-op).
#include <openssl/sha.h>

#include <nlohmann/json.hpp>

#include "orchestrator/failovers/failover_service.h"
#include "orchestrator/webhooks/webhook_alert.h"
#include "orchestrator/webhooks/webhooks.h"
#include "state/clock.h"
#include "state/json_text.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

using nlohmann::json;

// A store failure, or a dependency that did not answer: retrying the delivery may help.
bool Retryable(const Status& s) {
  switch (s.code()) {
    case StatusCode::kIOError:
    case StatusCode::kUnavailable:
    case StatusCode::kConflict:
    case StatusCode::kInternal:
      return true;
    default:
      return false;
  }
}

std::string Sha256Hex(std::string_view s) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), d);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : d) {
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  }
  return out;
}

std::string Label(const LabelSet& labels, const std::string& name) {
  auto it = labels.find(name);
  return it == labels.end() ? "" : it->second;
}

// The proposal's reason quotes the alert: what fired, since when, what its annotations say,
// and where to see it.
std::string ProposalReason(const WebhookAlert& a) {
  std::string name = Label(a.labels, "alertname");
  std::string reason = (a.via_alertmanager ? "Alertmanager alert " : "webhook alert ") +
                       (name.empty() ? a.id : name) +
                       (a.starts_at.empty() ? " firing" : " firing since " + a.starts_at);
  const char* separator = ": ";
  for (const char* key : {"summary", "description"}) {
    std::string text = Label(a.annotations, key);
    if (text.empty()) continue;
    reason += separator + text;
    separator = "; ";
  }
  if (!a.url.empty()) reason += " (" + a.url + ")";
  return reason;
}

}  // namespace

std::string AlertmanagerDeliveryKey(const std::string& group_key, const AlertmanagerAlert& a) {
  // Digested: a groupKey can be long, and the key is a unique index. The unit separator
  // cannot occur in the fields, so two different tuples never join to the same text.
  return "alertmanager:" +
         Sha256Hex(group_key + '\x1f' + a.fingerprint + '\x1f' + a.starts_at + '\x1f' + a.status);
}

WebhookReceiver::WebhookReceiver(WebhookReceiverDeps deps) : d_(std::move(deps)) {}

bool WebhookReceiver::HasAlertmanagerReceivers() const {
  return !d_.config->webhooks.alertmanager.empty();
}

std::optional<std::string> WebhookReceiver::AuthenticateAlertmanager(
    std::string_view authorization) const {
  const auto basic = BasicCredentials(authorization);
  std::string_view bearer;
  if (authorization.size() > 7 &&
      (authorization.substr(0, 7) == "Bearer " || authorization.substr(0, 7) == "bearer "))
    bearer = authorization.substr(7);
  std::optional<std::string> who;
  // Every receiver is examined whatever matched, so the time says nothing about which.
  for (const WebhookReceiverConfig& r : d_.config->webhooks.alertmanager) {
    bool match = false;
    if (!r.token.empty()) {
      match = !bearer.empty() && ConstantTimeEquals(bearer, r.token.value());
    } else if (basic) {
      const bool user = ConstantTimeEquals(basic->first, r.username);
      const bool pass = ConstantTimeEquals(basic->second, r.password.value());
      match = user && pass && !r.password.empty();
    }
    if (match && !who) who = r.name;
  }
  return who;
}

Status WebhookReceiver::Record(const WebhookAlert& a, const std::string& effect,
                               const std::string& region, const std::string& failover_id,
                               const std::string& outcome) {
  WebhookDelivery d;
  d.key = a.key;
  d.source = a.source;
  d.alert = a.id;
  d.status = a.status;
  d.starts_at = a.starts_at;
  d.effect = effect;
  d.region = region;
  d.failover_id = failover_id;
  d.outcome = outcome;
  d.received_at = d_.clock->Now();
  AuditEvent why;
  why.at = d.received_at;
  why.actor = a.actor;
  why.source = a.remote + " via " + a.via;
  why.action = "webhook.delivery";
  why.target = !failover_id.empty() ? failover_id : !region.empty() ? region : a.id;
  why.reason = outcome;
  why.detail_json = DumpJson(json{{"source", a.source},
                                  {"alert", a.id},
                                  {"status", a.status},
                                  {"starts_at", a.starts_at},
                                  {"effect", effect},
                                  {"labels", a.labels},
                                  {"generator_url", a.url}});
  return d_.store->RecordWebhookDelivery(d, why);
}

void WebhookReceiver::Remember(const std::string& key, const std::string& outcome,
                               const std::string& failover_id) {
  if (!seen_.emplace(key, SeenDelivery{outcome, failover_id}).second) return;
  seen_order_.push_back(key);
  if (seen_order_.size() > kSeenCapacity) {
    seen_.erase(seen_order_.front());
    seen_order_.pop_front();
  }
}

void WebhookReceiver::Process(const WebhookAlert& a, WebhookTally& tally) {
  if (auto it = seen_.find(a.key); it != seen_.end()) {
    ++tally.duplicates;
    return tally.Add(a, "duplicate", "already received: " + it->second.outcome,
                     it->second.failover_id);
  }
  auto seen = d_.store->GetWebhookDelivery(a.key);
  if (!seen.ok()) return tally.Failed(a, seen.status());
  if (seen->has_value()) {
    Remember(a.key, (*seen)->outcome, (*seen)->failover_id);
    ++tally.duplicates;
    return tally.Add(a, "duplicate", "already received: " + (*seen)->outcome, (*seen)->failover_id);
  }
  if (a.status == "firing") return Fire(a, tally);
  return Resolve(a, tally);
}

// Records the effect; what the alert did goes into the reply either way.
void WebhookReceiver::Done(const WebhookAlert& a, WebhookTally& tally, const std::string& result,
                           const std::string& effect, const std::string& region,
                           const std::string& failover_id, const std::string& outcome) {
  Status s = Record(a, effect, region, failover_id, outcome);
  // A lost race with a concurrent copy of this delivery: that copy recorded it.
  if (!s.ok() && s.code() != StatusCode::kConflict) {
    // The effect happened (a proposal, a suspicion) even though its record did not: still a
    // 2xx, as retrying would act again only where the effect itself is idempotent.
    ++tally.recorded;
    return tally.Add(a, result, outcome + " (the delivery record failed: " + s.message() + ")",
                     failover_id);
  }
  ++tally.recorded;
  if (s.ok()) Remember(a.key, outcome, failover_id);
  tally.Add(a, result, outcome, failover_id);
}

void WebhookReceiver::Fire(const WebhookAlert& a, WebhookTally& tally) {
  const AlertEffect e = MatchAlert(d_.config->webhooks.rules, a.labels);
  const std::string alert = a.Describe();
  if (!e.error.empty())
    return Done(a, tally, "ignored", "none", "", "", alert + ": not acted on: " + e.error);
  if (e.effect == "none") {
    const std::string why = e.rule.empty() ? "no rule matches" : "rule '" + e.rule + "' says none";
    // A signed event is recorded anyway: its signature must not be accepted twice.
    if (a.record_always) return Done(a, tally, "ignored", "none", "", "", alert + ": " + why);
    return tally.Add(a, "ignored", alert + ": " + why, "");
  }
  if (e.effect == "mark_suspect") {
    if (d_.config->FindRegion(e.region) == nullptr)
      return Done(a, tally, "ignored", "none", "", "",
                  alert + ": not acted on: rule '" + e.rule + "' names region '" + e.region +
                      "', which is not in the config");
    HealthInput in{HealthEvent::kMarkSuspect, EventSource::kWebhook, "", alert, d_.clock->Now()};
    auto d = d_.region_event ? d_.region_event(e.region, in, a.actor)
                             : Result<HealthDecision>(Status::Unavailable("no health loop"));
    if (!d.ok()) return tally.Failed(a, d.status());
    return Done(a, tally, "suspected", "mark_suspect", e.region, "",
                alert + ": rule '" + e.rule + "': " + d->reason);
  }
  // propose_failover
  if (d_.failovers == nullptr)
    return tally.Failed(a, Status::Unavailable("this daemon does not run failovers"));
  ProposeRequest req;
  req.to = e.to;
  req.from = e.from;
  req.scope = e.scope;
  req.reason = ProposalReason(a);
  const Caller caller{a.actor, ActorKind::kWebhook, a.remote + " via " + a.via};
  CommandOutcome out = d_.failovers->Propose(caller, req);
  if (out.status.ok()) {
    const std::string id = out.body["failover"].value("id", "");
    return Done(a, tally, "proposed", "propose_failover", e.from, id,
                alert + ": rule '" + e.rule + "' proposed " + id + " (" + e.scope + " from " +
                    e.from + " to " + e.to + "); an approver decides");
  }
  if (Retryable(out.status)) return tally.Failed(a, out.status);
  const std::string refused =
      alert + ": rule '" + e.rule + "': not proposed: " + out.status.message();
  // A signed event is recorded, so that its replay is refused (409) rather than asking the
  // guards again; the sender asks again with a freshly signed delivery.
  if (a.record_always) return Done(a, tally, "refused", "none", "", "", refused);
  // Not recorded: a refused proposal wrote nothing, and when Alertmanager re-sends the alert
  // (repeat_interval) the guards are asked again; they may pass by then.
  tally.Add(a, "refused", refused, "");
}

void WebhookReceiver::Resolve(const WebhookAlert& a, WebhookTally& tally) {
  const std::string alert = a.Describe();
  auto earlier = d_.store->ListWebhookDeliveries(a.source, a.id);
  if (!earlier.ok()) return tally.Failed(a, earlier.status());
  const std::vector<WebhookDelivery>& list = *earlier;
  const WebhookDelivery* fired = nullptr;
  for (const WebhookDelivery& d : list)
    if (d.status == "firing" && d.starts_at == a.starts_at &&
        (d.effect == "mark_suspect" || d.effect == "propose_failover"))
      fired = &d;
  if (fired == nullptr) {
    const std::string why = alert + ": nothing to undo (its firing did nothing)";
    if (a.record_always) return Done(a, tally, "resolved", "none", "", "", why);
    return tally.Add(a, "resolved", why, "");
  }
  if (fired->effect == "mark_suspect") {
    HealthInput in{HealthEvent::kLiftSuspect, EventSource::kWebhook, "", alert, d_.clock->Now()};
    auto d = d_.region_event ? d_.region_event(fired->region, in, a.actor)
                             : Result<HealthDecision>(Status::Unavailable("no health loop"));
    if (!d.ok() && Retryable(d.status())) return tally.Failed(a, d.status());
    const std::string what = d.ok() ? d->reason : d.status().message();
    return Done(a, tally, "lifted", "lift_suspect", fired->region, "", alert + ": " + what);
  }
  const std::string id = fired->failover_id;
  auto f = d_.store->GetFailover(id);
  if (!f.ok()) return tally.Failed(a, f.status());
  if (!f->has_value() || (*f)->phase != FailoverPhase::kProposed) {
    const std::string phase = f->has_value() ? FailoverPhaseName((*f)->phase) : "gone";
    return Done(a, tally, "left", "none", fired->region, id,
                alert + ": " + id + " is " + phase + ", not withdrawn: only a proposal nobody " +
                    "has approved is withdrawn by its alert");
  }
  if (d_.failovers == nullptr)
    return tally.Failed(a, Status::Unavailable("this daemon does not run failovers"));
  const Caller caller{a.actor, ActorKind::kWebhook, a.remote + " via " + a.via};
  const std::string reason = "withdrawn: the alert that opened it resolved" +
                             (a.ends_at.empty() ? "" : " at " + a.ends_at) + ": " + alert;
  CommandOutcome out = d_.failovers->Abort(caller, id, reason);
  if (!out.status.ok() && Retryable(out.status)) return tally.Failed(a, out.status);
  if (!out.status.ok())
    return Done(a, tally, "left", "none", fired->region, id,
                alert + ": " + id + " not withdrawn: " + out.status.message());
  Done(a, tally, "withdrawn", "withdraw", fired->region, id,
       alert + ": " + id + " withdrawn (nobody had approved it)");
}

WebhookReply WebhookReceiver::HandleAlertmanager(const std::string& receiver,
                                                 const WebhookRequest& request) {
  auto payload = ParseAlertmanagerPayload(request.body);
  if (!payload.ok()) {
    const bool version = payload.status().code() == StatusCode::kFailedPrecondition;
    return ErrorReply(400, version ? "unsupported_version" : "bad_request",
                      payload.status().message());
  }
  std::lock_guard lock(mu_);
  WebhookTally tally;
  for (const AlertmanagerAlert& am : payload->alerts) {
    WebhookAlert a = WebhookAlert::From(*payload, am);
    a.via = receiver;
    a.remote = request.remote;
    Process(a, tally);
  }
  return tally.Reply(payload->truncated_alerts);
}

}  // namespace icewarden
