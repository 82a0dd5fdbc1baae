#include "examples/lab/view_metadata.h"

#include <algorithm>

namespace icewarden::lab {
namespace {

// A schema as the spec's Schema: a struct with a list of fields.
bool IsViewSchema(const json& schema) {
  return schema.is_object() && schema.value("type", "") == "struct" && schema.contains("fields") &&
         schema["fields"].is_array();
}

// A ViewVersion's required members (its version-id and schema-id are the catalog's to assign).
std::string ViewVersionProblem(const json& version) {
  if (!version.is_object()) return "view-version must be an object";
  if (!version.contains("representations") || !version["representations"].is_array()) {
    return "view-version.representations must be a list";
  }
  for (const auto& representation : version["representations"]) {
    if (!representation.is_object() || !representation.value("type", json()).is_string() ||
        !representation.value("sql", json()).is_string() ||
        !representation.value("dialect", json()).is_string()) {
      return "each view-version representation needs type, sql and dialect strings";
    }
  }
  if (!version.contains("default-namespace") || !version["default-namespace"].is_array()) {
    return "view-version.default-namespace must be a list of strings";
  }
  if (version.contains("summary") && !version["summary"].is_object()) {
    return "view-version.summary must be an object";
  }
  return "";
}

bool IsStringMap(const json& value) {
  if (!value.is_object()) return false;
  return std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); });
}

int MaxId(const json& list, const char* key) {
  int highest = -1;
  for (const auto& entry : list) highest = std::max(highest, entry.value(key, -1));
  return highest;
}

}  // namespace

NewViewResult NewViewMetadata(const json& request, const std::string& default_location,
                              int64_t now_ms) {
  NewViewResult result;
  if (!request.is_object() || !request.value("name", json()).is_string() ||
      request["name"].get<std::string>().empty()) {
    result.error = "name must be a non-empty string";
    return result;
  }
  if (!request.contains("schema") || !IsViewSchema(request["schema"])) {
    result.error = "schema must be a struct schema with fields";
    return result;
  }
  json version = request.value("view-version", json());
  if (std::string problem = ViewVersionProblem(version); !problem.empty()) {
    result.error = problem;
    return result;
  }
  json properties = request.value("properties", json::object());
  if (!IsStringMap(properties)) {
    result.error = "properties must map strings to strings";
    return result;
  }
  json location = request.value("location", json(default_location));
  if (!location.is_string()) {
    result.error = "location must be a string";
    return result;
  }
  json schema = request["schema"];
  schema["schema-id"] = 0;
  version["version-id"] = 1;
  version["schema-id"] = 0;  // the spec: replaced with the id assigned to the schema
  if (!version.contains("timestamp-ms")) version["timestamp-ms"] = now_ms;
  if (!version.contains("summary")) version["summary"] = json::object();
  result.metadata = {
      {"view-uuid", NewUuid()},
      {"format-version", 1},
      {"location", location},
      {"current-version-id", 1},
      {"versions", json::array({version})},
      {"version-log",
       json::array({{{"version-id", 1}, {"timestamp-ms", version["timestamp-ms"]}}})},
      {"schemas", json::array({schema})},
      {"properties", properties}};
  return result;
}

