// A real `icewarden serve` on a real etcd member that speaks only TLS, wants a client
// certificate and has auth enabled (issue 12, item 1): with the config's tls and auth it leads;
// with a wrong password it stops at once, naming the user and the member, never the password;
// with a config that cannot work it stops before it touches the record.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <filesystem>
#include <fstream>

#include "tests/etcd/etcd_member.h"
#include "tests/fakes/etcd_admin.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kPassword = "etcd-pw-4711";

class ServeTlsAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveOpenSslCli()) GTEST_SKIP() << "openssl CLI is not installed";
    dir_ = MakeTempDir("serve-tls-auth");
    std::string e;
    EtcdTestPki pki;
    ASSERT_TRUE(MakeEtcdTestPki(dir_, &pki, &e)) << e;
    ca_ = pki.ca;
    member_ = pki.member;
    client_ = pki.client;
    std::ofstream(dir_ + "/admin.token") << "admin-secret-1\n";
    std::ofstream(dir_ + "/etcd.password") << kPassword << "\n";
    std::ofstream(dir_ + "/wrong.password") << "not-" << kPassword << "\n";
    const EtcdMemberTls tls{member_.cert, member_.key, ca_.cert};
    etcd_ = std::make_unique<EtcdMember>(std::vector<std::string>{}, &tls);
    ASSERT_TRUE(etcd_->WaitReady(ClientTls())) << "etcd did not start at " << etcd_->url();
    ASSERT_TRUE(EtcdAdmin(etcd_->url(), {client_.cert, client_.key})
                    .EnableAuth("root-pw", "icewarden", kPassword, &e))
        << e;
  }
  void TearDown() override {
    if (serve_) serve_->Signal(SIGKILL);
    serve_.reset();
    etcd_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  EtcdTlsOptions ClientTls() const { return {ca_.cert, client_.cert, ReadTestFile(client_.key)}; }
  // Everything under /icewarden/, read as icewarden with TLS and its password.
  EtcdRange Record() {
    EtcdClient etcd({{etcd_->url()}, 2s, ClientTls(), {"icewarden", kPassword}});
    auto r = etcd.Range("/icewarden/", EtcdClient::PrefixEnd("/icewarden/"));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : EtcdRange{};
  }

  // A config whose state.etcd has `etcd_lines` after its endpoints; its path.
  std::string Config(int port, const std::string& etcd_lines) {
    const std::string path = dir_ + "/c.yaml";
    std::ofstream(path) << "api:\n  listen: 127.0.0.1:" << port << R"(
  tokens:
    - {name: ada, role: admin, token_file: admin.token}
state:
  backend: etcd
  etcd:
    endpoints: [)" << etcd_->url()
                        << "]\n"
                        << etcd_lines << R"(    leader_ttl: 2s
    replica: replica-a
regions:
  - name: us-east-1
    catalog_uri: http://127.0.0.1:9/catalog
ownership:
  default_owner: us-east-1
)";
    return path;
  }
  static std::string Secured(const std::string& password_file) {
    return "    tls: {ca_file: etcd-ca.crt, cert_file: icewarden.crt, key_file: icewarden.key}\n"
           "    auth: {username: icewarden, password_file: " +
           password_file + "}\n";
  }

  std::string dir_;
  TestCa ca_;
  TestLeaf member_, client_;
  std::unique_ptr<EtcdMember> etcd_;
  std::unique_ptr<Subprocess> serve_;
};

TEST_F(ServeTlsAuthTest, LeadsOverTlsWithAClientCertificateAndAPassword) {
  const int port = FreePort();
  serve_ = std::make_unique<Subprocess>(std::vector<std::string>{
      IcewardenBinary(), "serve", "--config", Config(port, Secured("etcd.password"))});
  const std::string first = serve_->ReadLine(20s).value_or("");
  ASSERT_THAT(first, AllOf(HasSubstr("serving"), HasSubstr("leader"))) << first;

  httplib::Client api("http://127.0.0.1:" + std::to_string(port));
  auto regions = api.Get("/api/v1/regions", {{"Authorization", "Bearer admin-secret-1"}});
  ASSERT_TRUE(regions);
  EXPECT_EQ(regions->status, 200) << regions->body;
  bool leader_key = false;
  for (const EtcdKeyValue& kv : Record().kvs) {
    if (kv.key == "/icewarden/leader") {
      leader_key = true;
      EXPECT_THAT(kv.value, HasSubstr("replica-a"));
    }
  }
  EXPECT_TRUE(leader_key) << "the leader key is not in etcd";

  serve_->Signal(SIGTERM);
  EXPECT_EQ(serve_->Wait(15s), 0);
}

TEST_F(ServeTlsAuthTest, AWrongPasswordStopsServeNamingTheUserAndTheMember) {
  CommandResult r = RunCommand(
      {IcewardenBinary(), "serve", "--config", Config(FreePort(), Secured("wrong.password"))}, {},
      20s);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string said = r.out + r.err;
  EXPECT_THAT(said, AllOf(HasSubstr("etcd " + etcd_->url().substr(8) +
                                    ": authentication as user 'icewarden' failed"),
                          Not(HasSubstr(kPassword))))
      << said;
  EXPECT_EQ(Record().count, 0) << "serve wrote to the record with a password etcd refused";
}

TEST_F(ServeTlsAuthTest, AConfigThatCannotWorkStopsServeBeforeItTouchesTheRecord) {
  // https without a CA file: a config error at its position, exit 2.
  CommandResult no_ca =
      RunCommand({IcewardenBinary(), "serve", "--config", Config(FreePort(), "")}, {}, 20s);
  EXPECT_EQ(no_ca.exit_code, 2) << no_ca.out << no_ca.err;
  EXPECT_THAT(no_ca.out + no_ca.err,
              HasSubstr("c.yaml:8:17: state.etcd.endpoints[0]: an https:// endpoint needs "
                        "state.etcd.tls.ca_file"));
  // No client certificate for a member that wants one: the member's refusal, exit 1.
  CommandResult no_cert =
      RunCommand({IcewardenBinary(), "serve", "--config",
                  Config(FreePort(),
                         "    tls: {ca_file: etcd-ca.crt}\n"
                         "    auth: {username: icewarden, password_file: etcd.password}\n")},
                 {}, 20s);
  EXPECT_EQ(no_cert.exit_code, 1) << no_cert.out << no_cert.err;
  EXPECT_THAT(no_cert.out + no_cert.err, HasSubstr("refused this client's TLS certificate"));
  EXPECT_EQ(Record().count, 0);
}

}  // namespace
}  // namespace icewarden::testing
