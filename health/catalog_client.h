// CatalogClient: icewarden's client for one Iceberg REST catalog (one region), following
// shared/reference/iceberg-rest-catalog-open-api-1.11.0.yaml. Probes use it to see whether
// a catalog serves and how far a replica trails; ownership actions use it to commit
// `icewarden.owner` / `icewarden.epoch` markers guarded by requirements.
//
// Environment: the HTTP transport, the Clock and the random source come in through
// CatalogClientEnv; the client never opens a socket, reads the wall clock or seeds a
// generator on its own.
//
// Asynchrony: every method returns at once and calls `done` exactly once, on the
// transport's executor (with tests/fakes/fake_transport.h possibly before the method
// returns). `done` runs even if the client was destroyed in the meantime; the transport
// and the Clock must outlive every call.
// Thread-safety: one thread, the transport's executor.
//
// Configuration: the first call fetches GET /v1/config?warehouse=W unless GetConfig() has
// succeeded already; later paths are /v1/{prefix}/..., with `prefix` from the resolved
// properties (defaults < client properties < overrides), used as given (Nessie's arrives
// percent-encoded, "main%7Cwarehouse", and goes into the path unchanged). A `uri` in the
// overrides replaces base_uri for every later request but GET /v1/config, which stays on the
// configured endpoint, as the Java reference client rebuilds its HTTP client from the merged
// properties (Nessie sends its Iceberg base URI there). A `uri` that is not an absolute
// http(s) URL makes the config malformed (kUnparsed). When the server lists
// `endpoints`, a call to an endpoint it does not list fails fast with kFailedPrecondition
// ("catalog does not advertise GET /v1/{prefix}/namespaces") without a request.
//
// Errors (IcebergErrorResponse bodies are parsed into the message):
//   400, 406, other 4xx -> kInvalidArgument     401, 419 -> kUnauthenticated
//   403 -> kPermissionDenied    404 -> kNotFound    409 -> kConflict
//   503 -> retried when Retry-After says so (catalog_channel.h), else kUnavailable
//   other 5xx and transport failures -> kUnavailable
//   except on CommitTable, where 500, 502, 504 and a connection lost after the request may
//   have been delivered are CommitOutcome::kStateUnknown, never retried by the client;
//   so is a 409 "request in progress" still answered after the channel's resends
//   (health/idempotency_in_progress.h): the first request may yet land.
//   A commit that could not get an OAuth2 token was not sent: that stays an error.
// Every error's Status::reply() says what the catalog did: kAnswered for an HTTP status,
// kUnparsed for a body (or bytes) icewarden could not read, kSilent for a transport
// failure with nothing heard back, kUnknown when the catalog was not asked (a cached config
// that lacks the endpoint, an identity provider elsewhere that failed).
// No Status message contains the client secret or a token.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "health/catalog_auth.h"
#include "health/catalog_channel.h"
#include "health/catalog_model.h"
#include "health/http_transport.h"
#include "health/tls_options.h"
#include "health/uuid_v7.h"
#include "state/clock.h"
#include "state/status.h"
#include "state/types.h"

