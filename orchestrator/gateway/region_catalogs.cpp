#include <utility>  // before Asio (Boost 1.74 + C++20)

#include "orchestrator/gateway/region_catalogs.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "health/beast_transport.h"
#include "health/catalog_client.h"
#include "orchestrator/config/catalog_options.h"
#include "orchestrator/config/config.h"

namespace icewarden {

using namespace std::chrono_literals;

// A lane: an io_context and a transport (with its own pool of kept-alive connections) that
// one gateway server thread at a time runs itself, for the length of one exchange. Why not
// the region's thread: handing each forward to it and waiting on a future cost two thread
// wake-ups per request, which was most of the gateway's added latency on a load (the
// exchange itself takes tens of microseconds of CPU). A lane is taken from the region's idle
// lanes, or made when all are busy, so there are as many as requests ever ran at once.
namespace {
struct ForwardLane {
  boost::asio::io_context io;
  std::unique_ptr<HttpTransport> transport;
};
}  // namespace

struct RegionCatalogs::Region {
  std::string name;
  CatalogClientOptions options;
  std::shared_ptr<Clock> clock = SystemClock();
  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  std::unique_ptr<HttpTransport> transport;
  std::unique_ptr<CatalogClient> client;
  std::thread thread;

  std::mutex lanes_mu;  // guards idle_lanes
  std::vector<std::unique_ptr<ForwardLane>> idle_lanes;

