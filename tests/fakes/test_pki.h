// A throwaway PKI for TLS tests, made with the `openssl` CLI (scripts/setup.sh installs it)
// in the test's own folder: a CA, and leaf certificates it signs for a server (with the
// subjectAltNames the test wants) or for a client (mutual TLS). EC P-256 keys: quick to
// make. Every file is PEM; keys are unencrypted. And an HTTPS catalog to present them.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class SSLServer;
}

namespace icewarden::testing {

// True when /usr/bin/openssl exists; tests skip without it.
bool HaveOpenSslCli();

struct TestCa {
  std::string cert;  // DIR/NAME.crt
  std::string key;   // DIR/NAME.key
};
struct TestLeaf {
  std::string cert;
  std::string key;
};

// A self-signed CA named CN=NAME; false (with the tool's stderr in *error) on failure.
bool MakeTestCa(const std::string& dir, const std::string& name, TestCa* out, std::string* error);
// A certificate signed by `ca`. `san` is an openssl subjectAltName value
// ("IP:127.0.0.1,DNS:localhost"); `usage` is "serverAuth" or "clientAuth". The subject is
// CN=NAME unless `subject` says otherwise ("/O=icewarden": one without a CN).
bool MakeTestLeaf(const std::string& dir, const std::string& name, const TestCa& ca,
                  const std::string& san, const std::string& usage, TestLeaf* out,
                  std::string* error, const std::string& subject = "");

// An HTTPS catalog on 127.0.0.1:<ephemeral> (cpp-httplib's SSLServer) that answers
// GET /v1/config with an empty ConfigResponse and counts those requests. With `client_ca`
// it demands a client certificate signed by that CA.
class HttpsCatalog {
 public:
  explicit HttpsCatalog(const TestLeaf& cert, const std::string& client_ca = "");
  ~HttpsCatalog();
  bool valid() const;
  std::string Uri() const;  // "https://127.0.0.1:PORT"
  int requests() const { return requests_; }

 private:
  std::unique_ptr<httplib::SSLServer> server_;
  int port_ = 0;
  std::atomic<int> requests_{0};
  std::thread thread_;
};

}  // namespace icewarden::testing
