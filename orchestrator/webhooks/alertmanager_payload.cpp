// Alertmanager's webhook payload, version 4 (prometheus/alertmanager notify/webhook):
//
//   {"version":"4", "groupKey":..., "truncatedAlerts":0, "status":"firing|resolved",
//    "receiver":..., "groupLabels":{}, "commonLabels":{}, "commonAnnotations":{},
//    "externalURL":..., "alerts":[{"status","labels","annotations","startsAt","endsAt",
//    "generatorURL","fingerprint"}]}
//
// Only what icewarden acts on is read and required; everything else is ignored, because
// newer Alertmanagers add fields and a receiver that refused them would drop alerts.
//
// On simdjson's DOM: every delivery is parsed, re-deliveries included (Alertmanager re-sends
// each group every repeat_interval), and nlohmann's parse was most of what a re-delivery cost
// (tests/bench/webhook_bench).
#include <simdjson.h>

#include <optional>
#include <string>
#include <tuple>

#include "orchestrator/webhooks/webhooks.h"

namespace icewarden {
namespace {

namespace dom = simdjson::dom;

// The field, or nullopt when it is absent or null.
std::optional<dom::element> Field(dom::object obj, std::string_view key) {
  dom::element e;
  if (obj.at_key(key).get(e) != simdjson::SUCCESS || e.is_null()) return std::nullopt;
  return e;
}

Status ReadString(dom::object obj, std::string_view key, bool required, const std::string& where,
                  std::string* out) {
  auto e = Field(obj, key);
  if (!e) {
    if (required) return Status::InvalidArgument(where + std::string(key) + " is missing");
    return Status::Ok();
  }
  std::string_view v;
  if (e->get_string().get(v) != simdjson::SUCCESS)
    return Status::InvalidArgument(where + std::string(key) + " must be a string");
  *out = std::string(v);
  return Status::Ok();
}

Status ReadLabels(dom::object obj, std::string_view key, bool required, const std::string& where,
                  LabelSet* out) {
  auto e = Field(obj, key);
  if (!e) {
    if (required) return Status::InvalidArgument(where + std::string(key) + " is missing");
    return Status::Ok();
  }
  dom::object labels;
  if (e->get_object().get(labels) != simdjson::SUCCESS)
    return Status::InvalidArgument(where + std::string(key) + " must be an object of strings");
  for (dom::key_value_pair kv : labels) {
    std::string_view value;
    if (kv.value.get_string().get(value) != simdjson::SUCCESS)
      return Status::InvalidArgument(where + std::string(key) + "." + std::string(kv.key) +
                                     " must be a string");
    (*out)[std::string(kv.key)] = std::string(value);
  }
  return Status::Ok();
}

Status ReadStatus(dom::object obj, const std::string& where, std::string* out) {
  if (Status s = ReadString(obj, "status", true, where, out); !s.ok()) return s;
  if (*out != "firing" && *out != "resolved")
    return Status::InvalidArgument(where + "status must be firing or resolved, got '" + *out + "'");
  return Status::Ok();
}

Status ReadAlert(dom::element e, std::size_t i, AlertmanagerAlert* alert) {
  dom::object a;
  if (e.get_object().get(a) != simdjson::SUCCESS)
    return Status::InvalidArgument("alerts[" + std::to_string(i) + "] must be an object");
  const std::string where = "alerts[" + std::to_string(i) + "].";
  if (Status s = ReadStatus(a, where, &alert->status); !s.ok()) return s;
  if (Status s = ReadLabels(a, "labels", true, where, &alert->labels); !s.ok()) return s;
  if (Status s = ReadLabels(a, "annotations", false, where, &alert->annotations); !s.ok()) return s;
  for (auto [key, out, required] : {std::tuple{"startsAt", &alert->starts_at, true},
                                    {"endsAt", &alert->ends_at, false},
                                    {"generatorURL", &alert->generator_url, false},
                                    {"fingerprint", &alert->fingerprint, true}})
    if (Status s = ReadString(a, key, required, where, out); !s.ok()) return s;
  if (alert->fingerprint.empty())
    return Status::InvalidArgument(where + "fingerprint must not be empty");
  return Status::Ok();
}

}  // namespace

Result<AlertmanagerPayload> ParseAlertmanagerPayload(std::string_view body) {
  if (body.empty())
    return Status::InvalidArgument("the body is empty; expected Alertmanager's webhook JSON");
  // One parser per thread: its buffers grow to the largest body seen and are reused, and a
  // parser is not to be shared between threads.
  thread_local dom::parser parser;
  dom::element root;
  if (parser.parse(body.data(), body.size()).get(root) != simdjson::SUCCESS)
    return Status::InvalidArgument("the body is not valid JSON");
  dom::object doc;
  if (root.get_object().get(doc) != simdjson::SUCCESS)
    return Status::InvalidArgument("the body must be a JSON object");
  AlertmanagerPayload p;
  if (Status s = ReadString(doc, "version", true, "", &p.version); !s.ok()) return s;
  if (p.version != "4")
    return Status::FailedPrecondition("unsupported payload version '" + p.version +
                                      "': icewarden reads Alertmanager's webhook version 4");
  for (auto [key, out, required] : {std::tuple{"groupKey", &p.group_key, true},
                                    {"receiver", &p.receiver, false},
                                    {"externalURL", &p.external_url, false}})
    if (Status s = ReadString(doc, key, required, "", out); !s.ok()) return s;
  if (Status s = ReadStatus(doc, "", &p.status); !s.ok()) return s;
  if (auto t = Field(doc, "truncatedAlerts")) {
    std::int64_t n = 0;
    if (t->get_int64().get(n) != simdjson::SUCCESS || n < 0)
      return Status::InvalidArgument("truncatedAlerts must be a whole number >= 0");
    p.truncated_alerts = n;
  }
  auto alerts = Field(doc, "alerts");
  if (!alerts) return Status::InvalidArgument("alerts is missing");
  dom::array list;
  if (alerts->get_array().get(list) != simdjson::SUCCESS)
    return Status::InvalidArgument("alerts must be an array");
  std::size_t i = 0;
  for (dom::element e : list) {
    AlertmanagerAlert alert;
    if (Status s = ReadAlert(e, i++, &alert); !s.ok()) return s;
    p.alerts.push_back(std::move(alert));
  }
  return p;
}

}  // namespace icewarden
