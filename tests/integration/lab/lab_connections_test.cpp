// How a lab region takes connections: a burst of connects is not dropped by a tiny accept
// backlog, and connections that stay open do not keep other clients from being served.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "examples/lab/lab_sockets.h"
#include "tests/integration/lab/lab_fixture.h"

namespace icewarden::lab::testing {
namespace {

using namespace std::chrono_literals;

// A descriptor closed on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

sockaddr_in Loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

TEST(WidenListenBacklogTest, ConnectsBeyondTheOriginalBacklogCompleteWithoutAnAccept) {
  // A socket listening with a backlog of 1 that never accepts: without the wider backlog, the
  // kernel drops the SYNs of all but the first connects, which then wait for retransmissions
  // that find the queue still full.
  Fd listener{socket(AF_INET, SOCK_STREAM, 0)};
  ASSERT_GE(listener.fd, 0);
  sockaddr_in address = Loopback(0);
  ASSERT_EQ(bind(listener.fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(listener.fd, 1), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(getsockname(listener.fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const int port = ntohs(address.sin_port);

  ASSERT_TRUE(WidenListenBacklog(port, 64));

  constexpr int kConnects = 32;
  std::vector<Fd> clients(kConnects);
  std::vector<pollfd> polls;
  for (auto& client : clients) {
    client.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ASSERT_GE(client.fd, 0);
    sockaddr_in target = Loopback(port);
    int rc = connect(client.fd, reinterpret_cast<sockaddr*>(&target), sizeof target);
    ASSERT_TRUE(rc == 0 || errno == EINPROGRESS) << strerror(errno);
    polls.push_back({client.fd, POLLOUT, 0});
  }
  // Every handshake completes (the connection waits in the accept queue); 3 s is far more
  // than loopback needs and less than the SYN retransmissions a dropped connect would need.
  auto deadline = std::chrono::steady_clock::now() + 3s;
  int connected = 0;
  while (connected < kConnects && std::chrono::steady_clock::now() < deadline) {
    ASSERT_GE(poll(polls.data(), polls.size(), 100), 0);
    connected = 0;
    for (auto& p : polls) {
      if (p.revents & POLLOUT) p.events = 0;  // done; keep its slot
      if (p.events == 0) ++connected;
    }
  }
  EXPECT_EQ(connected, kConnects);
  for (auto& client : clients) {
    int error = 0;
    socklen_t size = sizeof error;
    ASSERT_EQ(getsockopt(client.fd, SOL_SOCKET, SO_ERROR, &error, &size), 0);
    EXPECT_EQ(error, 0) << strerror(error);
  }
}

TEST(WidenListenBacklogTest, FindsNothingWhereNothingListens) {
  // A port bound but not listening is not a listening socket.
  Fd bound{socket(AF_INET, SOCK_STREAM, 0)};
  sockaddr_in address = Loopback(0);
  ASSERT_EQ(bind(bound.fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(getsockname(bound.fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  EXPECT_FALSE(WidenListenBacklog(ntohs(address.sin_port)));
}

class LabConnectionsTest : public LabTest {
 protected:
  LabConnectionsTest() { options_.server_threads = 2; }
};

TEST_F(LabConnectionsTest, OpenConnectionsDoNotStarveANewClient) {
  // Two keep-alive clients, as many as the region serves requests at once, keep their
  // connections busy for the whole test. A thread-per-connection pool of two would give a third
  // connection no thread for as long as they stay open.
  std::atomic<bool> stop{false};
  std::atomic<int> busy_requests{0};
  std::vector<std::thread> holders;
  for (int i = 0; i < 2; ++i) {
    holders.emplace_back([&] {
      auto client = Client(kUs);
      client->set_keep_alive(true);
      while (!stop) {
        if (client->Get("/v1/config?warehouse=lab")) ++busy_requests;
        std::this_thread::sleep_for(50ms);
      }
    });
  }
  ASSERT_TRUE(Eventually([&] { return busy_requests >= 4; }));

  auto newcomer = Client(kUs);
  newcomer->set_read_timeout(3);
  auto result = newcomer->Get("/v1/lab/namespaces");
  stop = true;
  for (auto& t : holders) t.join();
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 200) << result->body;
}

TEST_F(LabTest, AStoppingRegionDropsItsOpenConnectionsInsteadOfAnswering) {
  // A stopped region is a dead process: a client holding an idle keep-alive connection gets
  // no answer on it (then "connection refused" on a new one), never a 503 from a region that
  // is half gone.
  auto kept = Client(kUs);
  kept->set_keep_alive(true);
  ASSERT_TRUE(kept->Get("/v1/config?warehouse=lab"));
  std::thread stopper([&] { EXPECT_TRUE(lab_->StopRegion(kUs).ok()); });
  // Once new connections are refused, the listener is closed and the stop is under way.
  ASSERT_TRUE(Eventually([&] { return !Client(kUs)->Get("/v1/config?warehouse=lab"); }));
  auto after = kept->Get("/v1/config?warehouse=lab");
  stopper.join();
  EXPECT_FALSE(after) << "answered " << after->status << ": " << after->body;
}

}  // namespace
}  // namespace icewarden::lab::testing
