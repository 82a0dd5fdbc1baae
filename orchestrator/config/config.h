// Config: what `icewarden serve` is told in its YAML file, after validation.
//
// LoadConfig() reads and validates a file and either returns a complete Config or every
// error found, each as "FILE:LINE:COL: message" (1-based), and never a half-read config.
// Secrets (tokens, client secrets) are read from environment variables or files named in
// the YAML; a Secret never prints its value. Whether a secret that cannot be read right now
// is an error (serve) or a warning (validating a config on a machine without the production
// secrets, such as CI) is the caller's choice: SecretCheck.
// Thread-safety: plain values.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "state/table_pattern.h"

namespace icewarden {

// A credential read from the environment or a file. It has no operator<<, so it cannot be
// streamed into a log by accident; Redacted() is what to print; value() is for the one
// place that sends it.
class Secret {
 public:
  Secret() = default;
  explicit Secret(std::string value) : value_(std::move(value)) {}
  const std::string& value() const { return value_; }
  bool empty() const { return value_.empty(); }
  static const char* Redacted() { return "***"; }

 private:
  std::string value_;
};

// "host:port" as config values name probe targets: a port of 1-65535 written in digits only,
// an IPv6 host in brackets ("[::1]:53", host "::1"). One parser for validating the config and
// for using it, so that what validation accepted is what a probe connects to.
struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};
std::optional<HostPort> ParseHostPort(std::string_view text);

struct ProbeSettings {
  std::chrono::milliseconds interval{5000};
  std::chrono::milliseconds timeout{2000};
  int fall = 3;  // failed rounds in a row before a region is unreachable
  int rise = 2;  // good rounds in a row before it is healthy again
  // What a round checks: catalog_config, table_load, canary_commit, tcp, dns. A round
  // fails when any of them fails.
  std::vector<std::string> kinds{"catalog_config"};
  std::string canary_table{};  // "ns.table": for table_load and canary_commit
  std::string tcp_address{};   // "host:port" for tcp; empty: the catalog URI's host and port
  std::string dns_name{};      // for dns: the name to resolve,
  std::string dns_server{};    // through this server ("host:port"),
  std::string dns_expect{};    // optionally expecting this address or CNAME target
};

struct CatalogAuthConfig {
  enum class Kind { kNone, kBearer, kOAuth2 };
  Kind kind = Kind::kNone;
  Secret token;           // kBearer
  std::string client_id;  // kOAuth2
  Secret client_secret;   // kOAuth2
  std::string scope;      // kOAuth2, optional ("PRINCIPAL_ROLE:ALL")
  std::string token_uri;  // kOAuth2, optional: else the catalog's oauth2-server-uri
};

// How icewarden speaks TLS to a region's catalog and its OAuth2 token endpoint (`tls:`
// under a region). Paths are resolved against the config's folder; the key is a secret
// (key_file or key_env) like a token.
struct CatalogTlsConfig {
  std::string ca_file;                // PEM CA bundle, trusted in addition to the system's CAs
  std::string cert_file;              // mutual TLS: client certificate (PEM), with `key`
  Secret key;                         // its private key (PEM)
  std::string server_name;            // SNI and certificate name instead of the URI's host
  bool insecure_skip_verify = false;  // no certificate check at all: labs only
};

struct RegionConfig {
  std::string name;
  std::string catalog_uri;  // "https://catalog.us-east-1.example.com/api/catalog"
  std::string warehouse;    // optional
  CatalogAuthConfig auth;
  CatalogTlsConfig tls;
  ProbeSettings probe;
};

struct OwnershipRule {
  std::string match;  // glob over "namespace.table": "eu.*", "sales.orders"
  std::string owner;  // region name
};

struct OwnershipConfig {
  std::string default_owner;         // region name; required
  std::vector<OwnershipRule> rules;  // first match wins
};

