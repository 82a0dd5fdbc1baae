// The `regions` section: catalogs, their credentials and their probe settings (TLS is in
// catalog_tls.cpp).

#include <algorithm>
#include <charconv>
#include <map>

#include "orchestrator/config/schema.h"
#include "state/types.h"

namespace icewarden {

using namespace std::chrono_literals;
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

CatalogAuthConfig ReadAuth(const YamlValue& value, const ConfigSources& sources) {
  // Which keys belong to which type; a key of another type is a mistake worth naming.
  static const std::map<std::string, std::string> kKeyType = {
      {"token_env", "bearer"},         {"token_file", "bearer"},         {"client_id", "oauth2"},
      {"client_secret_env", "oauth2"}, {"client_secret_file", "oauth2"}, {"scope", "oauth2"},
      {"token_uri", "oauth2"}};
  std::vector<std::string> allowed = {"type"};
  for (const auto& [key, type] : kKeyType) allowed.push_back(key);

  CatalogAuthConfig auth;
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
    auth.kind = CatalogAuthConfig::Kind::kBearer;
    if (auto s = ReadSecret(*map, "token_env", "token_file", sources)) auth.token = s->secret;
  } else if (*type == "oauth2") {
    auth.kind = CatalogAuthConfig::Kind::kOAuth2;
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

const std::vector<std::string> kProbeKinds = {"catalog_config", "table_load", "canary_commit",
                                              "tcp", "dns"};

bool IsHostPort(const std::string& s) { return ParseHostPort(s).has_value(); }

// kinds, canary_table, tcp and dns: what a probe round checks, and each kind's target.
void ReadProbeTargets(const YamlMap& map, ProbeSettings* p) {
  if (auto v = map.Get("kinds")) {
    if (auto items = v->List()) {
      std::vector<std::string> kinds;
      for (const auto& item : *items) {
        auto kind = item.OneOf(kProbeKinds);
        if (!kind) continue;
        if (std::find(kinds.begin(), kinds.end(), *kind) != kinds.end())
          item.Error("probe kind '" + *kind + "' is listed twice");
        else
          kinds.push_back(*kind);
      }
      if (items->empty()) v->Error("must list at least one probe kind");
      if (!kinds.empty()) p->kinds = kinds;
    }
  }
  if (auto v = map.Get("canary_table")) {
    if (auto s = v->String()) {
      if (!TableIdent::Parse(*s))
        v->Error("expected NAMESPACE.TABLE (e.g. sales.orders), got " + v->Describe());
      else
        p->canary_table = *s;
    }
  }
  if (auto v = map.Get("tcp")) {
    if (auto s = v->String()) {
      if (!IsHostPort(*s))
        v->Error("expected HOST:PORT, got " + v->Describe());
      else
        p->tcp_address = *s;
    }
  }
  if (auto v = map.Get("dns")) {
    if (auto dns = v->Map({"name", "server", "expect"})) {
      if (auto n = dns->Require("name")) {
        if (auto s = n->String()) p->dns_name = *s;
      }
      if (auto n = dns->Require("server")) {
        if (auto s = n->String()) {
          if (!IsHostPort(*s))
            n->Error("expected HOST:PORT of a DNS server, got " + n->Describe());
          else
            p->dns_server = *s;
        }
      }
      dns->Read("expect", &p->dns_expect);
    }
  }
  auto wants = [&](const char* kind) {
    return std::find(p->kinds.begin(), p->kinds.end(), kind) != p->kinds.end();
  };
  if ((wants("table_load") || wants("canary_commit")) && p->canary_table.empty()) {
    if (auto v = map.Get("kinds")) v->Error("table_load and canary_commit need probe.canary_table");
  }
  if (wants("dns") && p->dns_name.empty() && !map.Has("dns")) {
    if (auto v = map.Get("kinds")) v->Error("the dns probe needs probe.dns with name and server");
  }
}

}  // namespace

std::optional<HostPort> ParseHostPort(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  const std::string_view digits = text.substr(colon + 1);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return std::nullopt;
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return std::nullopt;  // an IPv6 host needs brackets
  }
  unsigned port = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || port == 0 ||
      port > 65535)
    return std::nullopt;
  return HostPort{std::string(host), static_cast<std::uint16_t>(port)};
}

void ReadProbe(const YamlValue& value, ProbeSettings* probe) {
  auto map =
      value.Map({"interval", "timeout", "fall", "rise", "kinds", "canary_table", "tcp", "dns"});
  if (!map) return;
  ProbeSettings p = *probe;
  bool ok = true;
  ReadProbeTargets(*map, &p);
  // Probes run on timers: an interval under 100ms is a load test, over an hour no health check.
  if (map->Get("interval") && !ReadWithin(*map, "interval", &p.interval, 100ms, 1h)) ok = false;
  if (map->Get("timeout") && !ReadWithin(*map, "timeout", &p.timeout, 1ms, 1h)) ok = false;
  ReadWithin(*map, "fall", &p.fall, 1, 100);
  ReadWithin(*map, "rise", &p.rise, 1, 100);
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
    auto map = item.Map({"name", "catalog_uri", "warehouse", "auth", "tls", "probe"});
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
    if (auto v = map->Get("tls")) region.tls = ReadCatalogTls(*v, region, sources);
    if (auto v = map->Get("probe")) ReadProbe(*v, &region.probe);
    regions.push_back(std::move(region));
  }
  return regions;
}

}  // namespace icewarden
