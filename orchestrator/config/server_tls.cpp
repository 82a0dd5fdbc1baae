// A listener's `tls:` mapping: the certificate icewarden serves with, a gateway's or the API's.
//
//   tls:
//     cert_file: gateway.pem   # PEM chain, leaf first
//     key_file: gateway.key    # its private key (a secret: or key_env: VAR)
//     ca_file: ca.pem          # the CA that signed it, for icewarden's own calls (gateway.fence)
//     client_ca_file: ca.pem   # api.tls only: callers must present a certificate it signed
//
// Read and checked here as OpenSSL will read them (catalog_tls.cpp's functions), so a key
// for another certificate is a FILE:LINE:COL error of `config validate`, not a gateway that
// fails to start. Files absent where the config is read follow the secret rules.

#include "health/tls_options.h"
#include "orchestrator/config/schema.h"

namespace icewarden {

ServerTlsConfig ReadServerTls(const YamlValue& value, const ConfigSources& sources,
                              bool client_ca) {
  ServerTlsConfig tls;
  std::vector<std::string> keys{"cert_file", "key_file", "key_env", "ca_file"};
  if (client_ca) keys.push_back("client_ca_file");
  auto map = value.Map(keys);
  if (!map) return tls;
  std::string cert_text;
  const bool has_cert = map->Require("cert_file") &&
                        ReadCertificates(*map, "cert_file", sources, &tls.cert_file, &cert_text);
  if (!map->Has("key_file") && !map->Has("key_env")) {
    value.Error("a server certificate needs its private key: set key_file or key_env");
  } else if (auto key = ReadSecret(*map, "key_env", "key_file", sources)) {
    if (Status ok = CheckPrivateKeyPem(key->secret.value()); !ok.ok()) {
      key->origin.Error(ok.message());
    } else if (has_cert) {
      if (Status match = CheckKeyMatchesCertificate(cert_text, key->secret.value()); !match.ok())
        key->origin.Error(match.message() + " ('" + tls.cert_file + "')");
    }
    tls.key = key->secret;
  }
  std::string ca_text;
  ReadCertificates(*map, "ca_file", sources, &tls.ca_file, &ca_text);
  std::string client_ca_text;
  if (client_ca)
    ReadCertificates(*map, "client_ca_file", sources, &tls.client_ca_file, &client_ca_text);
  // A path that could not be read here leaves cert_file set (ReadCertificates resolves it
  // first), so a config validated away from the gateway's host still says "TLS".
  return tls;
}

}  // namespace icewarden
