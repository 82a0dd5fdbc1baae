// POST /api/v1/webhooks/generic/{name}: an event from any system that can sign its body.
//
//   X-Icewarden-Timestamp: 1767225600            (unix seconds)
//   X-Icewarden-Signature: sha256=<hex HMAC-SHA256(secret, "1767225600." + body)>
//   {"id": "evt-1", "status": "firing", "labels": {"alertname": ..., "region": ...},
//    "annotations": {"summary": ...}, "url": "https://..."}
//
// The signature covers the timestamp, so a captured request is good only within max_skew,
// and the signature is recorded, so within that window it is good once.
#include <charconv>
#include <nlohmann/json.hpp>

#include "orchestrator/webhooks/webhook_alert.h"
#include "orchestrator/webhooks/webhooks.h"
#include "state/clock.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

using nlohmann::json;

constexpr std::string_view kSignaturePrefix = "sha256=";

std::string Header(const WebhookRequest& r, const std::string& name) {
  auto it = r.headers.find(name);
  return it == r.headers.end() ? "" : it->second;
}

bool IsLowerHex(std::string_view s) {
  return s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

Status ReadLabelObject(const json& doc, const char* key, bool required, LabelSet* out) {
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null())
    return required ? Status::InvalidArgument(std::string(key) + " is missing") : Status::Ok();
  if (!it->is_object())
    return Status::InvalidArgument(std::string(key) + " must be an object of strings");
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string())
      return Status::InvalidArgument(std::string(key) + "." + k + " must be a string");
    (*out)[k] = v.get<std::string>();
  }
  return Status::Ok();
}

Status ReadEvent(const std::string& body, WebhookAlert* a) {
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::InvalidArgument("the body is not valid JSON");
  if (!doc.is_object()) return Status::InvalidArgument("the body must be a JSON object");
  for (auto [key, out] : {std::pair{"id", &a->id}, {"status", &a->status}}) {
    auto it = doc.find(key);
    if (it == doc.end() || it->is_null())
      return Status::InvalidArgument(std::string(key) + " is missing");
    if (!it->is_string() || it->get<std::string>().empty())
      return Status::InvalidArgument(std::string(key) + " must be a non-empty string");
    *out = it->get<std::string>();
  }
  if (a->status != "firing" && a->status != "resolved")
    return Status::InvalidArgument("status must be firing or resolved, got '" + a->status + "'");
  if (Status s = ReadLabelObject(doc, "labels", true, &a->labels); !s.ok()) return s;
  if (Status s = ReadLabelObject(doc, "annotations", false, &a->annotations); !s.ok()) return s;
  if (auto it = doc.find("url"); it != doc.end() && !it->is_null()) {
    if (!it->is_string()) return Status::InvalidArgument("url must be a string");
    a->url = it->get<std::string>();
  }
  return Status::Ok();
}

}  // namespace

WebhookReply WebhookReceiver::HandleGeneric(const std::string& name,
                                            const WebhookRequest& request) {
  const GenericWebhookConfig* endpoint = nullptr;
  for (const GenericWebhookConfig& g : d_.config->webhooks.generic)
    if (g.name == name) endpoint = &g;
  if (endpoint == nullptr)
    return ErrorReply(404, "not_found",
                      "no generic webhook named '" + name + "' in webhooks.generic");

  const std::string timestamp = Header(request, "x-icewarden-timestamp");
  const std::string signature = Header(request, "x-icewarden-signature");
  if (timestamp.empty() || signature.empty())
    return ErrorReply(401, "unauthorized",
                      "missing X-Icewarden-Timestamp or X-Icewarden-Signature: sign "
                      "\"<timestamp>.<body>\" with HMAC-SHA256 and send sha256=<hex>");
  std::int64_t seconds = 0;
  auto [end, ec] = std::from_chars(timestamp.data(), timestamp.data() + timestamp.size(), seconds);
  if (ec != std::errc() || end != timestamp.data() + timestamp.size() || seconds <= 0)
    return ErrorReply(400, "bad_request",
                      "X-Icewarden-Timestamp must be unix seconds, e.g. 1767225600");
  const std::string_view hex = std::string_view(signature).substr(
      signature.rfind(kSignaturePrefix, 0) == 0 ? kSignaturePrefix.size() : signature.size());
  if (signature.rfind(kSignaturePrefix, 0) != 0 || hex.size() != 64 || !IsLowerHex(hex))
    return ErrorReply(401, "bad_signature",
                      "X-Icewarden-Signature must be sha256= followed by 64 lower-case hex digits");
  // The signature before anything else: nothing unauthenticated is parsed or looked up.
  const std::string expected =
      HmacSha256Hex(endpoint->secret.value(), timestamp + "." + request.body);
  if (!ConstantTimeEquals(hex, expected))
    return ErrorReply(
        401, "bad_signature",
        "the signature does not match the body and timestamp for webhook '" + name + "'");
  const std::int64_t now_ms = d_.clock->Now();
  const std::int64_t skew_ms = now_ms - seconds * 1000;
  if (skew_ms > endpoint->max_skew.count() || -skew_ms > endpoint->max_skew.count())
    return ErrorReply(401, "stale_timestamp",
                      "X-Icewarden-Timestamp " + timestamp + " is " +
                          std::to_string((skew_ms < 0 ? -skew_ms : skew_ms) / 1000) +
                          " s from now; webhook '" + name + "' accepts at most " +
                          std::to_string(endpoint->max_skew.count() / 1000) + " s");

  WebhookAlert a;
  a.key = "generic/" + name + ":" + std::string(hex);
  a.source = "generic/" + name;
  a.actor = "webhook:generic/" + name;
  a.via = "generic/" + name;
  a.remote = request.remote;
  a.via_alertmanager = false;
  a.record_always = true;
  std::lock_guard lock(mu_);
  auto seen = d_.store->GetWebhookDelivery(a.key);
  if (!seen.ok())
    return ErrorReply(503, "unavailable",
                      "nothing was recorded; retry: " + seen.status().message());
  if (seen->has_value())
    return ErrorReply(409, "replay",
                      "this signature was accepted before (a replayed request); sign every "
                      "delivery with a fresh timestamp");
  if (Status s = ReadEvent(request.body, &a); !s.ok())
    return ErrorReply(400, "bad_request", s.message());
  // The event's id names the episode: its resolved event undoes what its firing did.
  a.starts_at = "";
  WebhookTally tally;
  if (a.status == "firing") {
    Fire(a, tally);
  } else {
    Resolve(a, tally);
  }
  return tally.Reply(0);
}

}  // namespace icewarden