namespace icewarden {

// An answer the client could not parse, reported to CatalogClientOptions::on_unparsed so
// that the daemon can count and log it (health/ does not log). The call itself fails with
// a Status whose reply() is PeerReply::kUnparsed.
struct UnparsedAnswer {
  std::string kind;     // what was expected: "config", "list_namespaces", "list_tables",
                        // "load_table", "commit", or "http" (the bytes were not HTTP at all)
  std::string error;    // "get catalog config from ...: catalog returned a malformed ..."
  int http_status = 0;  // 0 for "http"
  // At most kUnparsedExcerptBytes of the body, non-printable bytes as spaces, with the
  // client's own secrets and anything shaped like a token replaced by "***"
  // (RedactedExcerpt in catalog_json.h). Empty for "http": the transport keeps no bytes.
  std::string excerpt;
};
inline constexpr std::size_t kUnparsedExcerptBytes = 512;

struct CatalogClientOptions {
  // The catalog's base URI without "/v1": "https://polaris.eu.example.com/api/catalog".
  std::string base_uri;
  std::string warehouse;  // sent as ?warehouse= on GET /v1/config when not empty
  CatalogAuth auth;
  // Client-side catalog properties, applied between the server's defaults and overrides.
  std::map<std::string, std::string> properties;
  std::chrono::milliseconds default_deadline{5'000};  // per HTTP request
  // pageSize for list calls; 0 asks for no paging (servers then answer in one response).
  int page_size = 100;
  int max_pages = 10'000;  // a listing that needs more fails with kUnavailable
  RetryPolicy retry;
  // X-Iceberg-Access-Delegation on LoadTable, empty to omit it. Default: omitted. The
  // header is optional in the spec and icewarden reads metadata only: asking for
  // "vended-credentials" would make the catalog mint storage credentials on every probe
  // (cost, audit noise, secrets in our memory), and some catalogs refuse the load when
  // they cannot vend. Set it to "vended-credentials" when validating through Prism,
  // which crashes on requests that omit it (shared/reference/README.md).
  std::string access_delegation;
  // Called on the transport's executor for every answer the client could not parse. May
  // be empty.
  std::function<void(const UnparsedAnswer&)> on_unparsed;
  // How to speak TLS to this catalog. The client sends through the transport it is given
  // and never reads this: it is for whoever makes that transport (MakeBeastTransport), so
  // that one CatalogClientOptions says everything about reaching a region.
  TlsOptions tls;
};

struct CatalogClientEnv {
  HttpTransport& transport;
  const Clock& clock;
  RandomBits random;  // for Idempotency-Key UUIDv7s
};

struct CallOptions {
  std::optional<std::chrono::milliseconds> deadline;  // overrides default_deadline
};

template <class T>
using CatalogCallback = std::function<void(Result<T>)>;

class CatalogClient {
 public:
  CatalogClient(CatalogClientOptions options, CatalogClientEnv env);
  ~CatalogClient();
  CatalogClient(const CatalogClient&) = delete;
  CatalogClient& operator=(const CatalogClient&) = delete;

  // GET /v1/config. On success the result also becomes the client's configuration for
  // later calls (prefix, endpoints, idempotency keys, oauth2-server-uri).
  void GetConfig(CatalogCallback<CatalogConfig> done, CallOptions call = {});
  // The last configuration read, if any.
  const std::optional<CatalogConfig>& config() const;

  // Every namespace directly under `parent` (top level when nullopt), following
  // next-page-token to the end.
  void ListNamespaces(std::optional<Namespace> parent, CatalogCallback<std::vector<Namespace>> done,
                      CallOptions call = {});

  // Every table in `ns`, following next-page-token to the end.
  void ListTables(Namespace ns, CatalogCallback<std::vector<TableIdent>> done,
                  CallOptions call = {});

  // GET .../tables/{table}?snapshots=all (or refs). With `etag`, sends If-None-Match and
  // yields not_modified on 304 (an ETag names one mode's response). 404 is kNotFound.
  void LoadTable(TableIdent table, std::optional<std::string> etag,
                 CatalogCallback<LoadTableOutcome> done, CallOptions call = {},
                 SnapshotsMode snapshots = SnapshotsMode::kAll);

  // POST .../tables/{table} with a CommitTableRequest. Sends an Idempotency-Key only when
  // the config advertised idempotency-key-lifetime: commit.idempotency_key if given and
  // younger than the lifetime, else a new UUIDv7; the same key on every resend.
  // Errors are definite failures (the commit did not happen): kConflict for 409 (a
  // requirement was not met: reload and decide), and the mapping above. A commit whose
  // fate is unknown is a value, CommitOutcome::kStateUnknown.
  void CommitTable(TableCommit commit, CatalogCallback<CommitOutcome> done, CallOptions call = {});

 private:
  class Core;
  std::shared_ptr<Core> core_;
};

}  // namespace icewarden
