// The top of the config file and its small sections: api, state, ownership, policies; and
// how secrets and paths named in the file are resolved.

#include "orchestrator/config/schema.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include <unistd.h>

#include "state/digest.h"

namespace icewarden {

using namespace std::chrono_literals;
namespace {

// A secret is a token, not a document; anything larger is a wrong path.
constexpr size_t kMaxSecretBytes = 64 * 1024;

const std::vector<std::string> kRoleNames = {"viewer", "operator", "approver", "admin"};
const std::vector<std::string> kFencingEvidence = {
    "steps_and_quiet_window", "old_region_unreachable", "operator", "gateway_closed"};

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Durations in the config bound timers and sums of them ("max_staleness + retention_margin",
// "timeout + grace") on the steady clock; a month is more than any of them needs.
constexpr std::chrono::milliseconds kMaxPolicyDuration = std::chrono::hours(24 * 30);

ApiConfig ReadApi(const YamlValue& value, const ConfigSources& sources) {
  ApiConfig api;
  auto map = value.Map({"listen", "read_timeout", "write_timeout", "tokens", "tls"});
  if (!map) return api;
  if (auto v = map->Get("tls")) api.tls = ReadServerTls(*v, sources, /*client_ca=*/true);
  if (auto v = map->Get("listen")) {
    if (auto s = v->String()) {
      CheckListen(*v, *s);
      api.listen = *s;
    }
  }
  ReadWithin(*map, "read_timeout", &api.read_timeout, 1ms, 1h);
  ReadWithin(*map, "write_timeout", &api.write_timeout, 1ms, 1h);
  auto tokens = map->Get("tokens");
  if (!tokens) return api;
  auto items = tokens->List();
  if (!items) return api;
  std::map<std::string, std::string> first_path_of_name;
  std::vector<std::pair<std::string, std::string>> seen_digests;  // SHA-256 hex, path of its token
  for (const auto& item : *items) {
    auto token_map = item.Map({"name", "role", "token_env", "token_file", "token_sha256"});
    if (!token_map) continue;
    ApiToken token;
    if (auto v = token_map->Require("name")) {
      if (auto name = v->String()) {
        token.name = *name;
        if (name->empty()) {
          v->Error("must not be empty");
        } else if (auto it = first_path_of_name.find(*name); it != first_path_of_name.end()) {
          v->Error("duplicate token name '" + *name + "' (first used at " + it->second + ")");
        } else {
          first_path_of_name[*name] = item.path();
        }
      }
    }
    if (auto v = token_map->Require("role")) {
      if (auto role = v->OneOf(kRoleNames)) token.role = *ParseRole(*role);
    }
    // Tokens are told apart by digest, so a hashed one and a plain one can be compared too.
    auto remember = [&](const YamlValue& origin, std::string digest_hex) {
      auto same = std::find_if(seen_digests.begin(), seen_digests.end(),
                               [&](const auto& p) { return p.first == digest_hex; });
      if (same != seen_digests.end()) {
        // Naming the other token, never the value, is enough to find the mistake.
        origin.Error("this token has the same value as " + same->second +
                     "; every API token must be different");
      } else {
        seen_digests.emplace_back(std::move(digest_hex), item.path());
      }
    };
    if (auto hashed = token_map->Get("token_sha256")) {
      if (token_map->Get("token_env") || token_map->Get("token_file")) {
        hashed->Error("set one of 'token_env', 'token_file' or 'token_sha256', not several");
      } else if (auto hex = hashed->String()) {
        if (auto digest = ParseSha256Hex(*hex)) {
          token.token_sha256 = HexOf(*digest);
          remember(*hashed, token.token_sha256);
        } else {
          hashed->Error(
              "must be the 64 hex digits of the token's SHA-256, as `icewarden token hash` "
              "prints them");
        }
      }
    } else if (auto s = ReadSecret(*token_map, "token_env", "token_file", sources)) {
      remember(s->origin, Sha256Hex(s->secret.value()));
      token.token = s->secret;
    }
    api.tokens.push_back(std::move(token));
  }
  return api;
}

// `quorum_evidence`: the policy accepts old_region_unreachable, which with several replicas is
// a majority of state.etcd.replicas (orchestrator/watch/region_quorum.h).
EtcdStateConfig ReadEtcdState(const YamlValue& value, bool quorum_evidence,
                              const ConfigSources& sources) {
  using namespace std::chrono_literals;
  EtcdStateConfig etcd;
  auto map = value.Map({"endpoints", "prefix", "max_txn_ops", "timeout", "leader_ttl", "replica",
                        "advertise", "replicas", "tls", "auth"});
  if (!map) return etcd;
  if (auto v = map->Require("endpoints")) {
    if (auto items = v->List()) {
      for (const YamlValue& item : *items) {
        auto url = item.String();
        if (!url) continue;
        const bool https = url->rfind("https://", 0) == 0;
        const std::size_t host = https ? 8 : 7;
        if ((!https && url->rfind("http://", 0) != 0) ||
            url->find(':', host) == std::string::npos) {
          item.Error("expected http://HOST:PORT or https://HOST:PORT, got " + item.Describe());
        } else if (!etcd.endpoints.empty() &&
                   https != (etcd.endpoints.front().rfind("https://", 0) == 0)) {
          // One cluster speaks one scheme; falling back from https to http would send the
          // auth token in the clear.
          item.Error("mixes http:// and https:// (state.etcd.endpoints[0] is " +
                     etcd.endpoints.front() + "); every member of one cluster speaks the same");
        } else if (https && !map->Has("tls")) {
          item.Error(
              "an https:// endpoint needs state.etcd.tls.ca_file, the CA that signs the "
              "members' certificates");
        }
        etcd.endpoints.push_back(*url);
      }
      if (items->empty()) v->Error("must list at least one etcd endpoint");
    }
  }
  if (auto v = map->Get("tls")) etcd.tls = ReadEtcdTls(*v, etcd.endpoints, sources);
  if (auto v = map->Get("auth")) etcd.auth = ReadEtcdAuth(*v, sources);
  if (map->Read("prefix", &etcd.prefix) && (etcd.prefix.empty() || etcd.prefix.back() != '/'))
    map->Get("prefix")->Error("must end with '/', e.g. '/icewarden/'");
  ReadWithin(*map, "max_txn_ops", &etcd.max_txn_ops, 8, 100000);
  ReadWithin(*map, "timeout", &etcd.timeout, 100ms, 1min);
  // Whole seconds: etcd leases are granted in seconds.
  if (ReadWithin(*map, "leader_ttl", &etcd.leader_ttl, 2s, 5min) &&
      etcd.leader_ttl.count() % 1000 != 0)
    map->Get("leader_ttl")->Error("must be whole seconds (etcd grants leases in seconds)");
  if (map->Read("replica", &etcd.replica) && etcd.replica.empty())
    map->Get("replica")->Error("must not be empty");
  if (map->Read("advertise", &etcd.advertise) && etcd.advertise.rfind("http", 0) != 0)
    map->Get("advertise")->Error("expected the URL clients reach this replica's API at");
  if (auto v = map->Get("replicas")) {
    if (auto items = v->List()) {
      for (const YamlValue& item : *items) {
        auto name = item.String();
        if (!name) continue;
        if (name->empty()) {
          item.Error("a replica's name must not be empty");
        } else if (std::find(etcd.replicas.begin(), etcd.replicas.end(), *name) !=
                   etcd.replicas.end()) {
          item.Error("replica '" + *name + "' is listed twice");
        } else {
          etcd.replicas.push_back(*name);
        }
      }
      if (items->empty()) v->Error("must list every replica's name (state.etcd.replica)");
    }
    if (!etcd.replica.empty() && !etcd.replicas.empty() &&
        std::find(etcd.replicas.begin(), etcd.replicas.end(), etcd.replica) == etcd.replicas.end())
      map->Get("replica")->Error("replica '" + etcd.replica + "' is not in state.etcd.replicas");
  } else if (quorum_evidence) {
    map->self().Error(
        "policies.fencing_evidence accepts old_region_unreachable, which with several replicas "
        "needs a majority of them to agree: list every replica's name in state.etcd.replicas "
        "(e.g. replicas: [icewarden-a, icewarden-b, icewarden-c])");
  }
  return etcd;
}

StateConfig ReadState(const YamlValue& value, bool quorum_evidence, const ConfigSources& sources) {
  StateConfig state;
  auto map = value.Map({"backend", "path", "etcd"});
  if (!map) return state;
  if (auto v = map->Get("backend")) {
    if (auto s = v->OneOf({"sqlite", "etcd"})) state.backend = *s;
  }
  if (map->Read("path", &state.path) && state.path.empty()) {
    map->Get("path")->Error("must not be empty");
  }
  auto etcd = map->Get("etcd");
  if (state.backend == "etcd") {
    if (!etcd) {
      map->Get("backend")->Error("the etcd backend needs a state.etcd section with endpoints");
    } else {
      state.etcd = ReadEtcdState(*etcd, quorum_evidence, sources);
    }
  } else if (etcd) {
    etcd->Error("is read only with state.backend: etcd");
  }
  return state;
}

// *gateway_closed is where fencing_evidence names gateway_closed, which the gateways: section
// (read later) must make possible.
PolicyConfig ReadPolicies(const YamlValue& value, ProbeSettings* default_probe,
                          std::optional<YamlValue>* gateway_closed) {
  PolicyConfig policies;
  auto map = value.Map({"max_staleness", "cooldown", "fencing_evidence", "two_person_approval",
                        "probe", "lag_interval", "retention_margin", "approval_ttl",
                        "unreachable_for", "readiness_interval", "audit_verify_interval"});
  if (!map) return policies;
  ReadWithin(*map, "max_staleness", &policies.max_staleness, 0ms, kMaxPolicyDuration);
  // A lag round lists and loads every table of every catalog: not in a tight loop.
  ReadWithin(*map, "lag_interval", &policies.lag_interval, 100ms, 1h);
  ReadWithin(*map, "retention_margin", &policies.retention_margin, 0ms, kMaxPolicyDuration);
  ReadWithin(*map, "cooldown", &policies.cooldown, 0ms, kMaxPolicyDuration);
  ReadWithin(*map, "approval_ttl", &policies.approval_ttl, 1s, 24h);
  ReadWithin(*map, "unreachable_for", &policies.unreachable_for, 0ms, 24h);
  // A readiness round sends a preflight to every step's endpoint of every route: not in a
  // tight loop, and at least once a day.
  ReadWithin(*map, "readiness_interval", &policies.readiness_interval, 1s, 24h);
  // A pass reads every audit event: not in a tight loop, and at least once a day.
  ReadWithin(*map, "audit_verify_interval", &policies.audit_verify_interval, 1s, 24h);
  map->Read("two_person_approval", &policies.two_person_approval);
  if (auto v = map->Get("fencing_evidence")) {
    if (auto items = v->List()) {
      if (items->empty()) v->Error("must list at least one of " + QuotedList(kFencingEvidence));
      std::vector<std::string> kinds;
      for (const auto& item : *items) {
        // The kind's name before it was named after what it observes.
        if (item.String() == std::optional<std::string>("quorum_unreachable")) {
          kinds.push_back("old_region_unreachable");
          continue;
        }
        auto kind = item.OneOf(kFencingEvidence);
        if (!kind) continue;
        if (std::find(kinds.begin(), kinds.end(), *kind) != kinds.end()) {
          item.Error("'" + *kind + "' is listed twice");
          continue;
        }
        kinds.push_back(*kind);
        if (*kind == "gateway_closed") *gateway_closed = item;
      }
      policies.fencing_evidence = kinds;
    }
  }
  if (auto v = map->Get("probe")) ReadProbe(*v, default_probe);
  return policies;
}

}  // namespace

void CheckListen(const YamlValue& v, const std::string& s) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos) {
    v.Error("expected HOST:PORT such as '127.0.0.1:8480', got " + v.Describe());
    return;
  }
  std::string host = s.substr(0, colon);
  std::string port = s.substr(colon + 1);
  if (host.empty()) {
    v.Error("the host is empty in " + v.Describe() + "; use 0.0.0.0 to listen everywhere");
  } else if (host.find(':') != std::string::npos && !(host.front() == '[' && host.back() == ']')) {
    v.Error("an IPv6 host must be in brackets, as in '[::1]:8480', got " + v.Describe());
  }
  if (!AllDigits(port) || port.size() > 5 || std::stoi(port) > 65535) {
    v.Error("the port must be a number from 0 to 65535, got " + v.Describe());
  }
}

