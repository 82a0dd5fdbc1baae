#include <utility>  // before Asio (Boost 1.74 + C++20)

#include "actions/catalog_session.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <map>
#include <optional>

#include "health/beast_transport.h"

namespace icewarden {

using namespace std::chrono_literals;

struct CatalogSession::Impl {
  explicit Impl(const ActionEnv& e) : env(e), clock(e.clock ? e.clock : SystemClock()) {}
  ~Impl() {
    // The transport may only go once the io_context has stopped running (beast_transport.h);
    // handlers still queued are destroyed with the io_context, never invoked.
    io.stop();
    clients.clear();
    transports.clear();
  }

  ActionEnv env;
  std::shared_ptr<Clock> clock;
  boost::asio::io_context io;
  // One transport per region: each has its region's TLS options (CatalogClientOptions::tls)
  // and its own pool of connections.
  std::map<std::string, std::unique_ptr<HttpTransport>> transports;
  std::map<std::string, std::unique_ptr<CatalogClient>> clients;
  bool abandoned = false;
};

CatalogSession::CatalogSession(const ActionEnv& env) : impl_(std::make_unique<Impl>(env)) {}
CatalogSession::~CatalogSession() = default;

const Clock& CatalogSession::clock() const { return *impl_->clock; }

Result<CatalogClient*> CatalogSession::Client(const std::string& region) {
  auto it = impl_->clients.find(region);
  if (it != impl_->clients.end()) return it->second.get();
  if (!impl_->env.catalog)
    return Status::FailedPrecondition("no catalog lookup is configured for actions");
  auto options = impl_->env.catalog(region);
  if (!options)
    return Status::FailedPrecondition("region '" + region + "' has no catalog configured");
  auto& transport = impl_->transports[region];
  transport = MakeBeastTransport(impl_->io, options->tls);
  auto client = std::make_unique<CatalogClient>(
      *options, CatalogClientEnv{*transport, *impl_->clock, SystemRandomBits()});
  CatalogClient* raw = client.get();
  impl_->clients.emplace(region, std::move(client));
  return raw;
}

bool CatalogSession::RunUntil(const ActionContext& ctx, const std::function<bool()>& done) {
  auto& io = impl_->io;
  while (!done()) {
    if (ctx.expired() || impl_->abandoned) return false;
    // A previous call may have left the io_context stopped for want of work.
    if (io.stopped()) io.restart();
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        ctx.deadline - std::chrono::steady_clock::now());
    auto slice = std::clamp(left, 1ms, 50ms);
    if (io.run_one_for(slice) == 0 && io.stopped()) {
      // Out of work: nothing can make `done` change any more.
      io.restart();
      return true;
    }
  }
  return true;
}

bool CatalogSession::Sleep(const ActionContext& ctx, std::chrono::milliseconds d) {
  auto woke = std::make_shared<bool>(false);
  After(d, [woke] { *woke = true; });
  RunUntil(ctx, [woke] { return *woke; });
  return *woke;
}

void CatalogSession::After(std::chrono::milliseconds delay, std::function<void()> fn) {
  auto timer = std::make_shared<boost::asio::steady_timer>(impl_->io, delay);
  timer->async_wait([timer, fn = std::move(fn)](const boost::system::error_code& ec) {
    if (!ec) fn();
  });
}

void CatalogSession::Wake() {
  boost::asio::post(impl_->io, [] {});
}

void CatalogSession::Abandon() {
  impl_->abandoned = true;
  impl_->io.stop();
}

std::optional<Result<CatalogConfig>> GetConfigNow(CatalogSession& session, CatalogClient& client,
                                                  const ActionContext& ctx) {
  auto out = std::make_shared<std::optional<Result<CatalogConfig>>>();
  client.GetConfig([out](Result<CatalogConfig> r) { out->emplace(std::move(r)); });
  session.RunUntil(ctx, [out] { return out->has_value(); });
  return *out;
}

}  // namespace icewarden
