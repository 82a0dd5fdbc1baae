#include "tests/fakes/fake_action.h"

#include <algorithm>
#include <cstdlib>

namespace icewarden::testing {
namespace {

bool HasTemplate(const nlohmann::json& v) {
  return v.is_string() && v.get<std::string>().find("${") != std::string::npos;
}

std::string Article(const std::string& type) {
  return (type == "integer" || type == "object" || type == "array") ? "an " + type : "a " + type;
}

using Spec = std::map<std::string, FakeParamSpec>;

FakeParamSpec Str(bool required = false, std::vector<std::string> one_of = {}) {
  return {"string", required, std::move(one_of)};
}
FakeParamSpec Int() { return {"integer", false, {}}; }
FakeParamSpec Bool() { return {"boolean", false, {}}; }
FakeParamSpec Obj() { return {"object", false, {}}; }
FakeParamSpec Any() { return {"any", false, {}}; }

std::vector<ParamError> CheckDnsRecords(const nlohmann::json& params) {
  std::vector<ParamError> errors;
  if (!params.contains("records") || !params["records"].is_array()) return errors;
  const Spec record = {{"name", Str(true)},
                       {"type", Str(true, {"CNAME", "A", "AAAA", "TXT"})},
                       {"value", Str()},
                       {"ttl", Int()},
                       {"op", Str(false, {"add", "replace", "delete"})}};
  const auto& records = params["records"];
  for (size_t i = 0; i < records.size(); ++i) {
    std::string path = "records[" + std::to_string(i) + "]";
    if (!records[i].is_object()) {
      errors.push_back({path, "expected a mapping with name, type, value, ttl, op"});
      continue;
    }
    for (const auto& [key, spec] : record) {
      if (!records[i].contains(key)) {
        if (spec.required) errors.push_back({path + "." + key, "missing required param"});
        continue;
      }
      std::string problem = CheckFakeParam(records[i][key], spec);
      if (!problem.empty()) errors.push_back({path + "." + key, problem});
    }
  }
  return errors;
}

}  // namespace

std::string CheckFakeParam(const nlohmann::json& value, const FakeParamSpec& spec) {
  const std::string& t = spec.type;
  bool fits = t == "any" || (t == "string" && value.is_string()) ||
              (t == "integer" && value.is_number_integer()) ||
              (t == "number" && value.is_number()) || (t == "boolean" && value.is_boolean()) ||
              (t == "object" && value.is_object()) || (t == "array" && value.is_array());
  if (!fits) return "expected " + Article(t) + ", got " + value.dump();
  if (t == "string" && !spec.one_of.empty() && !HasTemplate(value) &&
      std::find(spec.one_of.begin(), spec.one_of.end(), value.get<std::string>()) ==
          spec.one_of.end()) {
    std::string list;
    for (const auto& c : spec.one_of) list += (list.empty() ? "" : "|") + c;
    return "expected one of " + list + ", got " + value.dump();
  }
  return "";
}

FakeAction::FakeAction(std::string kind, std::map<std::string, FakeParamSpec> spec, bool strict)
    : kind_(std::move(kind)), spec_(std::move(spec)), strict_(strict) {}

std::vector<ParamError> FakeAction::Validate(const nlohmann::json& params) const {
  std::vector<ParamError> errors;
  if (!params.is_object()) return {{"", "expected a mapping"}};
  for (const auto& [key, spec] : spec_) {
    if (!params.contains(key)) {
      if (spec.required) errors.push_back({key, "missing required param"});
      continue;
    }
    std::string problem = CheckFakeParam(params[key], spec);
    if (!problem.empty()) errors.push_back({key, problem});
  }
  if (strict_) {
    for (auto it = params.begin(); it != params.end(); ++it) {
      if (spec_.count(it.key()) == 0) errors.push_back({it.key(), "unknown param"});
    }
  }
  if (extra_validate) {
    for (auto& e : extra_validate(params)) errors.push_back(std::move(e));
  }
  return errors;
}

std::string FakeAction::Plan(const nlohmann::json& params) const {
  return kind_ + " " + params.dump();
}

ActionResult FakeAction::Run(const nlohmann::json& params, const ActionContext&) {
  runs.push_back(params);
  return ActionResult::Succeeded(kind_ + " ran");
}

ActionRegistry FakeBuiltinRegistry() {
  std::vector<std::unique_ptr<FakeAction>> kinds;
  auto add = [&](std::string kind, Spec spec) {
    kinds.push_back(std::make_unique<FakeAction>(std::move(kind), std::move(spec), true));
    return kinds.back().get();
  };
  FakeAction* dns =
      add("dns.rfc2136", {{"server", Str(true)},
                          {"zone", Str(true)},
                          {"tsig_key_name", Str()},
                          {"tsig_algorithm", Str(false, {"hmac-sha256", "hmac-sha512"})},
                          {"tsig_secret", Str()},
                          {"records", {"array", true, {}}}});
  dns->extra_validate = CheckDnsRecords;
  add("ownership.transfer",
      {{"scope", Str()}, {"write_catalog_properties", Bool()}, {"concurrency", Int()}});
  add("alert.alertmanager", {{"url", Str(true)},
                             {"labels", Obj()},
                             {"annotations", Obj()},
                             {"ends_in", Str()},
                             {"generator_url", Str()},
                             {"headers", Obj()}});
  add("alert.webhook", {{"url", Str(true)},
                        {"format", Str(false, {"generic", "slack", "pagerduty"})},
                        {"routing_key", Str()},
                        {"hmac_secret", Str()}});
  add("http.request", {{"method", Str()},
                       {"url", Str(true)},
                       {"headers", Obj()},
                       {"body", Any()},
                       {"expect_status", Int()}});
  add("verify.catalog_healthy", {{"region", Str(true)}});
  add("verify.replica_caught_up", {{"region", Str(true)}, {"max_lag", Str()}});
  add("verify.ownership_markers",
      {{"region", Str()}, {"scope", Str()}, {"allow_missing", Bool()}, {"concurrency", Int()}});
  add("switchover.demotion_token", {{"region", Str()},
                                    {"owner", Str()},
                                    {"scope", Str()},
                                    {"within", Str()},
                                    {"poll_interval", Str()},
                                    {"concurrency", Int()}});
  add("verify.dns",
      {{"server", Str(true)}, {"name", Str(true)}, {"type", Str()}, {"expect", Str()}});
  add("wait", {{"duration", Str()}, {"until", Str()}});
  add("fence.http", {{"url", Str(true)},
                     {"method", Str()},
                     {"headers", Obj()},
                     {"body", Any()},
                     {"expect_status", Int()}});
  add("fence.catalog_quiet", {{"region", Str(true)}, {"window", Str()}, {"poll_interval", Str()}});
  ActionRegistry registry;
  for (auto& k : kinds) {
    Status s = registry.Register(std::move(k));
    if (!s.ok()) std::abort();
  }
  return registry;
}

}  // namespace icewarden::testing