void CheckRegionName(const YamlValue& v, const std::string& name,
                     const std::vector<RegionConfig>& regions) {
  std::vector<std::string> names;
  for (const auto& r : regions) {
    if (std::find(names.begin(), names.end(), r.name) == names.end()) names.push_back(r.name);
  }
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  std::string message = "no region named '" + name + "'";
  if (auto close = ClosestMatch(name, names)) {
    message += "; did you mean '" + *close + "'?";
  } else if (!names.empty()) {
    message += "; regions are " + QuotedList(names);
  }
  v.Error(message);
}

namespace {

OwnershipConfig ReadOwnership(const YamlValue& value, const std::vector<RegionConfig>& regions) {
  OwnershipConfig ownership;
  auto map = value.Map({"default_owner", "rules"});
  if (!map) return ownership;
  if (auto v = map->Require("default_owner")) {
    if (auto s = v->String()) {
      CheckRegionName(*v, *s, regions);
      ownership.default_owner = *s;
    }
  }
  auto rules = map->Get("rules");
  if (!rules) return ownership;
  auto items = rules->List();
  if (!items) return ownership;
  for (const auto& item : *items) {
    auto rule_map = item.Map({"match", "owner"});
    if (!rule_map) continue;
    OwnershipRule rule;
    if (auto v = rule_map->Require("match")) {
      if (auto s = v->String()) {
        if (s->empty()) v->Error("must not be empty");
        rule.match = *s;
      }
    }
    if (auto v = rule_map->Require("owner")) {
      if (auto s = v->String()) {
        CheckRegionName(*v, *s, regions);
        rule.owner = *s;
      }
    }
    ownership.rules.push_back(std::move(rule));
  }
  return ownership;
}

}  // namespace

