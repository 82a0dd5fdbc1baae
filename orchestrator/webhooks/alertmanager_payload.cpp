// Alertmanager's webhook payload, version 4 (prometheus/alertmanager notify/webhook):
//
//   {"version":"4", "groupKey":..., "truncatedAlerts":0, "status":"firing|resolved",
//    "receiver":..., "groupLabels":{}, "commonLabels":{}, "commonAnnotations":{},
//    "externalURL":..., "alerts":[{"status","labels","annotations","startsAt","endsAt",
//    "generatorURL","fingerprint"}]}
//
// Only what icewarden acts on is read and required; everything else is ignored, because
// newer Alertmanagers add fields and a receiver that refused them would drop alerts.
#include <nlohmann/json.hpp>

#include "orchestrator/webhooks/webhooks.h"

namespace icewarden {
namespace {

using nlohmann::json;

Status ReadString(const json& obj, const char* key, bool required, const std::string& where,
                  std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return Status::InvalidArgument(where + key + " is missing");
    return Status::Ok();
  }
  if (!it->is_string()) return Status::InvalidArgument(where + key + " must be a string");
  *out = it->get<std::string>();
  return Status::Ok();
}

Status ReadLabels(const json& obj, const char* key, bool required, const std::string& where,
                  LabelSet* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return Status::InvalidArgument(where + key + " is missing");
    return Status::Ok();
  }
  if (!it->is_object())
    return Status::InvalidArgument(where + key + " must be an object of strings");
  for (const auto& [name, value] : it->items()) {
    if (!value.is_string())
      return Status::InvalidArgument(where + key + "." + name + " must be a string");
    (*out)[name] = value.get<std::string>();
  }
  return Status::Ok();
}

Status ReadStatus(const json& obj, const std::string& where, std::string* out) {
  if (Status s = ReadString(obj, "status", true, where, out); !s.ok()) return s;
  if (*out != "firing" && *out != "resolved")
    return Status::InvalidArgument(where + "status must be firing or resolved, got '" + *out + "'");
  return Status::Ok();
}

}  // namespace

Result<AlertmanagerPayload> ParseAlertmanagerPayload(std::string_view body) {
  if (body.empty())
    return Status::InvalidArgument("the body is empty; expected Alertmanager's webhook JSON");
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::InvalidArgument("the body is not valid JSON");
  if (!doc.is_object()) return Status::InvalidArgument("the body must be a JSON object");
  AlertmanagerPayload p;
  if (Status s = ReadString(doc, "version", true, "", &p.version); !s.ok()) return s;
  if (p.version != "4")
    return Status::FailedPrecondition("unsupported payload version '" + p.version +
                                      "': icewarden reads Alertmanager's webhook version 4");
  for (auto [key, out] : {std::pair{"groupKey", &p.group_key},
                          {"receiver", &p.receiver},
                          {"externalURL", &p.external_url}})
    if (Status s = ReadString(doc, key, std::string(key) == "groupKey", "", out); !s.ok()) return s;
  if (Status s = ReadStatus(doc, "", &p.status); !s.ok()) return s;
  if (auto it = doc.find("truncatedAlerts"); it != doc.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0)
      return Status::InvalidArgument("truncatedAlerts must be a whole number >= 0");
    p.truncated_alerts = it->get<std::int64_t>();
  }
  auto alerts = doc.find("alerts");
  if (alerts == doc.end() || alerts->is_null()) return Status::InvalidArgument("alerts is missing");
  if (!alerts->is_array()) return Status::InvalidArgument("alerts must be an array");
  for (std::size_t i = 0; i < alerts->size(); ++i) {
    const json& a = (*alerts)[i];
    const std::string where = "alerts[" + std::to_string(i) + "].";
    if (!a.is_object())
      return Status::InvalidArgument("alerts[" + std::to_string(i) + "] must be an object");
    AlertmanagerAlert alert;
    if (Status s = ReadStatus(a, where, &alert.status); !s.ok()) return s;
    if (Status s = ReadLabels(a, "labels", true, where, &alert.labels); !s.ok()) return s;
    if (Status s = ReadLabels(a, "annotations", false, where, &alert.annotations); !s.ok())
      return s;
    for (auto [key, out, required] : {std::tuple{"startsAt", &alert.starts_at, true},
                                      {"endsAt", &alert.ends_at, false},
                                      {"generatorURL", &alert.generator_url, false},
                                      {"fingerprint", &alert.fingerprint, true}})
      if (Status s = ReadString(a, key, required, where, out); !s.ok()) return s;
    if (alert.fingerprint.empty())
      return Status::InvalidArgument(where + "fingerprint must not be empty");
    p.alerts.push_back(std::move(alert));
  }
  return p;
}

}  // namespace icewarden
