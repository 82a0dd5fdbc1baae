// EtcdClient against a real etcd (Debian's etcd-server, started here on loopback ports):
// keys and values round-trip byte for byte, prefix ranges, a compare-and-set txn that
// succeeds and one that fails (the gateway leaves "succeeded" out), leases that keep a key
// alive and take it away when revoked, and errors that name what went wrong.
#include "state/etcd_client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "tests/etcd/etcd_member.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;
using testing::EtcdMember;
using testing::FreePort;

class EtcdClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    member_ = new EtcdMember();
    ASSERT_TRUE(member_->WaitReady()) << "etcd did not start at " << member_->url();
  }
  static void TearDownTestSuite() {
    delete member_;
    member_ = nullptr;
  }
  EtcdClient Client() { return EtcdClient({{member_->url()}, 2s}); }
  static EtcdMember* member_;
};
EtcdMember* EtcdClientTest::member_ = nullptr;

TEST_F(EtcdClientTest, KeysAndValuesRoundTripByteForByte) {
  EtcdClient etcd = Client();
  const std::string key = std::string("/t1/\x00\xff key", 12);
  const std::string value = std::string("v\x00\x01\xfe=", 5) + std::string(5000, 'x');
  auto rev = etcd.Put(key, value);
  ASSERT_TRUE(rev.ok()) << rev.status().ToString();
  auto got = etcd.Range(key);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->kvs.size(), 1u);
  EXPECT_EQ(got->kvs[0].key, key);
  EXPECT_EQ(got->kvs[0].value, value);
  EXPECT_EQ(got->kvs[0].mod_revision, *rev);
  EXPECT_EQ(got->kvs[0].create_revision, *rev);
  EXPECT_EQ(got->kvs[0].version, 1);
  EXPECT_GE(got->revision, *rev);

  auto missing = etcd.Range("/t1/nothing here");
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_TRUE(missing->kvs.empty());
  EXPECT_EQ(missing->count, 0);
}

TEST_F(EtcdClientTest, PrefixRangesAreOrderedAndLimited) {
  EtcdClient etcd = Client();
  for (const char* k : {"/t2/b", "/t2/a", "/t2/c", "/t20"}) ASSERT_TRUE(etcd.Put(k, k).ok());
  auto all = etcd.Range("/t2/", EtcdClient::PrefixEnd("/t2/"));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->kvs.size(), 3u) << "/t20 is not under /t2/";
  EXPECT_EQ(all->kvs[0].key, "/t2/a");
  EXPECT_EQ(all->kvs[2].key, "/t2/c");
  auto two = etcd.Range("/t2/", EtcdClient::PrefixEnd("/t2/"), 2);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->kvs.size(), 2u);
  EXPECT_EQ(two->count, 3);
  EXPECT_TRUE(two->more);
  auto deleted = etcd.DeleteRange("/t2/", EtcdClient::PrefixEnd("/t2/"));
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(*deleted, 3);
  EXPECT_TRUE(etcd.Range("/t2/a")->kvs.empty());
  EXPECT_EQ(etcd.Range("/t20")->kvs.size(), 1u);
}

TEST_F(EtcdClientTest, TxnIsACompareAndSetOnTheModRevision) {
  EtcdClient etcd = Client();
  auto first = etcd.Put("/t3/owner", "us-east-1@1");
  ASSERT_TRUE(first.ok());
  // The row as read: move it only if nobody wrote it since.
  EtcdCompare unchanged{"/t3/owner", EtcdCompare::Target::kModRevision, EtcdCompare::Result::kEqual,
                        *first, ""};
  auto moved = etcd.Txn({unchanged}, {{EtcdOp::Kind::kPut, "/t3/owner", "eu-central-1@2", "", 0}},
                        {{EtcdOp::Kind::kRange, "/t3/owner", "", "", 0}});
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_TRUE(moved->succeeded);
  EXPECT_GT(moved->revision, *first);

  // The same compare again is stale: the failure branch runs and reads the row as it is.
  auto stale = etcd.Txn({unchanged}, {{EtcdOp::Kind::kPut, "/t3/owner", "ap-south-1@2", "", 0}},
                        {{EtcdOp::Kind::kRange, "/t3/owner", "", "", 0}});
  ASSERT_TRUE(stale.ok()) << stale.status().ToString();
  EXPECT_FALSE(stale->succeeded);
  ASSERT_EQ(stale->ranges.size(), 1u);
  ASSERT_EQ(stale->ranges[0].kvs.size(), 1u);
  EXPECT_EQ(stale->ranges[0].kvs[0].value, "eu-central-1@2");

  // A key created only if absent (create_revision == 0), as a leader key is.
  EtcdCompare absent{"/t3/leader", EtcdCompare::Target::kCreateRevision,
                     EtcdCompare::Result::kEqual, 0, ""};
  auto created = etcd.Txn({absent}, {{EtcdOp::Kind::kPut, "/t3/leader", "replica-a", "", 0}});
  ASSERT_TRUE(created.ok());
  EXPECT_TRUE(created->succeeded);
  auto again = etcd.Txn({absent}, {{EtcdOp::Kind::kPut, "/t3/leader", "replica-b", "", 0}});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->succeeded);
  EXPECT_EQ(etcd.Range("/t3/leader")->kvs[0].value, "replica-a");
}

