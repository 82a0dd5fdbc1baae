#include "state/etcd_watch.h"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "state/etcd_connection.h"
#include "state/etcd_json.h"

namespace icewarden {
namespace {

namespace http = boost::beast::http;
using nlohmann::json;
using WatchClock = std::chrono::steady_clock;

// Slices of a wait on the stream, so that Stop is noticed soon.
constexpr std::chrono::milliseconds kWatchSlice{100};
// Between two attempts to open a stream, so a member that refuses at once is not hammered.
constexpr std::chrono::milliseconds kWatchBackoff{50};
// The longest line (one watch response) taken from a member. etcd answers one revision's events
// in a message, and a revision is one request, which etcd caps at 1.5 MiB by default
// (--max-request-bytes); base64 and JSON make that about 2 MiB. The bound is well above it, so
// it stops only a stream gone wrong from growing the gateway without end.
constexpr std::size_t kMaxWatchLine = 64 * 1024 * 1024;

}  // namespace

// One HTTP request to POST /v3/watch and the lines of its streamed answer.
struct EtcdWatch::Stream {
  EtcdConnection conn;
  http::response_parser<http::string_body> parser;
  boost::beast::flat_buffer buffer;
  std::string pending;  // body bytes not yet split into lines
  std::string authority;

  Status Open(const EtcdEndpoint& e, const EtcdTlsContext* tls, const std::string& token,
              const std::string& body, WatchClock::time_point deadline) {
    authority = e.authority;
    parser.eager(true);
    // The stream is one response body for as long as the watch lives.
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    if (Status s = conn.Open(e, tls, deadline); !s.ok()) return s;
    // Content-Length, not chunked: etcd's gateway reads the whole body before it answers.
    std::string wire = "POST /v3/watch HTTP/1.1\r\nHost: " + e.authority;
    if (!token.empty()) wire.append("\r\nAuthorization: ").append(token);
    wire.append("\r\nContent-Type: application/json\r\nContent-Length: ")
        .append(std::to_string(body.size()))
        .append("\r\n\r\n")
        .append(body);
    bool sent = false;
    return conn.Write(wire, deadline, sent);
  }

  // The next line of the answer; nullopt when `deadline` came first.
  Result<std::optional<std::string>> Next(WatchClock::time_point deadline) {
    while (true) {
      if (auto nl = pending.find('\n'); nl != std::string::npos) {
        std::string line = pending.substr(0, nl);
        pending.erase(0, nl + 1);
        if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
        return std::optional<std::string>(std::move(line));
      }
      if (parser.is_header_done() && parser.get().result_int() != 200 && parser.is_done())
        return Status::Unavailable("etcd " + authority + ": watch: HTTP " +
                                   std::to_string(parser.get().result_int()) + ": " +
                                   pending.substr(0, 200));
      if (parser.is_done()) {
        if (!pending.empty()) return std::optional<std::string>(std::exchange(pending, ""));
        return Status::Unavailable("etcd " + authority + ": the watch stream ended");
      }
      auto space = buffer.prepare(16 * 1024);
      bool refused = false;
      auto n = conn.ReadSome(static_cast<char*>(space.data()), space.size(), deadline, refused);
      if (!n.ok()) {
        // The connection waits in whole milliseconds, so its "timed out" may come a fraction
        // of one before the deadline.
        if (!refused && WatchClock::now() + std::chrono::milliseconds(2) >= deadline)
          return std::optional<std::string>();
        return n.status();
      }
      if (*n == 0) return Status::Unavailable("etcd " + authority + ": the watch stream closed");
      buffer.commit(*n);
      while (buffer.size() > 0 && !parser.is_done()) {
        boost::system::error_code ec;
        const std::size_t used = parser.put(buffer.data(), ec);
        buffer.consume(used);
        if (ec == http::error::need_more) break;
        if (ec)
          return Status::Unavailable("etcd " + authority + ": bad watch response: " + ec.message());
        if (used == 0) break;
      }
      // The string body only grows from its current size, so taking its bytes is safe.
      std::string& body = parser.get().body();
      pending += body;
      body.clear();
      if (pending.size() > kMaxWatchLine && pending.find('\n') == std::string::npos) {
        return Status::Unavailable("etcd " + authority + ": a watch response longer than " +
                                   std::to_string(kMaxWatchLine) + " bytes");
      }
    }
  }
};

EtcdWatch::EtcdWatch(EtcdWatchOptions options) : options_(std::move(options)) {
  state_.why = "the watch has not started";
}

EtcdWatch::~EtcdWatch() { Stop(); }

void EtcdWatch::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { Run(); });
}