  std::mutex mu;     // guards base and prefix
  std::string base;  // where /v1/{prefix} requests go (catalog_uri, or the config's uri)
  std::string prefix;
  bool known = false;
};

namespace {

std::string WithoutTrailingSlash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

// Runs `fn` on the region's thread and waits for what it hands to its callback.
template <class T, class Start>
std::optional<T> OnThread(boost::asio::io_context& io, std::chrono::milliseconds wait,
                          Start start) {
  auto promise = std::make_shared<std::promise<T>>();
  std::future<T> future = promise->get_future();
  boost::asio::post(io, [promise, start = std::move(start)]() mutable {
    start([promise](T value) { promise->set_value(std::move(value)); });
  });
  if (future.wait_for(wait) != std::future_status::ready) return std::nullopt;
  return future.get();
}

}  // namespace

RegionCatalogs::RegionCatalogs(const Config& config, const std::vector<std::string>& regions) {
  for (const std::string& name : regions) {
    const RegionConfig* rc = config.FindRegion(name);
    if (rc == nullptr) continue;
    auto r = std::make_unique<Region>();
    r->name = name;
    r->options = CatalogOptionsFor(*rc);
    r->base = WithoutTrailingSlash(r->options.base_uri);
    r->transport = MakeBeastTransport(r->io, r->options.tls);
    r->client = std::make_unique<CatalogClient>(
        r->options, CatalogClientEnv{*r->transport, *r->clock, SystemRandomBits()});
    r->work.emplace(r->io.get_executor());
    Region* raw = r.get();
    r->thread = std::thread([raw] { raw->io.run(); });
    regions_.emplace(name, std::move(r));
  }
}

RegionCatalogs::~RegionCatalogs() {
  for (auto& [name, r] : regions_) {
    r->work.reset();
    r->io.stop();
    if (r->thread.joinable()) r->thread.join();
    // The client and transport go only once their io_context has stopped (beast_transport.h).
    r->client.reset();
    r->transport.reset();
    // Idle lanes run nothing; each transport goes before its io_context (member order).
    for (auto& lane : r->idle_lanes) lane->transport.reset();
  }
}

std::string RegionCatalogs::Warehouse(const std::string& region) const {
  auto it = regions_.find(region);
  return it == regions_.end() ? "" : it->second->options.warehouse;
}

Status RegionCatalogs::EnsureConfig(Region& r) {
  {
    std::lock_guard lock(r.mu);
    if (r.known) return Status::Ok();
  }
  auto config = OnThread<Result<CatalogConfig>>(r.io, r.options.default_deadline + 1s,
                                                [&r](auto done) { r.client->GetConfig(done); });
  if (!config) {
    return Status::Unavailable("region " + r.name + ": GET /v1/config did not finish in time");
  }
  if (!config->ok()) {
    return config->status().WithMessage(
        "region " + r.name + ": cannot read its catalog config: " + config->status().message());
  }
  std::lock_guard lock(r.mu);
  const auto& props = (*config)->properties;
  if (auto uri = props.find("uri"); uri != props.end() && !uri->second.empty()) {
    r.base = WithoutTrailingSlash(uri->second);
  }
  r.prefix = (*config)->prefix;
  r.known = true;
  return Status::Ok();
}

std::vector<std::string> RegionCatalogs::ReadConfigs() {
  std::vector<std::string> problems;
  for (auto& [name, r] : regions_) {
    if (Status s = EnsureConfig(*r); !s.ok()) problems.push_back(s.message());
  }
  return problems;
}

Result<HttpResponse> RegionCatalogs::Exchange(Region& r, HttpRequest request,
                                              std::chrono::milliseconds deadline) {
  std::unique_ptr<ForwardLane> lane;
  {
    std::lock_guard lock(r.lanes_mu);
    if (!r.idle_lanes.empty()) {
      lane = std::move(r.idle_lanes.back());
      r.idle_lanes.pop_back();
    }
  }
  if (!lane) {
    lane = std::make_unique<ForwardLane>();
    lane->transport = MakeBeastTransport(lane->io, r.options.tls);
  }
  std::optional<Result<HttpResponse>> answer;
  lane->io.restart();
  lane->transport->Send(std::move(request), deadline,
                        [&answer](Result<HttpResponse> a) { answer = std::move(a); });
  // The transport's own deadline ends every exchange; the backstop only guards against a
  // completion that never comes.
  const auto backstop = std::chrono::steady_clock::now() + deadline + 1s;
  while (!answer && lane->io.run_one_until(backstop) > 0) {
  }
  if (!answer) {
    // The exchange still refers to `answer`: the lane is dropped with its handlers unrun.
    lane->io.stop();
    lane->transport.reset();
    return Status::Unavailable("read " + r.name + ": deadline of " +
                               std::to_string(deadline.count()) + "ms exceeded");
  }
  lane->io.poll();  // what the exchange left ready (its timer's cancellation)
  {
    std::lock_guard lock(r.lanes_mu);
    r.idle_lanes.push_back(std::move(lane));
  }
  return std::move(*answer);
}

Result<RegionCatalogs::Region*> RegionCatalogs::Find(const std::string& region) {
  auto it = regions_.find(region);
  if (it == regions_.end()) {
    return Status::Unavailable("connect " + region + ": the gateway has no catalog for region " +
                               region);
  }
  return it->second.get();
}

Result<HttpResponse> RegionCatalogs::Send(const std::string& region, HttpRequest request,
                                          std::chrono::milliseconds deadline) {
  Result<Region*> found = Find(region);
  if (!found.ok()) return found.status();
  Region& r = **found;
  if (Status s = EnsureConfig(r); !s.ok()) {
    // Said as a connect failure: nothing was sent, so a write is safe to retry.
    return Status::Unavailable("connect " + r.name + ": " + s.message());
  }
  {
    std::lock_guard lock(r.mu);
    request.url = r.base + "/v1" + (r.prefix.empty() ? "" : "/" + r.prefix) + request.url;
  }
  return Exchange(r, std::move(request), deadline);
}

Result<HttpResponse> RegionCatalogs::SendToRoot(const std::string& region, HttpRequest request,
                                                std::chrono::milliseconds deadline) {
  Result<Region*> found = Find(region);
  if (!found.ok()) return found.status();
  Region& r = **found;
  request.url = WithoutTrailingSlash(r.options.base_uri) + request.url;
  return Exchange(r, std::move(request), deadline);
}

}  // namespace icewarden