struct PolicyConfig {
  std::chrono::milliseconds max_staleness{std::chrono::minutes(15)};
  std::chrono::milliseconds cooldown{std::chrono::minutes(30)};
  // Which kinds of fencing confirmation are accepted: "steps_and_quiet_window",
  // "old_region_unreachable" (formerly "quorum_unreachable"), "operator", "gateway_closed".
  std::vector<std::string> fencing_evidence{"steps_and_quiet_window", "operator"};
  bool two_person_approval = false;
  // How often replication lag is measured, and how much longer than max_staleness snapshot
  // retention must be before a table is flagged.
  std::chrono::milliseconds lag_interval{std::chrono::seconds(30)};
  std::chrono::milliseconds retention_margin{std::chrono::hours(1)};
  // How long an approval counts before the failover starts (a first approval waiting for
  // a second, a re-approval after a hold).
  std::chrono::milliseconds approval_ttl{std::chrono::minutes(15)};
  // old_region_unreachable: how long the old region must have given no answer at all
  // (refused, timed out, unresolvable) before its silence is fencing evidence.
  std::chrono::milliseconds unreachable_for{std::chrono::seconds(30)};
  // How often every failover route's readiness (guards, secrets, each step's preflight) is
  // evaluated, with no side effect (orchestrator/readiness/).
  std::chrono::milliseconds readiness_interval{std::chrono::minutes(1)};
  // How often the daemon reads the whole audit log and checks its seal (state/audit_seal.h)
  // for /metrics' icewarden_audit_chain_intact.
  std::chrono::milliseconds audit_verify_interval{std::chrono::minutes(5)};
};

// One failover route: which runbook moves what from where to where. A proposal picks the
// first route whose kind, from, to and scope match it.
struct FailoverRouteConfig {
  std::string name;
  std::string kind = "failover";  // failover | switchover
  std::string from = "*";         // region name, or "*" for any
  std::string to;                 // region name
  std::string scope = "*";        // glob over the proposal's scope ("owner:*", "namespace:eu.*")
  std::string runbook;            // path, resolved against the config's folder
  // Runbook parameters as written (strings; typed by the runbook's declarations).
  std::vector<std::pair<std::string, std::string>> params;
  int line = 0, column = 0;  // where the route starts, for errors found later
};

enum class Role { kViewer, kOperator, kApprover, kAdmin };
const char* RoleName(Role r);
std::optional<Role> ParseRole(const std::string& s);

struct ApiToken {
  std::string name;  // the identity recorded in the audit log
  Role role = Role::kViewer;
  Secret token;                   // from token_env or token_file
  std::string token_sha256 = {};  // or, from token_sha256: the 64 hex digits of its SHA-256
};

// A listener's `tls:` (orchestrator/config/server_tls.cpp): the certificate icewarden presents
// to those who call it, and the CA they (icewarden's own calls among them) trust it by.
struct ServerTlsConfig {
  std::string cert_file;  // PEM: the certificate chain, leaf first; empty: no TLS
  Secret key;             // its private key (PEM): key_file or key_env
  // PEM: the CA that signed cert_file, trusted by icewarden's own calls to this listener
  // (gateway.fence asking a gateway); empty: the system's CAs.
  std::string ca_file;
  // PEM: demand a client certificate signed by one of these CAs from every caller (mutual
  // TLS); empty: none asked for.
  std::string client_ca_file;
  bool enabled() const { return !cert_file.empty(); }
  std::string scheme() const { return enabled() ? "https" : "http"; }
};

struct ApiConfig {
  std::string listen = "127.0.0.1:8480";  // HOST:PORT; port 0 picks an ephemeral port
  std::vector<ApiToken> tokens;
  std::chrono::milliseconds read_timeout{10000};
  std::chrono::milliseconds write_timeout{10000};
  // api.tls: serve https:// (and, with client_ca_file, ask callers for a certificate).
  ServerTlsConfig tls;
};

// ---- webhooks: (orchestrator/config/webhooks.cpp; what they do: orchestrator/webhooks/) ----

// Who may post Alertmanager webhooks: what Alertmanager's http_config sends, a bearer token
// (`authorization: {credentials: ...}`) or HTTP basic auth (`basic_auth`). Exactly one.
struct WebhookReceiverConfig {
  std::string name;  // recorded in the audit log as the delivery's source
  Secret token;      // bearer
  std::string username;
  Secret password;  // basic auth
};

// An endpoint POST /api/v1/webhooks/generic/{name} whose bodies are signed with HMAC-SHA256
// over "<timestamp>.<body>".
struct GenericWebhookConfig {
  std::string name;
  Secret secret;
  std::chrono::milliseconds max_skew{std::chrono::minutes(5)};  // how old a timestamp may be
};

