// ProbeAttempt: one Check() in flight. It measures latency on Timers::Now(), enforces the
// deadline with a timer ("deadline 2000ms exceeded") and makes sure `done` runs exactly
// once, whichever comes first: the answer or the deadline. Later answers are dropped.
// Shared by the probe kinds; not part of the folder's interface.
// Thread-safety: loop thread only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "health/probe.h"

namespace icewarden {

class ProbeAttempt {
 public:
  // Starts the clock and arms the deadline timer. The timer keeps the attempt alive, so
  // `done` runs even if every other holder drops it.
  static std::shared_ptr<ProbeAttempt> Start(Timers& timers, std::string kind,
                                             std::chrono::milliseconds deadline,
                                             std::function<void(ProbeResult)> done);
  ProbeAttempt(Timers& timers, std::string kind, std::chrono::milliseconds deadline,
               std::function<void(ProbeResult)> done);

  void Pass(std::string detail = "") { Finish(true, std::move(detail)); }
  void Fail(std::string detail) { Finish(false, std::move(detail)); }
  // Fails with ProbeDetail(status, deadline, request), and notes what the status says the
  // catalog did (Status::reply()): kUnknown counts as an answer, never as silence.
  void Fail(const Status& status, std::string_view request);
  // The catalog answered during this check (any status, any body). Kept when the check
  // later fails or times out: a multi-step check that heard from the catalog once is not
  // silent. `unparsed`: the answer could not be read.
  void NoteAnswer(bool unparsed = false);
  bool finished() const { return finished_; }
  std::chrono::milliseconds deadline() const { return deadline_; }
  // Time left before the deadline, at least 1ms (a call deadline of 0 means "none" to some
  // transports).
  std::chrono::milliseconds Remaining() const;

 private:
  void Finish(bool ok, std::string detail);

  Timers& timers_;
  std::string kind_;
  std::chrono::milliseconds deadline_;
  std::chrono::steady_clock::time_point started_;
  std::function<void(ProbeResult)> done_;
  TimerHandle timer_;
  bool finished_ = false;
  bool answered_ = false;
  bool unparsed_ = false;
};

// A short, stable failure detail from a client or transport Status:
//   "...: Connection refused"            -> "connection refused"
//   "...: deadline of 5000ms exceeded"   -> "deadline 2000ms exceeded" (the probe's deadline)
//   "...: HTTP 503 ..."                  -> "HTTP 503 from GET /v1/config" (`request`)
//   anything else                         -> the Status message unchanged
// Relies on the transport's documented message shapes (http_transport.h).
std::string ProbeDetail(const Status& status, std::chrono::milliseconds deadline,
                        std::string_view request);

std::string DeadlineExceeded(std::chrono::milliseconds deadline);

}  // namespace icewarden
