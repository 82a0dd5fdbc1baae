// Every catalog response parser (health/catalog_json.h) on every input: a catalog may send
// anything, and the worst it may cause is a parse error (DESIGN.md rule 7), never a crash.
// Seeds: the compatibility corpus (tests/compat/corpus/) and the Alertmanager payloads.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "health/catalog_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)icewarden::ParseCatalogConfig(body, {});
  (void)icewarden::ParseCatalogConfig(body, {{"warehouse", "lab"}, {"prefix", "p"}});
  (void)icewarden::ParseListNamespacesResponse(body);
  (void)icewarden::ParseListTablesResponse(body);
  (void)icewarden::ParseTableResult(body, "LoadTableResult");
  (void)icewarden::ParseIcebergError(body);
  (void)icewarden::ParseOAuthTokenResponse(body);
  (void)icewarden::ParseOAuthError(body);
  (void)icewarden::ParseIsoDuration(body);
  (void)icewarden::RedactedExcerpt(body, 256);
  return 0;
}
