// A region's `tls:` mapping: how icewarden trusts, and is known to, the region's catalog.
//
//   tls:
//     ca_file: ca.pem              # PEM bundle, in addition to the system's CAs
//     cert_file: client.pem        # mutual TLS: certificate ...
//     key_file: client.key         # ... and its key (a secret: or key_env: VAR)
//     server_name: catalog.internal  # SNI and certificate name instead of the URI's host
//     insecure_skip_verify: false  # true: no certificate check at all (labs only)
//
// Every file is read and checked here, as OpenSSL will read it, so that a wrong path, a
// key for another certificate or a bundle with no certificate in it is a FILE:LINE:COL
// error of `config validate` and not a probe failure hours later. A file (or the key's
// variable) that is absent or unreadable where the config is read follows the secret rules
// (SecretCheck): an error for serve and validate --strict, a warning for validate.
// ReadCertificates and ReadClientCertificate read state.etcd.tls too (etcd_access.cpp).

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "health/tls_options.h"
#include "orchestrator/config/schema.h"

namespace icewarden {
namespace {

// A PEM bundle is a few certificates; a larger file is a wrong path.
constexpr size_t kMaxPemBytes = 1024 * 1024;

// "https://host:port/path" -> "host" (brackets kept for IPv6); "" for anything else.
std::string HttpsHostOf(const std::string& uri) {
  if (uri.rfind("https://", 0) != 0) return "";
  std::string authority = uri.substr(8, uri.find_first_of("/?#", 8) - 8);
  const auto bracket = authority.find(']');
  const auto colon = authority.rfind(':');
  if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket))
    authority.resize(colon);
  return authority;
}

// A DNS name or an IP literal, as it would be written in a certificate: no scheme, no
// port, no path.
bool IsServerName(const std::string& s) {
  return !s.empty() && s.size() <= 253 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' ||
           c == '_';
  });
}

}  // namespace

bool ReadCertificates(const YamlMap& map, const std::string& key, const ConfigSources& sources,
                      std::string* path, std::string* text) {
  auto v = map.Get(key);
  if (!v) return false;
  auto s = v->String();
  if (!s) return false;
  if (s->empty()) {
    v->Error("must name a PEM file");
    return false;
  }
  *path = ResolvePath(sources, *s);
  // Absent here is a file that lives on the hosts that run serve (as secrets do); one that
  // opens but is not what it should be is wrong wherever it is read.
  if (::access(path->c_str(), R_OK) != 0) {
    ReportNotAvailableHere(*v, sources, "cannot read '" + *path + "': " + std::strerror(errno));
    return false;
  }
  auto read = ReadFileText(*path, kMaxPemBytes);
  if (!read.ok()) {
    v->Error(read.status().message());
    return false;
  }
  if (Status ok = CheckCertificatesPem(*read); !ok.ok()) {
    v->Error("'" + *path + "': " + ok.message());
    return false;
  }
  *text = std::move(*read);
  return true;
}

void ReadClientCertificate(const YamlMap& map, const ConfigSources& sources, std::string* cert_file,
                           Secret* key_out) {
  std::string cert_text;
  const bool has_cert = ReadCertificates(map, "cert_file", sources, cert_file, &cert_text);
  const bool names_key = map.Has("key_file") || map.Has("key_env");
  if (map.Has("cert_file") && !names_key) {
    map.Get("cert_file")
        ->Error("a client certificate needs its private key: set key_file or key_env");
  }
  if (names_key) {
    if (auto key = ReadSecret(map, "key_env", "key_file", sources)) {
      if (!map.Has("cert_file")) {
        key->origin.Error("a client key needs its certificate: set cert_file");
      } else if (Status ok = CheckPrivateKeyPem(key->secret.value()); !ok.ok()) {
        key->origin.Error(ok.message());
      } else if (has_cert) {
        if (Status match = CheckKeyMatchesCertificate(cert_text, key->secret.value());
            !match.ok()) {
          key->origin.Error(match.message() + " ('" + *cert_file + "')");
        }
      }
      *key_out = key->secret;
    }
  }
}

CatalogTlsConfig ReadCatalogTls(const YamlValue& value, const RegionConfig& region,
                                const ConfigSources& sources) {
  CatalogTlsConfig tls;
  auto map = value.Map(
      {"ca_file", "cert_file", "key_file", "key_env", "server_name", "insecure_skip_verify"});
  if (!map) return tls;

  // Everything here is about https; on a region that speaks only http it would do nothing,
  // and a setting that silently does nothing is a mistake waiting to be trusted.
  const bool token_https = HttpsHostOf(region.auth.token_uri) != "";
  if (region.catalog_uri.rfind("http://", 0) == 0 && !token_https) {
    value.Error("tls settings apply only to https:// URLs, and catalog_uri is " +
                region.catalog_uri);
  }

  if (auto v = map->Get("insecure_skip_verify")) {
    if (auto b = v->Bool()) {
      tls.insecure_skip_verify = *b;
      if (*b && map->Has("ca_file"))
        v->Error("turns off the certificate check that ca_file is for: set one or the other");
    }
  }

  std::string ca_text;
  ReadCertificates(*map, "ca_file", sources, &tls.ca_file, &ca_text);

  ReadClientCertificate(*map, sources, &tls.cert_file, &tls.key);

  if (auto v = map->Get("server_name")) {
    if (auto s = v->String()) {
      if (!IsServerName(*s)) {
        v->Error(
            "expected a host name or IP address as the certificate names it (no scheme, "
            "port or path), got " +
            v->Describe());
      } else {
        tls.server_name = *s;
        // One transport serves the region, so server_name is checked on every https
        // connection it makes, the token endpoint's too.
        const std::string token_host = HttpsHostOf(region.auth.token_uri);
        const std::string catalog_host = HttpsHostOf(region.catalog_uri);
        if (token_https && token_host != catalog_host) {
          v->Error("would also be required of auth.token_uri's host " + token_host +
                   ", which is not the catalog's; put the token endpoint on the catalog's host "
                   "or drop server_name");
        }
      }
    }
  }
  return tls;
}

}  // namespace icewarden