Config ReadConfigDocument(const YamlValue& root, const ConfigSources& sources) {
  Config config;
  auto map = root.Map({"api", "state", "regions", "ownership", "policies", "failovers", "webhooks",
                       "alerts", "drills", "gateways"});
  if (!map) return config;
  // Policies first: regions inherit their probe settings.
  ProbeSettings default_probe;
  std::optional<YamlValue> gateway_closed;
  if (auto v = map->Get("policies"))
    config.policies = ReadPolicies(*v, &default_probe, &gateway_closed);
  if (auto v = map->Get("api")) config.api = ReadApi(*v, sources);
  if (auto v = map->Get("state")) {
    const auto& kinds = config.policies.fencing_evidence;
    config.state = ReadState(
        *v, std::find(kinds.begin(), kinds.end(), "old_region_unreachable") != kinds.end(),
        sources);
  }
  config.state.path = ResolvePath(sources, config.state.path);
  if (auto v = map->Require("regions")) config.regions = ReadRegions(*v, default_probe, sources);
  if (auto v = map->Require("ownership")) config.ownership = ReadOwnership(*v, config.regions);
  if (auto v = map->Get("failovers"))
    config.failovers = ReadFailoverRoutes(*v, config.regions, sources);
  if (auto v = map->Get("webhooks"))
    config.webhooks = ReadWebhooks(*v, config.regions, config.failovers, sources);
  if (auto v = map->Get("alerts")) config.alerts = ReadAlertRoutes(*v);
  if (auto v = map->Get("drills")) config.drills = ReadDrills(*v, config.regions, config.failovers);
  if (auto v = map->Get("gateways")) config.gateways = ReadGateways(*v, config.regions, sources);
  if (gateway_closed) CheckGatewayClosedEvidence(*gateway_closed, config.gateways);
  return config;
}

