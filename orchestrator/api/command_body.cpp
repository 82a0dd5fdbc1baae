#include "orchestrator/api/command_body.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace icewarden {

using nlohmann::json;

ApiResponse BadRequestResponse(const std::string& message) {
  return JsonErrorResponse(400, "bad_request", message);
}

ApiResponse StoreErrorResponse(const Status& status) {
  return JsonErrorResponse(500, "store_error", "state store failed: " + status.ToString());
}

// The body as an object holding only `allowed` fields; a string error otherwise.
Result<json> ReadBody(const std::string& body, const std::vector<std::string>& allowed) {
  if (body.empty()) return Status::InvalidArgument("the request needs a JSON object body");
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::InvalidArgument("the body is not valid JSON");
  if (!doc.is_object()) return Status::InvalidArgument("the body must be a JSON object");
  for (const auto& [key, value] : doc.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Status::InvalidArgument("unknown field '" + key + "'; this request takes " + list);
    }
  }
  return doc;
}

// A string field: absent is "", anything but a string is an error.
Status StringField(const json& doc, const std::string& key, std::string* out) {
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return Status::InvalidArgument(key + " must be a string");
  *out = it->get<std::string>();
  return Status::Ok();
}

int HttpStatusOf(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kFailedPrecondition:
    case StatusCode::kConflict:
      return 409;
    case StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

const char* ErrorCodeOf(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      return "bad_request";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kPermissionDenied:
      return "forbidden";
    case StatusCode::kFailedPrecondition:
      return "refused";
    case StatusCode::kConflict:
      return "conflict";
    case StatusCode::kUnavailable:
      return "unavailable";
    default:
      return "store_error";
  }
}

}  // namespace icewarden
