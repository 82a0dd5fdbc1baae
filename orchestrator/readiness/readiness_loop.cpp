// ReadinessBoard and ReadinessLoop (readiness.h).
#include <map>

#include "orchestrator/readiness/readiness.h"

namespace icewarden {

void ReadinessBoard::Publish(std::vector<RouteReadiness> round) {
  auto snapshot = std::make_shared<const std::vector<RouteReadiness>>(std::move(round));
  std::lock_guard lock(mu_);
  latest_ = std::move(snapshot);
}

std::shared_ptr<const std::vector<RouteReadiness>> ReadinessBoard::Latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

std::optional<RouteReadiness> ReadinessBoard::Route(const std::string& name) const {
  auto latest = Latest();
  if (!latest) return std::nullopt;
  for (const RouteReadiness& r : *latest)
    if (r.route == name) return r;
  return std::nullopt;
}

ReadinessLoop::ReadinessLoop(const ReadinessEvaluator& evaluator, ReadinessBoard& board,
                             std::chrono::milliseconds interval,
                             std::function<void(const std::string&)> log,
                             std::function<bool()> warm,
                             std::function<void(const RouteReadiness&)> flipped)
    : evaluator_(evaluator),
      board_(board),
      interval_(interval),
      log_(std::move(log)),
      warm_(std::move(warm)),
      flipped_(std::move(flipped)) {}

ReadinessLoop::~ReadinessLoop() { Stop(); }

void ReadinessLoop::Start() {
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
}

void ReadinessLoop::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

namespace {

// Whether a route is ready and which checks fail: what a change is made of.
std::string Signature(const RouteReadiness& r) {
  std::string out = r.ready ? "ready" : "unready";
  for (const ReadinessCheck& c : r.checks)
    if (!c.ok) out += "|" + c.from + " " + c.kind + " " + c.name + " " + c.action;
  return out;
}

}  // namespace

void ReadinessLoop::Loop() {
  // What each route's last round said, to log only changes: a route that stays unready
  // for the same reasons is not news every minute.
  std::map<std::string, std::string> said;
  bool first = true;
  if (warm_) {
    const auto until = std::chrono::steady_clock::now() + interval_;
    while (!warm_() && std::chrono::steady_clock::now() < until) {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stopping_; })) return;
    }
  }
  for (;;) {
    std::vector<RouteReadiness> round = evaluator_.EvaluateAll();
    for (const RouteReadiness& r : round) {
      const std::string now = Signature(r);
      auto it = said.find(r.route);
      if (!first && it != said.end() && it->second == now) continue;
      if (log_) {
        std::string line = "readiness: route " + r.route;
        line += r.ready ? " is ready" : " is NOT ready";
        for (const std::string& reason : r.reasons) line += "; " + reason;
        log_(line);
      }
      const bool was_ready = it != said.end() && it->second == "ready";
      const bool flipped = it == said.end() ? !r.ready : was_ready != r.ready;
      if (flipped && flipped_) flipped_(r);
      said[r.route] = now;
    }
    first = false;
    board_.Publish(std::move(round));
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, interval_, [this] { return stopping_; })) return;
  }
}

}  // namespace icewarden
