// sd_notify(3)'s protocol, written out: a datagram to $NOTIFY_SOCKET per state, and the
// watchdog's pings at half of $WATCHDOG_USEC.

#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "orchestrator/service/service.h"

namespace icewarden {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// $WATCHDOG_USEC when it is meant for this process ($WATCHDOG_PID unset or ours), else 0.
std::chrono::microseconds WatchdogInterval() {
  const std::string usec = Env("WATCHDOG_USEC");
  const std::string pid = Env("WATCHDOG_PID");
  if (!pid.empty() && pid != std::to_string(::getpid())) return {};
  long long value = 0;
  const auto [end, err] = std::from_chars(usec.data(), usec.data() + usec.size(), value);
  if (err != std::errc() || end != usec.data() + usec.size() || value <= 0) return {};
  return std::chrono::microseconds(value);
}

}  // namespace

Status NotifySupervisor(std::string_view state) {
  const std::string path = Env("NOTIFY_SOCKET");
  if (path.empty()) return Status::Ok();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if ((path[0] != '/' && path[0] != '@') || path.size() >= sizeof(addr.sun_path))
    return Status::InvalidArgument("NOTIFY_SOCKET '" + path +
                                   "' is neither an absolute path nor @abstract");
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (path[0] == '@') addr.sun_path[0] = '\0';  // the abstract namespace
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Unavailable(std::string("socket: ") + std::strerror(errno));
  const ssize_t sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                                reinterpret_cast<const sockaddr*>(&addr), len);
  const int error = errno;
  ::close(fd);
  if (sent < 0 || static_cast<std::size_t>(sent) != state.size())
    return Status::Unavailable("NOTIFY_SOCKET '" + path + "': " + std::strerror(error));
  return Status::Ok();
}

std::string ReloadingState() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  const long long usec = static_cast<long long>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
  return "RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec);
}

struct SupervisorWatchdog::Loop {
  std::chrono::microseconds interval;
  SupervisorWatchdog::Alive alive;
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::thread thread;

  void Run() {
    bool was_alive = true;
    std::unique_lock lock(mu);
    while (!stop) {
      lock.unlock();
      const auto budget =
          std::max(std::chrono::milliseconds(1),
                   std::chrono::duration_cast<std::chrono::milliseconds>(interval / 4));
      const bool now_alive = alive(budget);
      if (now_alive) {
        if (Status s = NotifySupervisor("WATCHDOG=1"); !s.ok())
          spdlog::warn("watchdog: {}", s.message());
      } else if (was_alive) {
        spdlog::error(
            "watchdog: the process stopped answering; no more pings, so the "
            "supervisor restarts it within {} ms",
            std::chrono::duration_cast<std::chrono::milliseconds>(interval).count());
      }
      was_alive = now_alive;
      lock.lock();
      cv.wait_for(lock, interval / 2, [this] { return stop; });
    }
  }
};

SupervisorWatchdog::SupervisorWatchdog(Alive alive) : loop_(std::make_unique<Loop>()) {
  loop_->interval = WatchdogInterval();
  loop_->alive = std::move(alive);
  if (loop_->interval.count() == 0 || Env("NOTIFY_SOCKET").empty()) {
    loop_->interval = {};
    return;
  }
  loop_->thread = std::thread([loop = loop_.get()] { loop->Run(); });
}

SupervisorWatchdog::~SupervisorWatchdog() {
  {
    std::lock_guard lock(loop_->mu);
    loop_->stop = true;
  }
  loop_->cv.notify_all();
  if (loop_->thread.joinable()) loop_->thread.join();
}

std::chrono::microseconds SupervisorWatchdog::interval() const { return loop_->interval; }

}  // namespace icewarden
