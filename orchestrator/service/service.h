// The process's contract with what supervises it (systemd, a container runtime, a shell):
// readiness and watchdog notifications over $NOTIFY_SOCKET, and the log's format. Used by
// both processes, `icewarden serve` and `icewarden gateway`; it knows nothing of either.
//
// Notifications follow sd_notify(3) without libsystemd: one datagram a state, to the
// AF_UNIX socket named by $NOTIFY_SOCKET (a path, or "@name" in the abstract namespace).
// Without $NOTIFY_SOCKET every call does nothing, so a process started by hand or by a
// test behaves exactly as under `Type=simple`.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "state/status.h"

namespace icewarden {

// How every icewarden command ends, for shells and supervisors: 0 ok, 1 the operation failed,
// 2 usage or validation error (systemd does not restart a unit for a bad config with
// RestartPreventExitStatus=2), 3 not authorized.
enum ExitCode : int { kExitOk = 0, kExitFailed = 1, kExitUsage = 2, kExitUnauthorized = 3 };

// Sends `state` ("READY=1", "STOPPING=1", "RELOADING=1\nMONOTONIC_USEC=...", ...) to the
// supervisor. Ok when sent or when there is no $NOTIFY_SOCKET; kUnavailable (with the
// socket's path) when the socket cannot be reached, which a caller logs and goes on from:
// a supervisor that misses READY=1 restarts the process at its start timeout, which says
// more than a process that refuses to start.
Status NotifySupervisor(std::string_view state);

// "RELOADING=1\nMONOTONIC_USEC=<now>": what systemd's Type=notify-reload waits for before
// a reload's READY=1 (systemd 253 and later; earlier ones ignore the second line).
std::string ReloadingState();

// The watchdog (WatchdogSec= in the unit, which sets $WATCHDOG_USEC and $WATCHDOG_PID):
// sends WATCHDOG=1 at half the interval, but only while `alive` says the process still does
// its work (for serve: the API's event loop answers). When `alive` is false, no ping goes
// out and the supervisor restarts the process at the interval's end: a wedged daemon is
// worse than a restarted one, because the journal lets the next start resume. `alive` runs
// on the watchdog's thread and is given a quarter of the interval to answer within. Without
// $WATCHDOG_USEC (or when it names another pid) nothing runs.
class SupervisorWatchdog {
 public:
  using Alive = std::function<bool(std::chrono::milliseconds budget)>;
  explicit SupervisorWatchdog(Alive alive);
  ~SupervisorWatchdog();  // stops the thread
  SupervisorWatchdog(const SupervisorWatchdog&) = delete;
  SupervisorWatchdog& operator=(const SupervisorWatchdog&) = delete;

  // The interval the supervisor asked for; zero when it asked for none.
  std::chrono::microseconds interval() const;

 private:
  struct Loop;
  std::unique_ptr<Loop> loop_;
};

// How log lines are written to stderr: `text` (spdlog's default pattern, for people) or
// `json` (one object a line: ts, level, logger, msg, and the fields the message names).
enum class LogFormat { kText, kJson };

// kInvalidArgument (naming both choices) for anything but "text" or "json".
Result<LogFormat> ParseLogFormat(std::string_view text);

// Makes the default logger write `format` to stderr under `logger_name`. `regions` are the
// configured region names, which `json` lines carry as a field when the message names one.
void ConfigureLogging(const std::string& logger_name, LogFormat format,
                      std::vector<std::string> regions = {});

// One line as `json` writes it (without the newline), for tests and tools that want the same
// shape. A failover id ("fo-..."), a drill id ("dr-...") and the first of `regions` named in
// the message as a whole word become the fields `failover`, `drill` and `region`, so that a
// search by failover id finds every line without parsing prose.
std::string JsonLogLine(std::string_view ts, std::string_view level, std::string_view logger,
                        std::string_view message, const std::vector<std::string>& regions);

}  // namespace icewarden