CommitApplication ApplyViewCommit(const json& current, const json& request, int64_t now_ms) {
  CommitApplication result;
  auto fail = [&](CommitVerdict verdict, std::string message) {
    result.verdict = verdict;
    result.message = std::move(message);
    result.metadata = nullptr;
    return result;
  };
  if (!request.is_object() || !request.value("updates", json()).is_array()) {
    return fail(CommitVerdict::kBadRequest, "a view commit needs a list of updates");
  }
  json requirements = request.value("requirements", json::array());
  if (!requirements.is_array()) {
    return fail(CommitVerdict::kBadRequest, "requirements must be a list");
  }
  for (const auto& requirement : requirements) {
    if (!requirement.is_object() || requirement.value("type", "") != "assert-view-uuid" ||
        !requirement.value("uuid", json()).is_string()) {
      return fail(CommitVerdict::kBadRequest,
                  "the only view requirement is assert-view-uuid with a uuid");
    }
    if (requirement["uuid"] != current["view-uuid"]) {
      return fail(CommitVerdict::kConflict, "Requirement failed: view uuid changed: expected " +
                                                requirement["uuid"].get<std::string>() +
                                                " != " + current["view-uuid"].get<std::string>());
    }
  }
  json metadata = current;
  int last_schema = -1;
  int last_version = -1;
  for (const auto& update : request["updates"]) {
    const std::string action = update.is_object() ? update.value("action", "") : "";
    if (action == "assign-uuid") {
      if (update.value("uuid", json()) != metadata["view-uuid"]) {
        return fail(CommitVerdict::kBadRequest, "assign-uuid cannot change a view's uuid");
      }
    } else if (action == "upgrade-format-version") {
      if (update.value("format-version", 0) != 1) {
        return fail(CommitVerdict::kBadRequest, "views have format-version 1 only");
      }
    } else if (action == "add-schema") {
      if (!update.contains("schema") || !IsViewSchema(update["schema"])) {
        return fail(CommitVerdict::kBadRequest, "add-schema needs a struct schema with fields");
      }
      json schema = update["schema"];
      last_schema = MaxId(metadata["schemas"], "schema-id") + 1;
      schema["schema-id"] = last_schema;
      metadata["schemas"].push_back(schema);
    } else if (action == "set-location") {
      if (!update.value("location", json()).is_string()) {
        return fail(CommitVerdict::kBadRequest, "set-location needs a location");
      }
      metadata["location"] = update["location"];
    } else if (action == "set-properties") {
      if (!IsStringMap(update.value("updates", json()))) {
        return fail(CommitVerdict::kBadRequest, "set-properties needs updates (strings)");
      }
      for (const auto& [key, value] : update["updates"].items())
        metadata["properties"][key] = value;
    } else if (action == "remove-properties") {
      if (!update.value("removals", json()).is_array()) {
        return fail(CommitVerdict::kBadRequest, "remove-properties needs removals");
      }
      for (const auto& key : update["removals"]) {
        if (key.is_string()) metadata["properties"].erase(key.get<std::string>());
      }
    } else if (action == "add-view-version") {
      json version = update.value("view-version", json());
      if (std::string problem = ViewVersionProblem(version); !problem.empty()) {
        return fail(CommitVerdict::kBadRequest, "add-view-version: " + problem);
      }
      int schema_id = version.value("schema-id", -1);
      if (schema_id == -1) schema_id = last_schema;
      const auto& schemas = metadata["schemas"];
      if (std::none_of(schemas.begin(), schemas.end(),
                       [&](const json& s) { return s.value("schema-id", -2) == schema_id; })) {
        return fail(CommitVerdict::kBadRequest, "add-view-version names schema " +
                                                    std::to_string(schema_id) +
                                                    ", which the view does not have");
      }
      last_version = MaxId(metadata["versions"], "version-id") + 1;
      version["version-id"] = last_version;
      version["schema-id"] = schema_id;
      if (!version.contains("timestamp-ms")) version["timestamp-ms"] = now_ms;
      if (!version.contains("summary")) version["summary"] = json::object();
      metadata["versions"].push_back(version);
    } else if (action == "set-current-view-version") {
      if (!update.value("view-version-id", json()).is_number_integer()) {
        return fail(CommitVerdict::kBadRequest, "set-current-view-version needs view-version-id");
      }
      int id = update["view-version-id"].get<int>();
      if (id == -1) id = last_version;
      const auto& versions = metadata["versions"];
      auto found = std::find_if(versions.begin(), versions.end(),
                                [&](const json& v) { return v.value("version-id", -2) == id; });
      if (found == versions.end()) {
        return fail(CommitVerdict::kBadRequest,
                    "set-current-view-version: no view version " + std::to_string(id));
      }
      if (metadata["current-version-id"] != id) {
        metadata["current-version-id"] = id;
        metadata["version-log"].push_back({{"version-id", id}, {"timestamp-ms", now_ms}});
      }
    } else {
      return fail(CommitVerdict::kBadRequest,
                  "unsupported view update '" + action +
                      "' (the lab applies assign-uuid, "
                      "upgrade-format-version, add-schema, set-location, set-properties, "
                      "remove-properties, add-view-version and set-current-view-version)");
    }
  }
  if (metadata == current) {
    result.verdict = CommitVerdict::kUnchanged;
    return result;
  }
  result.metadata = std::move(metadata);
  return result;
}

}  // namespace icewarden::lab
