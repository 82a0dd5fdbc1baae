// The catalog TLS settings through the real binary: README.md's example ("TLS to a region's
// catalog") validated with the command exactly as the README prints it, and `serve`
// warning at start about a region whose certificate it does not verify.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"
#include "tests/fakes/test_pki.h"

namespace icewarden {
namespace {

using testing::IcewardenBinary;
using testing::RunCommand;

struct DocumentedExample {
  std::string yaml;     // the section's ```yaml block
  std::string command;  // the one line of its ```sh block
};

DocumentedExample ReadReadmeSection(const std::string& heading) {
  DocumentedExample out;
  std::ifstream in(testing::SourceDir() + "/README.md");
  std::string line, block;
  bool in_section = false;
  std::string fence;  // "```yaml" or "```sh" while inside one
  while (std::getline(in, line)) {
    if (fence.empty() && line.rfind("#", 0) == 0) {
      if (in_section) break;
      in_section = line == heading;
      continue;
    }
    if (!in_section) continue;
    if (line.rfind("```", 0) == 0) {
      if (fence.empty()) {
        fence = line;
        block.clear();
        continue;
      }
      if (fence == "```yaml" && out.yaml.empty()) out.yaml = block;
      if (fence == "```sh" && out.command.empty()) out.command = block;
      fence.clear();
      continue;
    }
    if (!fence.empty()) block += (fence == "```sh" ? line : line + "\n");
  }
  return out;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `icewarden serve --config CONFIG` with its log (stderr) going to `err`.
std::unique_ptr<testing::Subprocess> StartServe(const std::string& config, const std::string& err) {
  return std::make_unique<testing::Subprocess>(std::vector<std::string>{
      "/bin/sh", "-c",
      "exec '" + IcewardenBinary() + "' serve --config '" + config + "' 2>'" + err + "'"});
}

TEST(ConfigTlsCli, TheReadmeExampleValidatesAsPrinted) {
  if (!testing::HaveOpenSslCli()) GTEST_SKIP() << "openssl CLI is not installed";
  DocumentedExample doc = ReadReadmeSection("#### TLS to a region's catalog");
  ASSERT_NE(doc.yaml.find("ca_file: tls/ca.pem"), std::string::npos) << doc.yaml;
  const std::string printed = "build/icewarden config validate tls.yaml";
  ASSERT_EQ(doc.command, printed);

  const std::string dir = testing::MakeTempDir("config-tls-docs");
  std::ofstream(dir + "/tls.yaml") << doc.yaml;
  // The command as printed, with `build/icewarden` standing for the binary this build made.
  const std::string command = "cd '" + dir + "' && '" + IcewardenBinary() + "'" +
                              doc.command.substr(std::string("build/icewarden").size());

  // Without the files: warnings, exit 0; --strict (what serve needs): errors at their lines.
  auto lenient = RunCommand({"/bin/sh", "-c", command});
  EXPECT_EQ(lenient.exit_code, 0) << lenient.err;
  EXPECT_NE(lenient.err.find("tls.yaml:5:16: warning: regions[0].tls.ca_file: cannot read"),
            std::string::npos)
      << lenient.err;
  auto strict = RunCommand({"/bin/sh", "-c", command + " --strict"});
  EXPECT_EQ(strict.exit_code, 2) << strict.err;
  EXPECT_NE(strict.err.find("tls.yaml:7:17: regions[0].tls.key_file: cannot read"),
            std::string::npos)
      << strict.err;

  // With the three files beside it, as the README says: ok, and nothing to warn about.
  std::filesystem::create_directories(dir + "/tls");
  testing::TestCa ca;
  testing::TestLeaf client;
  std::string error;
  ASSERT_TRUE(testing::MakeTestCa(dir + "/tls", "ca", &ca, &error)) << error;
  ASSERT_TRUE(testing::MakeTestLeaf(dir + "/tls", "client", ca, "DNS:icewarden", "clientAuth",
                                    &client, &error))
      << error;
  std::filesystem::copy_file(ca.cert, dir + "/tls/ca.pem");
  std::filesystem::copy_file(client.cert, dir + "/tls/icewarden.pem");
  std::filesystem::copy_file(client.key, dir + "/tls/icewarden.key");
  auto good = RunCommand({"/bin/sh", "-c", command});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_EQ(good.err, "");
  EXPECT_NE(good.out.find("tls.yaml: ok (2 regions"), std::string::npos) << good.out;
  EXPECT_EQ(good.out.find("warning"), std::string::npos) << good.out;
  auto good_strict = RunCommand({"/bin/sh", "-c", command + " --strict"});
  EXPECT_EQ(good_strict.exit_code, 0) << good_strict.err;
  std::filesystem::remove_all(dir);
}

TEST(ConfigTlsCli, ServeWarnsAtStartAboutARegionWhoseCertificateItDoesNotVerify) {
  const std::string dir = testing::MakeTempDir("serve-skip-verify");
  std::ofstream(dir + "/c.yaml") << R"(api:
  listen: 127.0.0.1:0
state:
  path: state.db
regions:
  - name: us-east-1
    catalog_uri: https://127.0.0.1:9/catalog
  - name: eu-west-1
    catalog_uri: https://127.0.0.1:9/catalog
    tls:
      insecure_skip_verify: true
ownership:
  default_owner: us-east-1
)";
  const std::string err = dir + "/serve.err";
  auto serve = StartServe(dir + "/c.yaml", err);
  auto line = serve->ReadLine(std::chrono::seconds(20));
  ASSERT_TRUE(line.has_value()) << "serve printed nothing: " << Slurp(err);
  EXPECT_NE(line->find("serving"), std::string::npos) << *line;
  serve->Signal(SIGTERM);
  ASSERT_TRUE(serve->Wait(std::chrono::seconds(10)).has_value());
  const std::string log = Slurp(err);
  EXPECT_NE(log.find("warn"), std::string::npos) << log;
  EXPECT_NE(log.find("region eu-west-1: tls.insecure_skip_verify is set"), std::string::npos)
      << log;
  EXPECT_EQ(log.find("region us-east-1: tls.insecure_skip_verify"), std::string::npos) << log;
  std::filesystem::remove_all(dir);
}

// serve's probes reach a catalog that only a client with icewarden's certificate, trusting
// the catalog's private CA, can talk to: the catalog counts the GET /v1/config it served.
TEST(ConfigTlsCli, ServeProbesAnHttpsCatalogWithTheRegionsTls) {
  if (!testing::HaveOpenSslCli()) GTEST_SKIP() << "openssl CLI is not installed";
  const std::string dir = testing::MakeTempDir("serve-mtls");
  testing::TestCa ca;
  testing::TestLeaf server_cert, client;
  std::string error;
  ASSERT_TRUE(testing::MakeTestCa(dir, "ca", &ca, &error)) << error;
  ASSERT_TRUE(
      testing::MakeTestLeaf(dir, "server", ca, "IP:127.0.0.1", "serverAuth", &server_cert, &error))
      << error;
  ASSERT_TRUE(
      testing::MakeTestLeaf(dir, "client", ca, "DNS:icewarden", "clientAuth", &client, &error))
      << error;
  testing::HttpsCatalog catalog(server_cert, ca.cert);
  ASSERT_TRUE(catalog.valid());
  std::ofstream(dir + "/c.yaml") << "api:\n  listen: 127.0.0.1:0\nstate:\n  path: state.db\n"
                                    "regions:\n  - name: us-east-1\n    catalog_uri: "
                                 << catalog.Uri()
                                 << "\n    tls: {ca_file: ca.crt, cert_file: client.crt, "
                                    "key_file: client.key}\n"
                                    "    probe: {interval: 200ms, timeout: 150ms}\n"
                                    "ownership:\n  default_owner: us-east-1\n";
  const std::string err = dir + "/serve.err";
  auto serve = StartServe(dir + "/c.yaml", err);
  auto line = serve->ReadLine(std::chrono::seconds(20));
  ASSERT_TRUE(line.has_value()) << "serve printed nothing: " << Slurp(err);
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
       catalog.requests() == 0 && std::chrono::steady_clock::now() < until;)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GT(catalog.requests(), 0) << Slurp(err);
  serve->Signal(SIGTERM);
  EXPECT_TRUE(serve->Wait(std::chrono::seconds(10)).has_value());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace icewarden
