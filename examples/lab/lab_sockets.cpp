#include "examples/lab/lab_sockets.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>
#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>

namespace icewarden::lab {

void WaitUntilListening(const httplib::Server& server) {
  // httplib's stop() is a no-op until listen_after_bind() has marked the server running, so a
  // Stop() right after Start() would otherwise leave the listener thread in accept() for good.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!server.is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

namespace {

// Calls fn(fd) for this process's IPv4 TCP sockets bound to local `port`: the listening one
// (`listening`) or the connections accepted on it. httplib keeps its sockets private, so they
// are found among the process's descriptors.
template <class F>
void ForEachSocketOnPort(int port, bool listening, F&& fn) {
  std::error_code error;  // no /proc: nothing found, which callers report
  std::filesystem::directory_iterator it("/proc/self/fd", error);
  for (; !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    int fd = 0;
    const std::string name = it->path().filename().string();
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), fd);
    if (ec != std::errc() || end != name.data() + name.size()) continue;
    int accepting = 0;
    socklen_t length = sizeof accepting;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) != 0) continue;
    if ((accepting != 0) != listening) continue;
    sockaddr_in address{};
    length = sizeof address;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
        address.sin_family != AF_INET || ntohs(address.sin_port) != port) {
      continue;
    }
    fn(fd);
  }
}

}  // namespace

bool WidenListenBacklog(int port, int backlog) {
  bool widened = false;
  ForEachSocketOnPort(port, true, [&](int fd) { widened = listen(fd, backlog) == 0; });
  return widened;
}

void ShutdownConnectionsOnPort(int port, const std::function<bool(int)>& keep) {
  ForEachSocketOnPort(port, false, [&](int fd) {
    sockaddr_in peer{};
    socklen_t length = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) == 0 && keep &&
        keep(ntohs(peer.sin_port))) {
      return;
    }
    shutdown(fd, SHUT_RDWR);
  });
}

}  // namespace icewarden::lab