// One mapping rule, from an alert's labels to what icewarden does. The first rule whose every
// matcher holds decides; an alert no rule matches does nothing.
struct WebhookRuleConfig {
  std::string name;
  // Label name -> glob over its value (GlobMatch: "*" any run, "?" one character).
  std::vector<std::pair<std::string, std::string>> match;
  std::string effect = "none";  // mark_suspect | propose_failover | none
  // Templates over the alert's labels ("${labels.region}"); empty means the default.
  std::string region = "${labels.region}";  // mark_suspect: the region suspected
  std::string route;  // propose_failover: a failovers: route whose from/to are used
  std::string to;     // propose_failover: the target region (else the route's)
  std::string from;   // propose_failover: optional; else the route's (when not "*") or region
  std::string scope;  // propose_failover: default "owner:<from>"
  int line = 0, column = 0;
};

struct WebhooksConfig {
  std::vector<WebhookReceiverConfig> alertmanager;
  std::vector<GenericWebhookConfig> generic;
  std::vector<WebhookRuleConfig> rules;
};

// ---- alerts: (orchestrator/config/alerts.cpp; sent by orchestrator/watch/alert_routes.h) ----

// Where icewarden's own critical alerts go (a second writer after a promotion): an alert
// action kind and its params as written; the labels and summary are added when sent.
struct AlertRouteConfig {
  std::string name;
  std::string action;  // alert.alertmanager | alert.webhook
  std::vector<std::pair<std::string, std::string>> params;
  int line = 0, column = 0;
};

// ---- drills: (orchestrator/config/drills.cpp; run by orchestrator/drills/) ----

// What a shadow drill acts on instead of production: a DNS name of its own, a namespace of
// canary tables present in both catalogs, and alerts labelled drill="true".
struct DrillTargetsConfig {
  std::string dns_name;    // replaces the name of every DNS record and DNS check
  std::string namespace_;  // the scope becomes namespace:<this>
};

// One rehearsal of a failover route: when (a cron schedule in a time zone, or only on
// demand), how (plan | shadow | live), and what counts as fast enough (the RTO target).
struct DrillConfig {
  std::string name;
  std::string route;              // a failovers: route: its runbook, kind, from and to
  std::string from;               // the region the rehearsed failover leaves (default: the route's)
  std::string to;                 // default: the route's
  std::string scope;              // the production scope a live drill moves; default owner:<from>
  std::string schedule;           // five-field cron; empty: on demand only
  std::string time_zone = "UTC";  // IANA name, for the schedule
  std::string mode = "plan";      // what a scheduled run does
  std::chrono::milliseconds rto_target{std::chrono::minutes(15)};
  DrillTargetsConfig targets;
  int line = 0, column = 0;
};

// ---- gateways: (orchestrator/config/gateways.cpp; served by orchestrator/gateway/) ----

// One catalog gateway (`icewarden gateway --name NAME`): an Iceberg REST endpoint that engines
// use instead of a region's catalog. Reads go to `region` (another healthy region when it is
// unreachable); commits go to the table's owner, and only while the ownership record allows.
struct GatewayConfig {
  std::string name;
  std::string listen = "127.0.0.1:8181";  // HOST:PORT engines connect to; port 0: ephemeral
  std::string region;                     // where reads go first: normally the gateway's own
  // The regions it may forward to; a commit to a table owned elsewhere is refused with 409
  // naming the owner. Empty in the file means every region.
  std::vector<std::string> forward_to;
  // The catalog prefix engines see ("/v1/PREFIX/namespaces"). Default: the read region's
  // warehouse, else "icewarden". Each region's own prefix comes from its GET /v1/config.
  std::string prefix;
  // The base URI the config endpoint's overrides.uri sends engines back to. Default:
  // http://<listen>, https:// with tls (with an ephemeral port, the port actually bound).
  std::string advertise;
  ServerTlsConfig tls;                               // engines connect over https:// when set
  int threads = 32;                                  // requests in progress at once
  std::size_t max_body_bytes = 8u << 20;             // larger request bodies are answered 413
  int queue_per_table = 16;                          // commits waiting for one table; more: 503
  std::chrono::milliseconds forward_timeout{30000};  // one request to a region's catalog
  std::chrono::milliseconds store_poll{20};          // how often the store is checked for changes
  int line = 0, column = 0;
};

