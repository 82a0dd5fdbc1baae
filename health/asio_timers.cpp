#include "health/asio_timers.h"

#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace icewarden {
namespace {

namespace asio = boost::asio;

class AsioTimers final : public Timers {
 public:
  explicit AsioTimers(asio::io_context& io) : io_(io) {}

  std::chrono::steady_clock::time_point Now() const override {
    return std::chrono::steady_clock::now();
  }

  TimerHandle RunAfter(std::chrono::milliseconds delay, std::function<void()> fn) override {
    struct Armed {
      explicit Armed(asio::io_context& io) : timer(io) {}
      asio::steady_timer timer;
      bool cancelled = false;
    };
    auto armed = std::make_shared<Armed>(io_);
    armed->timer.expires_after(delay);
    // cancel() alone is not enough: a handler already queued to run still runs with
    // success, so the flag decides.
    armed->timer.async_wait([armed, fn = std::move(fn)](boost::system::error_code ec) {
      if (ec || armed->cancelled) return;
      fn();
    });
    std::weak_ptr<Armed> weak = armed;
    return TimerHandle([weak] {
      if (auto a = weak.lock()) {
        a->cancelled = true;
        a->timer.cancel();
      }
    });
  }

  void Post(std::function<void()> fn) override { asio::post(io_, std::move(fn)); }

 private:
  asio::io_context& io_;
};

}  // namespace

std::unique_ptr<Timers> MakeAsioTimers(boost::asio::io_context& io) {
  return std::make_unique<AsioTimers>(io);
}

}  // namespace icewarden