void ReportNotAvailableHere(const YamlValue& origin, const ConfigSources& sources,
                            const std::string& message) {
  if (sources.missing_secrets == nullptr) return origin.Error(message);
  YamlValue(origin.node(), origin.mark(), origin.path(), sources.missing_secrets)
      .Error(message + " (icewarden serve needs it)");
}

std::optional<SecretRead> ReadSecret(const YamlMap& map, const std::string& env_key,
                                     const std::string& file_key, const ConfigSources& sources) {
  auto env_value = map.Get(env_key);
  auto file_value = map.Get(file_key);
  if (env_value && file_value) {
    file_value->Error("set either '" + env_key + "' or '" + file_key + "', not both");
    return std::nullopt;
  }
  if (!env_value && !file_value) {
    map.self().Error("missing required key '" + env_key + "' or '" + file_key + "'");
    return std::nullopt;
  }
  if (env_value) {
    auto name = env_value->String();
    if (!name) return std::nullopt;
    if (name->empty()) {
      env_value->Error("must name an environment variable");
      return std::nullopt;
    }
    auto secret = sources.env(*name);
    if (!secret || secret->empty()) {
      ReportNotAvailableHere(*env_value, sources, "environment variable " + *name + " is not set");
      return std::nullopt;
    }
    return SecretRead{Secret(std::move(*secret)), *env_value};
  }
  auto path = file_value->String();
  if (!path) return std::nullopt;
  std::string resolved = ResolvePath(sources, *path);
  // Absent or unreadable here is a secret that lives elsewhere (production hosts); one that
  // opens but cannot be used (too large, a folder) is a wrong path wherever it is read.
  if (::access(resolved.c_str(), R_OK) != 0) {
    ReportNotAvailableHere(*file_value, sources,
                           "cannot read '" + resolved + "': " + std::strerror(errno));
    return std::nullopt;
  }
  auto text = ReadFileText(resolved, kMaxSecretBytes);
  if (!text.ok()) {
    file_value->Error(text.status().message());
    return std::nullopt;
  }
  // Files written by `echo` or an editor end in a newline that is not part of the secret.
  std::string secret = std::move(text.value());
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.empty()) {
    ReportNotAvailableHere(*file_value, sources, "secret file '" + resolved + "' is empty");
    return std::nullopt;
  }
  return SecretRead{Secret(std::move(secret)), *file_value};
}

