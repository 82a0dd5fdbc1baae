// Free loopback ports for servers the action tests start: bind port 0, read the port,
// close. DNS needs the port free for both UDP and TCP.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace icewarden::testing {

// Binds `type` (SOCK_STREAM or SOCK_DGRAM) on 127.0.0.1:port; returns the bound port or 0.
inline uint16_t BindLoopback(int type, uint16_t port) {
  const int fd = socket(AF_INET, type, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  uint16_t bound = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    bound = ntohs(addr.sin_port);
  }
  close(fd);
  return bound;
}

inline uint16_t FreeTcpPort() { return BindLoopback(SOCK_STREAM, 0); }

// A port free for TCP and UDP alike, or 0.
inline uint16_t FreeTcpUdpPort() {
  for (int attempt = 0; attempt < 50; ++attempt) {
    const uint16_t port = BindLoopback(SOCK_STREAM, 0);
    if (port != 0 && BindLoopback(SOCK_DGRAM, port) == port) return port;
  }
  return 0;
}

}  // namespace icewarden::testing
