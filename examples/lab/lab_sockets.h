// What the lab does to cpp-httplib's sockets that httplib itself does not offer: wait for a
// listener, raise its accept backlog, and cut the connections of a stopping region.
// Thread-safety: every function may be called from any thread.
#pragma once

#include <httplib.h>

#include <functional>

namespace icewarden::lab {

// Returns once `server`, whose listen_after_bind() runs on another thread, accepts connections.
void WaitUntilListening(const httplib::Server& server);

// Raises the accept backlog of this process's listening socket bound to 127.0.0.1:`port` (or
// any address with that port) to `backlog`. Debian's cpp-httplib 0.11 is a compiled library
// that listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG in our code cannot change it):
// when a client opens dozens of connections at once, SYNs overflow the queue and are retried
// after 1 s, 3 s, 7 s... Linux lets listen() be called again on a listening socket to change
// its backlog. False when no such socket was found.
bool WidenListenBacklog(int port, int backlog = 1024);

// Shuts down (both directions) the connections this process accepted on local `port`, except
// those whose peer port `keep` accepts, so that the threads serving them see the end of the
// stream at once.
void ShutdownConnectionsOnPort(int port, const std::function<bool(int peer_port)>& keep = {});

}  // namespace icewarden::lab