void EtcdWatch::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool EtcdWatch::Stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

EtcdWatch::State EtcdWatch::Current() const {
  std::lock_guard lock(mu_);
  return state_;
}

bool EtcdWatch::WaitForChange(std::int64_t since, bool since_healthy,
                              std::chrono::milliseconds max_wait, State* now) {
  std::unique_lock lock(mu_);
  bool changed = false;
  cv_.wait_for(lock, max_wait, [&] {
    if (stopping_) return true;
    if (state_.healthy && state_.revision != since) return changed = true;
    return !state_.healthy && since_healthy;
  });
  if (now != nullptr) *now = state_;
  return changed;
}

void EtcdWatch::SetHealthy(bool healthy, const std::string& why) {
  {
    std::lock_guard lock(mu_);
    if (state_.healthy == healthy && (healthy || state_.why == why)) return;
    state_.healthy = healthy;
    state_.why = healthy ? "" : why;
  }
  cv_.notify_all();
}

void EtcdWatch::SetRevision(std::int64_t revision, bool resync) {
  {
    std::lock_guard lock(mu_);
    state_.revision = revision;
    if (resync) ++state_.resyncs;
  }
  cv_.notify_all();
}

void EtcdWatch::Run() {
  const std::string end = EtcdClient::PrefixEnd(options_.prefix);
  std::vector<EtcdEndpoint> endpoints;
  for (const std::string& url : options_.client.endpoints) {
    auto e = ParseEtcdEndpoint(url);
    if (!e.ok()) {
      SetHealthy(false, e.status().message());
      return;  // a config error: the store's own calls say so too
    }
    endpoints.push_back(*e);
  }
  if (endpoints.empty()) {
    SetHealthy(false, "etcd: no endpoints configured");
    return;
  }
  std::shared_ptr<EtcdTlsContext> tls;
  if (endpoints.front().tls) {
    auto made = EtcdTlsContext::Make(options_.client.tls);
    if (!made.ok()) {
      SetHealthy(false, made.status().message());
      return;
    }
    tls = std::move(made).value();
  }
  // One client per member for the linearizable checks and the auth token: the check must ask
  // the member the stream is on, not whichever member answers.
  std::vector<std::unique_ptr<EtcdClient>> checks;
  for (const std::string& url : options_.client.endpoints) {
    checks.push_back(std::make_unique<EtcdClient>(EtcdClientOptions(
        {url}, options_.check_timeout, options_.client.tls, options_.client.auth)));
  }

  std::size_t member = 0;
  std::optional<std::int64_t> revision;  // seen up to here
  if (options_.start_after > 0) {
    revision = options_.start_after;
    SetRevision(*revision, false);
  }
  bool fresh_token = false;
  bool first = true;
  while (!Stopping()) {
    if (!first) {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, kWatchBackoff, [this] { return stopping_; });
      if (stopping_) break;
    }
    first = false;
    EtcdClient& check = *checks[member];
    const EtcdEndpoint& e = endpoints[member];
    auto fail = [&](const Status& s, bool next_member) {
      SetHealthy(false, s.message());
      if (next_member) member = (member + 1) % endpoints.size();
    };
    if (!revision) {
      // Where the watch starts: the store as it is now (the reader reads it after this).
      auto now = check.Range(options_.prefix, end, 1);
      if (!now.ok()) {
        fail(now.status(), true);
        continue;
      }
      revision = now->revision;
      SetRevision(*revision, false);
    }
    auto token = check.AuthToken(fresh_token);
    fresh_token = false;
    if (!token.ok()) {
      fail(token.status(), true);
      continue;
    }
    json create{{"key", EtcdBase64(options_.prefix)},
                {"range_end", EtcdBase64(end)},
                {"start_revision", std::to_string(*revision + 1)}};
    const std::string body = json{{"create_request", create}}.dump();
    Stream stream;
    if (Status s =
            stream.Open(e, tls.get(), *token, body, WatchClock::now() + options_.check_timeout);
        !s.ok()) {
      fail(s, true);
      continue;
    }
    bool created = false;
    bool resync = false;
    auto last_heard = WatchClock::now();
    const auto open_by = last_heard + options_.check_timeout;
    Status broken = Status::Ok();
    while (!Stopping()) {
      const auto quiet_at = last_heard + options_.quiet;
      auto line = stream.Next(std::min(quiet_at, WatchClock::now() + kWatchSlice));
      if (!line.ok()) {
        broken = line.status();
        break;
      }
      if (!line->has_value()) {
        if (!created && WatchClock::now() >= open_by) {
          broken = Status::Unavailable("etcd " + e.authority + ": the watch was not created in " +
                                       std::to_string(options_.check_timeout.count()) + " ms");
          break;
        }
        if (!created || WatchClock::now() < quiet_at) continue;
        // Quiet: is the member still part of a cluster that can answer?
        if (auto ok = check.Range(options_.prefix, end, 1); !ok.ok()) {
          broken = ok.status();
          break;
        }
        SetHealthy(true, "");
        last_heard = WatchClock::now();
        continue;
      }
      last_heard = WatchClock::now();
      json message = json::parse(**line, nullptr, false);
      if (!message.is_object()) {
        broken = Status::Unavailable("etcd " + e.authority +
                                     ": watch: not JSON: " + (*line)->substr(0, 200));
        break;
      }
      if (auto err = message.find("error"); err != message.end()) {
        const std::string text =
            err->is_object() ? err->value("message", err->dump()) : err->dump();
        fresh_token = text.find("auth token") != std::string::npos;
        broken = Status::Unavailable("etcd " + e.authority + ": watch: " + text);
        break;
      }
      const json result = message.value("result", json::object());
      if (result.value("canceled", false)) {
        const std::int64_t compacted = EtcdJsonInt(result, "compact_revision");
        if (compacted == 0) {
          broken = Status::Unavailable("etcd " + e.authority + ": the watch was canceled: " +
                                       result.value("cancel_reason", std::string("no reason")));
          break;
        }
        // Events the watch had not seen are gone: start over from the store as it is now, and
        // move the revision so the reader reads everything again.
        auto now = check.Range(options_.prefix, end, 1);
        if (!now.ok()) {
          broken = now.status();
          break;
        }
        revision = std::max(now->revision, compacted);
        SetRevision(*revision, true);
        resync = true;
        break;
      }
      if (result.value("created", false) && !created) {
        created = true;
        // A member cut off from its quorum still creates watches: ask it a linearizable read.
        if (auto ok = check.Range(options_.prefix, end, 1); !ok.ok()) {
          broken = ok.status();
          break;
        }
        SetHealthy(true, "");
        last_heard = WatchClock::now();
      }
      if (auto events = result.find("events"); events != result.end() && events->is_array()) {
        std::int64_t newest = *revision;
        for (const json& event : *events) {
          newest = std::max(newest, EtcdJsonInt(event.value("kv", json::object()), "mod_revision"));
        }
        if (newest != *revision) {
          revision = newest;
          SetRevision(newest, false);
        }
      }
    }
    if (resync) {
      first = true;  // the same member, a new stream, at once
      continue;
    }
    if (!broken.ok()) fail(broken, true);
  }
}

}  // namespace icewarden
