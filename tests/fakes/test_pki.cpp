#include "tests/fakes/test_pki.h"

#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "tests/fakes/subprocess.h"

namespace icewarden::testing {
namespace {

constexpr const char* kOpenSsl = "/usr/bin/openssl";

bool Run(const std::vector<std::string>& argv, std::string* error) {
  CommandResult r = RunCommand(argv);
  if (r.exit_code == 0) return true;
  if (error != nullptr) *error = argv[1] + ": " + r.err;
  return false;
}

std::vector<std::string> NewKeyArgs() {
  return {"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"};
}

}  // namespace

bool HaveOpenSslCli() { return std::filesystem::exists(kOpenSsl); }

bool MakeTestCa(const std::string& dir, const std::string& name, TestCa* out, std::string* error) {
  out->cert = dir + "/" + name + ".crt";
  out->key = dir + "/" + name + ".key";
  std::vector<std::string> argv = {kOpenSsl, "req", "-x509"};
  for (auto& a : NewKeyArgs()) argv.push_back(a);
  for (const std::string& a :
       {std::string("-keyout"), out->key, std::string("-out"), out->cert, std::string("-days"),
        std::string("2"), std::string("-subj"), "/CN=" + name, std::string("-addext"),
        std::string("basicConstraints=critical,CA:TRUE"), std::string("-addext"),
        std::string("keyUsage=critical,keyCertSign,cRLSign")})
    argv.push_back(a);
  return Run(argv, error);
}

bool MakeTestLeaf(const std::string& dir, const std::string& name, const TestCa& ca,
                  const std::string& san, const std::string& usage, TestLeaf* out,
                  std::string* error, const std::string& subject) {
  out->cert = dir + "/" + name + ".crt";
  out->key = dir + "/" + name + ".key";
  const std::string csr = dir + "/" + name + ".csr";
  const std::string ext = dir + "/" + name + ".ext";
  std::ofstream(ext) << "basicConstraints=CA:FALSE\nextendedKeyUsage=" << usage
                     << (san.empty() ? "" : "\nsubjectAltName=" + san) << "\n";
  std::vector<std::string> req = {kOpenSsl, "req"};
  for (auto& a : NewKeyArgs()) req.push_back(a);
  for (const std::string& a : {std::string("-keyout"), out->key, std::string("-out"), csr,
                               std::string("-subj"), subject.empty() ? "/CN=" + name : subject})
    req.push_back(a);
  if (!Run(req, error)) return false;
  return Run({kOpenSsl, "x509", "-req", "-in", csr, "-CA", ca.cert, "-CAkey", ca.key,
              "-CAcreateserial", "-out", out->cert, "-days", "2", "-extfile", ext},
             error);
}

HttpsCatalog::HttpsCatalog(const TestLeaf& cert, const std::string& client_ca)
    : server_(std::make_unique<httplib::SSLServer>(
          cert.cert.c_str(), cert.key.c_str(), client_ca.empty() ? nullptr : client_ca.c_str())) {
  server_->Get("/v1/config", [this](const httplib::Request&, httplib::Response& res) {
    ++requests_;
    res.set_content(R"({"defaults":{},"overrides":{}})", "application/json");
  });
  port_ = server_->bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

HttpsCatalog::~HttpsCatalog() {
  server_->stop();
  thread_.join();
}

bool HttpsCatalog::valid() const { return server_->is_valid() && port_ > 0; }

std::string HttpsCatalog::Uri() const { return "https://127.0.0.1:" + std::to_string(port_); }

}  // namespace icewarden::testing
