// The real Timers (probe.h): steady_timer on a caller-owned io_context.
// Thread-safety: RunAfter and TimerHandle::Cancel on the io_context's thread; Post from any.
// Lifetime: the io_context must outlive the Timers and every timer it armed.
#pragma once

#include <memory>

#include "health/probe.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace icewarden {

std::unique_ptr<Timers> MakeAsioTimers(boost::asio::io_context& io);

}  // namespace icewarden
