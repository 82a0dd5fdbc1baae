// The schema of the icewarden config file: how each section of the YAML becomes part of a
// Config, and which rules it must follow. Internal to the config loader (config.cpp); split
// out so the rules of each section can be read, and changed, on their own.
//
// Every function reports problems through the YamlValue it is given and keeps reading; what
// it returns is only meaningful when no problem was reported. Secret values are never put
// into a message.
// Thread-safety: plain functions over values owned by the caller.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/config/config.h"
#include "runbooks/yaml_reader.h"
#include "state/status.h"

namespace icewarden {

// Where the values a config points at come from.
struct ConfigSources {
  std::filesystem::path base_dir;  // the config file's folder; relative paths resolve here
  EnvLookup env;
  // Where a secret that is named correctly but cannot be read goes (SecretCheck): an error
  // when null, else a warning here.
  YamlIssues* missing_secrets = nullptr;
};

// The whole document (config_schema.cpp).
Config ReadConfigDocument(const YamlValue& root, const ConfigSources& sources);

// Sections (regions.cpp). ReadProbe overrides only the fields the mapping sets, so
// a region's probe starts from the policies' defaults.
std::vector<RegionConfig> ReadRegions(const YamlValue& value, const ProbeSettings& defaults,
                                      const ConfigSources& sources);
void ReadProbe(const YamlValue& value, ProbeSettings* probe);
// A region's `tls:` mapping (catalog_tls.cpp), read after its catalog_uri and auth, which
// it is checked against.
CatalogTlsConfig ReadCatalogTls(const YamlValue& value, const RegionConfig& region,
                                const ConfigSources& sources);
// The PEM certificates that `key` of `map` names (resolved against the config's folder) into
// *text, and the resolved path into *path, checked as OpenSSL reads them (catalog_tls.cpp).
// False, with the problem reported at the key, when they cannot be used; absent here follows
// the secret rules (ReportNotAvailableHere).
bool ReadCertificates(const YamlMap& map, const std::string& key, const ConfigSources& sources,
                      std::string* path, std::string* text);
// `cert_file` with `key_file` or `key_env` in `map`: a client certificate and its private key,
// both or neither, the key the certificate's (catalog_tls.cpp).
void ReadClientCertificate(const YamlMap& map, const ConfigSources& sources, std::string* cert_file,
                           Secret* key);
// state.etcd's `tls:` and `auth:` (etcd_access.cpp); `endpoints` as read, to check the
// tls settings against.
EtcdTlsConfig ReadEtcdTls(const YamlValue& value, const std::vector<std::string>& endpoints,
                          const ConfigSources& sources);
EtcdAuthConfig ReadEtcdAuth(const YamlValue& value, const ConfigSources& sources);
// The `failovers:` list of routes (routes.cpp).
std::vector<FailoverRouteConfig> ReadFailoverRoutes(const YamlValue& value,
                                                    const std::vector<RegionConfig>& regions,
                                                    const ConfigSources& sources);
// The `webhooks:` section (webhooks.cpp); rules may name routes, so routes come first.
WebhooksConfig ReadWebhooks(const YamlValue& value, const std::vector<RegionConfig>& regions,
                            const std::vector<FailoverRouteConfig>& routes,
                            const ConfigSources& sources);
// The item's required, non-empty `name`, unique among `taken` (to which it is added); "WHAT
// 'x' is defined twice" otherwise, at the name.
void ReadNamed(const YamlMap& map, std::string* name, std::vector<std::string>* taken,
               const std::string& what);
// A `params:` mapping of single values (a route's runbook parameters, an alert route's action
// params), in order; anything else is an error at its position naming `what` was expected.
std::vector<std::pair<std::string, std::string>> ReadScalarParams(const YamlValue& v,
                                                                  const std::string& what);
// The `alerts:` list of routes for icewarden's own alerts (alerts.cpp).
std::vector<AlertRouteConfig> ReadAlertRoutes(const YamlValue& value);
// The `drills:` list (drills.cpp); drills name routes, so routes come first.
std::vector<DrillConfig> ReadDrills(const YamlValue& value,
                                    const std::vector<RegionConfig>& regions,
                                    const std::vector<FailoverRouteConfig>& routes);
// Reports "no region named ..." (with a did-you-mean) unless `name` is a configured region.
void CheckRegionName(const YamlValue& v, const std::string& name,
                     const std::vector<RegionConfig>& regions);

// Reads `key` when present; a value outside [min, max] is an error at its position ("must be
// from 100ms to 1h"). True when the key was read and within bounds.
bool ReadWithin(const YamlMap& map, const std::string& key, std::chrono::milliseconds* out,
                std::chrono::milliseconds min, std::chrono::milliseconds max);
bool ReadWithin(const YamlMap& map, const std::string& key, int* out, int min, int max);

// A secret named by exactly one of `env_key` (an environment variable) or `file_key` (a
// file, relative to the config's folder, trailing newline stripped) in `map`. `origin` is
// the YAML value that named it, for later complaints about the secret (duplicates). A secret
// that cannot be read is reported as sources.missing_secrets says, and gives nullopt.
struct SecretRead {
  Secret secret;
  YamlValue origin;
};
std::optional<SecretRead> ReadSecret(const YamlMap& map, const std::string& env_key,
                                     const std::string& file_key, const ConfigSources& sources);

// A secret or a file that the config names correctly but that cannot be read where the
// config is read (production hosts have them, CI does not): an error, or a warning when
// sources.missing_secrets says so.
void ReportNotAvailableHere(const YamlValue& origin, const ConfigSources& sources,
                            const std::string& message);

// `path` as is when absolute, else relative to the config's folder.
std::string ResolvePath(const ConfigSources& sources, const std::string& path);

// The file's bytes; fails (with the OS's reason) when it cannot be read or is larger than
// `max_bytes`. The message names the file, never its content.
Result<std::string> ReadFileText(const std::string& path, size_t max_bytes);

// A listen address: HOST:PORT, with IPv6 hosts in brackets ("[::1]:8480"); port 0 means
// ephemeral. Problems are reported at `v`.
void CheckListen(const YamlValue& v, const std::string& s);

// The `gateways:` list (gateways.cpp): catalog gateways that enforce ownership per table.
std::vector<GatewayConfig> ReadGateways(const YamlValue& value,
                                        const std::vector<RegionConfig>& regions,
                                        const ConfigSources& sources);
// A listener's `tls:` (server_tls.cpp): cert_file with key_file or key_env, and ca_file.
// `client_ca_file` (mutual TLS) is a key only where `client_ca` says so: the API's listener,
// not a gateway's, whose callers include icewarden's own gateway.fence without a certificate.
ServerTlsConfig ReadServerTls(const YamlValue& value, const ConfigSources& sources,
                              bool client_ca = false);

// policies.fencing_evidence names gateway_closed (at `item`): there must be gateways, each one
// the orchestrator can ask (gateways.cpp).
void CheckGatewayClosedEvidence(const YamlValue& item, const std::vector<GatewayConfig>& gateways);

// "http://host..." or "https://host..." with a non-empty host.
bool IsHttpUrl(const std::string& s);

}  // namespace icewarden
