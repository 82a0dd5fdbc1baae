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

TlsOptions TlsFor(const CatalogTlsConfig& t) {
  TlsOptions tls;
  tls.verify_peer = !t.insecure_skip_verify;
  tls.ca_file = t.ca_file;
  tls.cert_file = t.cert_file;
  tls.key_pem = t.key.value();
  tls.server_name = t.server_name;
  return tls;
}

CatalogClientOptions CatalogOptionsFor(const RegionConfig& region) {
  CatalogClientOptions options;
  options.base_uri = region.catalog_uri;
  options.warehouse = region.warehouse;
  options.auth = AuthFor(region.auth);
  options.tls = TlsFor(region.tls);
  return options;
}

std::vector<std::string> InsecureTlsWarnings(const Config& config) {
  std::vector<std::string> lines;
  for (const auto& region : config.regions) {
    if (!region.tls.insecure_skip_verify) continue;
    lines.push_back("region " + region.name +
                    ": tls.insecure_skip_verify is set: the certificate of " + region.catalog_uri +
                    " is not verified, so anyone on the network path can pose as this catalog");
  }
  return lines;
}

}  // namespace icewarden
