// CatalogRoute: what an Iceberg REST request sent to the gateway asks for, read from its
// method, target and (for writes that name tables in the body) its body. The gateway decides
// where a request goes from this alone; nothing here touches the store or a socket.
//
// Every route of the REST spec (shared/reference/iceberg-rest-catalog-open-api-1.11.0.yaml) is
// one of: the config endpoint, the OAuth2 token endpoint, a read (served by the read region),
// or a write with the tables it touches (served by their owner). Path segments are checked
// before anything is forwarded: a segment that decodes to "." or "..", or holds '/', '\', NUL
// or another control character, is a 400, as is a prefix other than the gateway's (404) or a
// route the spec does not have (404; 405 for a known path with another method).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "state/types.h"

namespace icewarden {

enum class RouteKind {
  kConfig,          // GET /v1/config: answered by the gateway from the read region's
  kOAuthTokens,     // POST /v1/oauth/tokens: passed through to the read region
  kRead,            // everything that changes nothing: lists, loads, HEADs, scan plans
  kTableLoad,       // GET .../tables/{t}: a read that precedes commits (GatewayConfig)
  kNamespaceWrite,  // create / drop / update a namespace, and view writes
  kTableCreate,     // POST .../tables (the name is in the body), and register
  kTableCommit,     // POST .../tables/{t}
  kTableDrop,       // DELETE .../tables/{t}
  kTableRename,     // POST /v1/{prefix}/tables/rename: source and destination
  kTransaction,     // POST /v1/{prefix}/transactions/commit: every table changed
};
const char* RouteKindName(RouteKind kind);
// Whether the route's effect lands in one region's catalog and must go to the owner.
bool IsWrite(RouteKind kind);
// Whether the route commits to tables that have (or will have) an owner and epoch.
bool IsTableWrite(RouteKind kind);

struct CatalogRoute {
  RouteKind kind = RouteKind::kRead;
  std::string operation;  // the spec's operationId: "loadTable", "commitTable", ...
  // The path after "/v1/{prefix}" and the query (with its '?'), exactly as sent: what is
  // forwarded after the region's own "/v1/{prefix}".
  std::string rest;
  std::string query;
  // The tables written, in request order without duplicates (kTable* and kTransaction); for
  // a rename, the source then the destination.
  std::vector<TableIdent> tables;
  // The namespace a namespace write or a create names (its levels).
  std::vector<std::string> namespace_levels;
};

// A request refused before anything was forwarded, in the spec's error model.
struct RouteError {
  int status = 400;
  std::string type;  // "BadRequestException", "NotFoundException", ...
  std::string message;
  std::string allow;  // for 405: the methods the path has
};

struct RouteRequest {
  std::string_view method;
  std::string_view target;  // path and query as sent
  std::string_view body;
};

// `prefix` is the gateway's own; `separator` joins namespace levels in a path segment, decoded
// (the gateway's is "\x1F", which its config endpoint advertises to engines).
std::variant<CatalogRoute, RouteError> ClassifyRequest(const RouteRequest& request,
                                                       std::string_view prefix,
                                                       std::string_view separator);

// "%41b" -> "Ab"; nullopt for a '%' not followed by two hex digits.
std::optional<std::string> PercentDecode(std::string_view text);

}  // namespace icewarden