// Whether the gateway listens on a port chosen at start (HOST:0), which the orchestrator cannot
// know to ask unless `advertise` says where it is.
bool ListensOnEphemeralPort(const GatewayConfig& gateway);

// state.etcd.tls (orchestrator/config/etcd_access.cpp): how icewarden trusts, and is known to,
// the etcd members behind https:// endpoints. Paths are resolved against the config's folder.
struct EtcdTlsConfig {
  std::string ca_file;    // PEM: the CA that signs the members' certificates (only it is trusted)
  std::string cert_file;  // --client-cert-auth: client certificate (PEM), with `key`
  Secret key;             // its private key (PEM): key_file or key_env
};

// state.etcd.auth: an etcd user (etcd's --auth-token simple or jwt); empty username: none.
struct EtcdAuthConfig {
  std::string username;
  Secret password;  // password_file or password_env, never inline
};

// state.backend: etcd (issue 12): several replicas share one record in etcd, and one of them,
// the holder of the leader key, acts.
struct EtcdStateConfig {
  std::vector<std::string> endpoints;           // "http(s)://HOST:PORT", tried in order
  std::string prefix = "/icewarden/";           // every key of this deployment starts with it
  int max_txn_ops = 128;                        // the cluster's --max-txn-ops
  std::chrono::milliseconds timeout{2000};      // per etcd request
  std::chrono::milliseconds leader_ttl{10000};  // the leader key's lease
  // This replica's name (unique among the replicas) and the API address the others send
  // clients to while it leads. Defaults: the host name and http://<api.listen>.
  std::string replica;
  std::string advertise;
  // Every replica's name: who votes when a region's silence is fencing evidence (a majority
  // must agree; orchestrator/watch/region_quorum.h). Required when the policy accepts
  // old_region_unreachable.
  std::vector<std::string> replicas;
  EtcdTlsConfig tls;
  EtcdAuthConfig auth;
};

struct StateConfig {
  std::string backend = "sqlite";
  std::string path = "icewarden.db";  // relative to the config file's folder
  EtcdStateConfig etcd;
};

struct Config {
  std::string source_path;  // the file it was read from
  ApiConfig api;
  StateConfig state;
  std::vector<RegionConfig> regions;
  OwnershipConfig ownership;
  PolicyConfig policies;
  std::vector<FailoverRouteConfig> failovers;
  WebhooksConfig webhooks;
  std::vector<AlertRouteConfig> alerts;
  std::vector<DrillConfig> drills;
  std::vector<GatewayConfig> gateways;

  const RegionConfig* FindRegion(const std::string& name) const;
  // The owner the rules assign to "namespace.table" (first matching rule, else default).
  const std::string& OwnerFor(const std::string& dotted_table) const;
  const DrillConfig* FindDrill(const std::string& name) const;
  const GatewayConfig* FindGateway(const std::string& name) const;
};

struct ConfigError {
  std::string file;
  int line = 0;    // 1-based; 0 when the error is about the file as a whole
  int column = 0;  // 1-based
  std::string message;
  bool warning = false;
  // "FILE:LINE:COL: message", or "FILE: message" for line 0; warnings have "warning: "
  // before the message, as compilers print them.
  std::string ToString() const;
};

// What to do about a secret the file names correctly (an environment variable, a file) but
// that cannot be read here: unset or empty variable, missing, unreadable or empty file.
enum class SecretCheck {
  kRequire,        // an error: the config is unusable (serve, validate --strict)
  kWarnIfMissing,  // a warning; the config loads with that secret empty (validate)
};

struct ConfigLoad {
  std::optional<Config> config;       // set only when errors is empty
  std::vector<ConfigError> errors;    // in file order
  std::vector<ConfigError> warnings;  // in file order; never stop a config from loading
};

// `getenv` is injectable so tests do not depend on the process environment.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
std::optional<std::string> ProcessEnv(const std::string& name);

ConfigLoad LoadConfig(const std::string& path, EnvLookup env = ProcessEnv,
                      SecretCheck secrets = SecretCheck::kRequire);
ConfigLoad ParseConfig(const std::string& yaml_text, const std::string& path_for_errors,
                       EnvLookup env = ProcessEnv, SecretCheck secrets = SecretCheck::kRequire);

// Ownership rules match with GlobMatch (state/table_pattern.h).

}  // namespace icewarden
