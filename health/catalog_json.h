// JSON mapping between the Iceberg REST catalog's wire format and health/catalog_model.h.
// Pure functions: bodies in, values out (and the reverse for commit requests), so the
// mapping is tested without any transport.
//
// A body that is not what the spec promises becomes kUnavailable ("catalog returned a
// malformed LoadTableResult: ...") with reply() PeerReply::kUnparsed: the catalog is not
// serving what icewarden needs, but it answered, so it is alive (DESIGN.md rule 7).
// Unknown fields are ignored, as the spec asks of clients; so are null property values.
// Thread-safety: stateless.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "health/catalog_model.h"
#include "state/status.h"

namespace icewarden {

// CatalogConfig body + the client's own properties -> resolved config.
Result<CatalogConfig> ParseCatalogConfig(
    std::string_view body, const std::map<std::string, std::string>& client_properties);

struct NamespacePage {
  std::vector<Namespace> namespaces;
  std::optional<std::string> next_page_token;  // nullopt: last page (null or missing)
};
Result<NamespacePage> ParseListNamespacesResponse(std::string_view body);

struct TablePage {
  std::vector<TableIdent> identifiers;
  std::optional<std::string> next_page_token;
};
Result<TablePage> ParseListTablesResponse(std::string_view body);

// LoadTableResult and CommitTableResponse share the two fields read here:
// `metadata-location` and `metadata` (TableMetadata). The ETag is not in the body.
Result<TableSnapshotView> ParseTableResult(std::string_view body, std::string_view what);

// CommitTableRequest: {"identifier": ..., "requirements": [...], "updates": [...]}.
std::string CommitTableRequestJson(const TableCommit& commit);

// IcebergErrorResponse {"error": {"message", "type", "code"}}; nullopt if the body is not one.
struct IcebergError {
  std::string message;
  std::string type;  // "CommitFailedException", "NoSuchTableException", ...
  int code = 0;
};
std::optional<IcebergError> ParseIcebergError(std::string_view body);

struct OAuthToken {
  std::string access_token;
  std::optional<std::chrono::seconds> expires_in;
};
Result<OAuthToken> ParseOAuthTokenResponse(std::string_view body);
// OAuthError {"error", "error_description"} as "invalid_client: bad credentials".
std::optional<std::string> ParseOAuthError(std::string_view body);

// At most `limit` bytes of `body` for a log line, non-printable bytes as spaces, with
// anything shaped like a credential replaced by "***": the values of JSON fields whose
// name mentions token, secret, password, credential or key, "Bearer ..." and
// "Basic ..." values, and JWTs (eyJ...). Redaction runs on the whole body before it is
// cut, so a secret straddling the limit does not leak its first half.
std::string RedactedExcerpt(std::string_view body, std::size_t limit);

// ISO-8601 durations as the spec uses them: "PT30M", "PT24H", "P1D", "PT1.5S", "P1W".
// Years and months have no fixed length and are rejected.
std::optional<std::chrono::milliseconds> ParseIsoDuration(std::string_view text);

}  // namespace icewarden
