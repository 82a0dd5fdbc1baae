// How a transport speaks TLS to one region's catalog (and to its OAuth2 token endpoint),
// and the checks that tell a config's TLS files apart from what OpenSSL will refuse.
//
// TlsOptions is plain data: the Beast transport (beast_transport.h) builds its OpenSSL
// context from it on the first https request; the config loader checks the same files
// with the functions below, so that a bad CA bundle or a key for another certificate is a
// FILE:LINE:COL error at load and not a probe failure at run time.
// Thread-safety: plain values and pure functions.
#pragma once

#include <string>

#include "state/status.h"

namespace icewarden {

struct TlsOptions {
  // Verify the server certificate chain and host name (SNI is always sent). Turning this
  // off is for labs with self-signed certificates only.
  bool verify_peer = true;
  // A PEM bundle of trusted CAs, used in addition to the system's default CA paths.
  std::string ca_file;
  // Mutual TLS: the client certificate (PEM, optionally followed by its intermediates)
  // and its private key as PEM text (a Secret's value: it never appears in a message).
  // Both or neither.
  std::string cert_file;
  std::string key_pem;
  // The name sent as SNI and verified in the server's certificate instead of the URL's
  // host; empty: the URL's host.
  std::string server_name;
};

// OK when `pem` holds at least one PEM certificate and nothing OpenSSL cannot read;
// otherwise kInvalidArgument with OpenSSL's reason ("no certificate found").
Status CheckCertificatesPem(const std::string& pem);
// OK when `pem` is one PEM private key that OpenSSL can use (unencrypted).
Status CheckPrivateKeyPem(const std::string& pem);
// OK when the first certificate in `cert_pem` is the public half of `key_pem`.
Status CheckKeyMatchesCertificate(const std::string& cert_pem, const std::string& key_pem);

}  // namespace icewarden