TEST_F(EtcdClientTest, ALeaseKeepsItsKeyUntilRevoked) {
  EtcdClient etcd = Client();
  auto lease = etcd.LeaseGrant(5s);
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_NE(lease->id, 0);
  EXPECT_EQ(lease->ttl_seconds, 5);
  ASSERT_TRUE(etcd.Put("/t4/leader", "replica-a", lease->id).ok());
  EXPECT_EQ(etcd.Range("/t4/leader")->kvs.at(0).lease, lease->id);
  auto renewed = etcd.LeaseKeepAlive(lease->id);
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();
  EXPECT_EQ(*renewed, 5);

  ASSERT_TRUE(etcd.LeaseRevoke(lease->id).ok());
  EXPECT_TRUE(etcd.Range("/t4/leader")->kvs.empty()) << "revoking the lease deletes its keys";
  auto gone = etcd.LeaseKeepAlive(lease->id);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound) << gone.status().ToString();
}

TEST_F(EtcdClientTest, ErrorsSayWhatWentWrong) {
  EtcdClient etcd = Client();
  // A put on a lease that does not exist: etcd refuses it.
  auto bad = etcd.Put("/t5/k", "v", 0x7fffffff);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("lease not found"), std::string::npos)
      << bad.status().ToString();
  EXPECT_FALSE(etcd.Range("/t5/k")->kvs.size() > 0) << "nothing was written";

  // No member at all: unavailable, naming the endpoint.
  const std::string nobody = "http://127.0.0.1:" + std::to_string(FreePort());
  EtcdClient down({{nobody}, 500ms});
  auto r = down.Range("/t5/k");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find(nobody.substr(7)), std::string::npos)
      << r.status().ToString();

  // The first endpoint down, the second up: the client moves on.
  EtcdClient failover({{nobody, member_->url()}, 2s});
  auto via_second = failover.Range("/t5/k");
  EXPECT_TRUE(via_second.ok()) << via_second.status().ToString();
}

// A member that reads each request whole and then drops the connection without a byte of
// answer (as one that crashed mid-request would): counts what reached it.
class DroppingMember {
 public:
  DroppingMember() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    ::listen(fd_, 16);
    socklen_t len = sizeof(a);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (true) {
        int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0 || stop_) {
          if (c >= 0) ::close(c);
          return;
        }
        std::string in;
        char buf[4096];
        // Headers, then as much body as Content-Length says.
        while (true) {
          auto end = in.find("\r\n\r\n");
          if (end != std::string::npos) {
            auto at = in.find("Content-Length: ");
            std::size_t length = at == std::string::npos ? 0 : std::stoul(in.substr(at + 16));
            if (in.size() >= end + 4 + length) break;
          }
          ssize_t n = ::recv(c, buf, sizeof(buf), 0);
          if (n <= 0) break;
          in.append(buf, static_cast<std::size_t>(n));
        }
        ++requests_;
        ::close(c);
      }
    });
  }
  ~DroppingMember() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

TEST(EtcdClientFailureTest, AReadIsSentTwiceAWriteOnceAndSaysToReadBack) {
  DroppingMember member;
  EtcdClient etcd({{member.url()}, 2s});
  auto read = etcd.Range("/k");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(member.requests(), 2) << "a read is retried once on a fresh connection";

  auto write = etcd.Put("/k", "v");
  ASSERT_FALSE(write.ok());
  EXPECT_EQ(member.requests(), 3) << "a write that reached the member is never resent";
  EXPECT_NE(write.status().message().find("may have been applied"), std::string::npos)
      << write.status().ToString();
  auto txn = etcd.Txn({}, {{EtcdOp::Kind::kPut, "/k", "v", "", 0}});
  ASSERT_FALSE(txn.ok());
  EXPECT_EQ(member.requests(), 4);
}

TEST(EtcdClientFailureTest, AnEndpointThatIsNotHttpHostPortIsAConfigError) {
  // (https is an endpoint since issue 12 item 1; TLS settings: etcd_tls_test.cpp.)
  EtcdClient etcd({{"ftp://127.0.0.1:2379"}, 500ms});
  auto r = etcd.Range("/k");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("ftp://127.0.0.1:2379"), std::string::npos)
      << r.status().ToString();
  EtcdClient no_port({{"http://127.0.0.1"}, 500ms});
  EXPECT_EQ(no_port.Put("/k", "v").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace icewarden
