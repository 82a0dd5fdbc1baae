#include "orchestrator/config/catalog_options.h"

namespace icewarden {

CatalogAuth AuthFor(const CatalogAuthConfig& a) {
  switch (a.kind) {
    case CatalogAuthConfig::Kind::kNone:
      return CatalogAuth::None();
    case CatalogAuthConfig::Kind::kBearer:
      return CatalogAuth::Bearer(a.token.value());
    case CatalogAuthConfig::Kind::kOAuth2:
      return CatalogAuth::ClientCredentials(a.client_id, a.client_secret.value(),
                                            a.scope.empty() ? "catalog" : a.scope, a.token_uri);
  }
  return CatalogAuth::None();
}

CatalogClientOptions CatalogOptionsFor(const RegionConfig& region) {
  CatalogClientOptions options;
  options.base_uri = region.catalog_uri;
  options.warehouse = region.warehouse;
  options.auth = AuthFor(region.auth);
  return options;
}

}  // namespace icewarden
