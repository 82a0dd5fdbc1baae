// The `regions` section: catalogs, their credentials and their probe settings.

#include <algorithm>
#include <map>

#include "orchestrator/config_schema.h"

namespace icewarden {
namespace {

bool IsRegionName(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

void ReadUrl(const YamlMap& map, const std::string& key, bool required, std::string* out) {
  auto v = required ? map.Require(key) : map.Get(key);
  if (!v) return;
  auto s = v->String();
  if (!s) return;
  if (!IsHttpUrl(*s)) {
    v->Error("expected an http:// or https:// URL, got " + v->Describe());
    return;
  }
  *out = *s;
}

CatalogAuth ReadAuth(const YamlValue& value, const ConfigSources& sources) {
  // Which keys belong to which type; a key of another type is a mistake worth naming.
  static const std::map<std::string, std::string> kKeyType = {
      {"token_env", "bearer"},         {"token_file", "bearer"},         {"client_id", "oauth2"},
      {"client_secret_env", "oauth2"}, {"client_secret_file", "oauth2"}, {"scope", "oauth2"},
      {"token_uri", "oauth2"}};
  std::vector<std::string> allowed = {"type"};
  for (const auto& [key, type] : kKeyType) allowed.push_back(key);

  CatalogAuth auth;
  auto map = value.Map(allowed);
  if (!map) return auth;
  auto type_value = map->Require("type");
  if (!type_value) return auth;
  auto type = type_value->OneOf({"none", "bearer", "oauth2"});
  if (!type) return auth;
  for (const auto& [key, key_type] : kKeyType) {
    if (key_type == *type) continue;
    if (auto v = map->Get(key)) {
      v->Error("is only used with type '" + key_type + "', not '" + *type + "'");
    }
  }
  if (*type == "bearer") {
    auth.kind = CatalogAuth::Kind::kBearer;
    if (auto s = ReadSecret(*map, "token_env", "token_file", sources)) auth.token = s->secret;
  } else if (*type == "oauth2") {
    auth.kind = CatalogAuth::Kind::kOAuth2;
    if (auto v = map->Require("client_id")) {
      if (auto s = v->String()) {
        if (s->empty()) v->Error("must not be empty");
        auth.client_id = *s;
      }
    }
    if (auto s = ReadSecret(*map, "client_secret_env", "client_secret_file", sources)) {
      auth.client_secret = s->secret;
    }
    map->Read("scope", &auth.scope);
    ReadUrl(*map, "token_uri", /*required=*/false, &auth.token_uri);
  }
  return auth;
}

}  // namespace

void ReadProbe(const YamlValue& value, ProbeSettings* probe) {
  auto map = value.Map({"interval", "timeout", "fall", "rise"});
  if (!map) return;
  ProbeSettings p = *probe;
  bool ok = true;
  for (const char* key : {"interval", "timeout"}) {
    auto* field = std::string(key) == "interval" ? &p.interval : &p.timeout;
    if (map->Read(key, field) && field->count() <= 0) {
      map->Get(key)->Error("must be longer than 0");
      ok = false;
    }
  }
  for (const char* key : {"fall", "rise"}) {
    int* field = std::string(key) == "fall" ? &p.fall : &p.rise;
    if (map->Read(key, field) && *field < 1) {
      map->Get(key)->Error("must be at least 1, got " + std::to_string(*field));
    }
  }
  // Reported where this mapping set one of the two; when both were inherited, the
  // mapping they came from has reported it already.
  if (ok && p.timeout >= p.interval) {
    auto at = map->Get("timeout");
    if (!at) at = map->Get("interval");
    if (at) {
      at->Error("the probe timeout (" + FormatDuration(p.timeout) +
                ") must be shorter than the interval (" + FormatDuration(p.interval) + ")");
    }
  }
  *probe = p;
}

std::vector<RegionConfig> ReadRegions(const YamlValue& value, const ProbeSettings& defaults,
                                      const ConfigSources& sources) {
  std::vector<RegionConfig> regions;
  auto items = value.List();
  if (!items) return regions;
  if (items->empty()) value.Error("must list at least one region");
  std::map<std::string, std::string> first_path_of_name;
  for (const auto& item : *items) {
    auto map = item.Map({"name", "catalog_uri", "warehouse", "auth", "probe"});
    if (!map) continue;
    RegionConfig region;
    region.probe = defaults;
    if (auto v = map->Require("name")) {
      if (auto name = v->String()) {
        region.name = *name;
        if (!IsRegionName(*name)) {
          v->Error("a region name may contain only lowercase letters, digits and '-', got " +
                   v->Describe());
        } else if (auto it = first_path_of_name.find(*name); it != first_path_of_name.end()) {
          v->Error("duplicate region name '" + *name + "' (first used at " + it->second + ")");
        } else {
          first_path_of_name[*name] = item.path();
        }
      }
    }
    ReadUrl(*map, "catalog_uri", /*required=*/true, &region.catalog_uri);
    map->Read("warehouse", &region.warehouse);
    if (auto v = map->Get("auth")) region.auth = ReadAuth(*v, sources);
    if (auto v = map->Get("probe")) ReadProbe(*v, &region.probe);
    regions.push_back(std::move(region));
  }
  return regions;
}

}  // namespace icewarden