std::string ResolvePath(const ConfigSources& sources, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute() || sources.base_dir.empty()) return path;
  return (sources.base_dir / p).lexically_normal().string();
}

Result<std::string> ReadFileText(const std::string& path, size_t max_bytes) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) return Status::IOError("cannot read '" + path + "': " + std::strerror(errno));
  std::string text;
  char buffer[8192];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) {
    text.append(buffer, n);
    if (text.size() > max_bytes) {
      return Status::IOError("cannot read '" + path + "': larger than " +
                             std::to_string(max_bytes) + " bytes");
    }
  }
  if (std::ferror(file.get())) {
    return Status::IOError("cannot read '" + path + "': " + std::strerror(errno));
  }
  return text;
}

bool IsHttpUrl(const std::string& s) {
  std::string rest;
  if (s.rfind("http://", 0) == 0) {
    rest = s.substr(7);
  } else if (s.rfind("https://", 0) == 0) {
    rest = s.substr(8);
  } else {
    return false;
  }
  std::string host = rest.substr(0, rest.find_first_of("/?#"));
  return !host.empty() && host.front() != ':' && host.find_first_of(" \t") == std::string::npos;
}

bool ReadWithin(const YamlMap& map, const std::string& key, std::chrono::milliseconds* out,
                std::chrono::milliseconds min, std::chrono::milliseconds max) {
  std::chrono::milliseconds value{0};
  if (!map.Read(key, &value)) return false;
  if (value < min || value > max) {
    map.Get(key)->Error("must be from " + FormatDuration(min) + " to " + FormatDuration(max) +
                        ", got " + FormatDuration(value));
    return false;
  }
  *out = value;
  return true;
}

bool ReadWithin(const YamlMap& map, const std::string& key, int* out, int min, int max) {
  int value = 0;
  if (!map.Read(key, &value)) return false;
  if (value < min || value > max) {
    map.Get(key)->Error("must be from " + std::to_string(min) + " to " + std::to_string(max) +
                        ", got " + std::to_string(value));
    return false;
  }
  *out = value;
  return true;
}

}  // namespace icewarden
