// state.etcd's `tls:` and `auth:`: how icewarden reaches the etcd members that hold the
// state record.
//
//   state:
//     backend: etcd
//     etcd:
//       endpoints: [https://10.0.0.1:2379, https://10.0.0.2:2379]
//       tls:
//         ca_file: etcd-ca.pem        # the CA that signs the members' certificates (required)
//         cert_file: icewarden.pem    # --client-cert-auth: certificate ...
//         key_file: icewarden.key     # ... and its key (a secret: or key_env: VAR)
//       auth:
//         username: icewarden
//         password_file: etcd.password  # or password_env: VAR; never inline
//
// Files are read and checked here as OpenSSL will read them (catalog_tls.cpp's functions),
// so a wrong path or a key for another certificate is a FILE:LINE:COL error of `config
// validate` and never a standby that cannot reach etcd.

#include "orchestrator/config/schema.h"

namespace icewarden {
namespace {

bool AllHttps(const std::vector<std::string>& endpoints) {
  return !endpoints.empty() && endpoints.front().rfind("https://", 0) == 0;
}

}  // namespace

EtcdTlsConfig ReadEtcdTls(const YamlValue& value, const std::vector<std::string>& endpoints,
                          const ConfigSources& sources) {
  EtcdTlsConfig tls;
  auto map = value.Map({"ca_file", "cert_file", "key_file", "key_env"});
  if (!map) return tls;
  // A setting that silently does nothing is a mistake waiting to be trusted.
  if (!endpoints.empty() && !AllHttps(endpoints)) {
    value.Error("tls settings apply only to https:// endpoints, and state.etcd.endpoints are " +
                endpoints.front() + "...; write them as https://HOST:PORT or drop tls");
  }
  std::string ca_text;
  if (map->Require("ca_file")) ReadCertificates(*map, "ca_file", sources, &tls.ca_file, &ca_text);
  ReadClientCertificate(*map, sources, &tls.cert_file, &tls.key);
  return tls;
}

EtcdAuthConfig ReadEtcdAuth(const YamlValue& value, const ConfigSources& sources) {
  EtcdAuthConfig auth;
  auto map = value.Map({"username", "password_file", "password_env"});
  if (!map) return auth;
  if (auto v = map->Require("username")) {
    if (auto name = v->String()) {
      if (name->empty()) v->Error("must name an etcd user (etcdctl user add NAME)");
      auth.username = *name;
    }
  }
  if (auto s = ReadSecret(*map, "password_env", "password_file", sources))
    auth.password = s->secret;
  return auth;
}

}  // namespace icewarden
