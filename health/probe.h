// Probes: how icewarden observes a region. A Probe answers one question ("does the catalog
// serve its config now?", "does the canary table load?", "does port 443 accept?") within a
// deadline and reports a ProbeResult. The ProbeScheduler (probe_scheduler.h) runs a
// region's probes in rounds; the HealthTracker (health_tracker.h) turns rounds into region
// health with fall/rise hysteresis. A probe never triggers an action.
//
// Environment: time and scheduling come in through Timers, HTTP through HttpTransport (via
// the region's CatalogClient), TCP connects through TcpConnector. Nothing here includes
// Asio or ldns; the real implementations are in .cpp files (asio_timers.h, probe_kinds.h).
//
// Probe kinds are created through a ProbeRegistry filled explicitly by
// registerBuiltinProbes(); nothing registers itself at static-initialization time.
// Thread-safety: every type here is used on one thread, the one running the io_context
// (the "loop thread"), except Timers::Post, which may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "state/status.h"
#include "state/types.h"

namespace icewarden {

class CatalogClient;
class HttpTransport;

// What one Check() found out.
struct ProbeResult {
  bool ok = false;
  std::chrono::milliseconds latency{0};  // from Check() to the answer, on Timers::Now()
  std::string kind;                      // "catalog_config"
  // Empty or a short note when ok; otherwise why it failed, for people:
  // "connection refused", "HTTP 503 from GET /v1/config", "deadline 2000ms exceeded".
  std::string detail;
  // The catalog itself sent something back during the check: an HTTP status (any, 401 and
  // 503 included), a partial response, bytes that are not HTTP. False for silence
  // (refused, timed out, unresolvable, reset before any byte) and for kinds that never
  // hear from the catalog (tcp: a handshake is not an answer; dns: the DNS server's reply
  // is not the catalog's). Only silence is evidence (DESIGN.md rule 7).
  bool answered = false;
  // The catalog answered with something icewarden could not parse (a /v1/config body
  // that is not the expected JSON): alive, and icewarden's problem to report. Implies
  // `answered`.
  bool unparsed = false;
};

// ---- Timers -------------------------------------------------------------------------------

// A scheduled callback that can be cancelled. Default-constructed: nothing to cancel.
class TimerHandle {
 public:
  TimerHandle() = default;
  explicit TimerHandle(std::function<void()> cancel) : cancel_(std::move(cancel)) {}
  // Idempotent. Called on the loop thread, it guarantees the callback will not run.
  void Cancel() {
    if (auto c = std::move(cancel_)) {
      cancel_ = nullptr;
      c();
    }
  }

 private:
  std::function<void()> cancel_;
};

// Monotonic time and timers on the loop. Real: MakeAsioTimers (asio_timers.h). Tests:
// tests/fakes/fake_timers.h, where time moves only when the test advances it.
class Timers {
 public:
  virtual ~Timers() = default;
  // Monotonic; never goes backwards.
  virtual std::chrono::steady_clock::time_point Now() const = 0;
  // Runs `fn` on the loop thread once `delay` has passed (never from inside RunAfter).
  // The implementation keeps `fn` until it runs or is cancelled, then releases it.
  virtual TimerHandle RunAfter(std::chrono::milliseconds delay, std::function<void()> fn) = 0;
  // Runs `fn` on the loop thread soon. The one method that may be called from any thread:
  // how a worker thread hands a result back.
  virtual void Post(std::function<void()> fn) = 0;
};

// ---- TCP ----------------------------------------------------------------------------------

// Opens (and at once closes) a TCP connection. Real: MakeAsioTcpConnector (probe_kinds.h).
class TcpConnector {
 public:
  virtual ~TcpConnector() = default;
  // Calls `done` exactly once on the loop thread: OK when the connection was established
  // within `deadline`; otherwise kUnavailable, "connect 127.0.0.1:9: Connection refused",
  // "resolve db.example: Host not found", "connect 10.0.0.1:443: deadline 2000ms exceeded".
  virtual void Connect(std::string host, std::uint16_t port, std::chrono::milliseconds deadline,
                       std::function<void(Status)> done) = 0;
};

// ---- Probes -------------------------------------------------------------------------------

class Probe {
 public:
  virtual ~Probe() = default;
  // The registered kind: "catalog_config", "table_load", "canary_commit", "tcp", "dns".
  virtual const std::string& kind() const = 0;
  // Starts one check and returns at once. Calls `done` exactly once, on the loop thread,
  // no later than `deadline` after the call (give or take the loop's latency), never by
  // blocking the loop. A probe may be destroyed while a check is in flight: `done` then
  // still runs (the caller must guard its own state) or never runs, but nothing the
  // probe owned is touched.
  virtual void Check(std::chrono::milliseconds deadline, std::function<void(ProbeResult)> done) = 0;
};

// Plain configuration of one probe. Fields a kind does not use are ignored.
struct ProbeSpec {
  std::string kind;    // registered kind
  std::string region;  // the region it observes, for messages
  // table_load, canary_commit: the canary table, which must exist in the region's catalog.
  std::optional<TableIdent> table;
  // canary_commit writes to the catalog; it is created only when this is true.
  bool allow_writes = false;
  // tcp: where to connect.
  std::string host;
  std::uint16_t port = 0;
  // dns: the name to resolve, the server to ask (not the system resolver), and optionally
  // the answer that must be among the A/AAAA addresses or CNAME targets.
  std::string dns_name;
  std::string dns_server_host;  // an IPv4 or IPv6 address
  std::uint16_t dns_server_port = 53;
  std::string expect;  // "10.0.0.7", "2001:db8::7", "catalog.eu.example.com"; empty: any
};

// What a factory may use. References must outlive every probe made from the context.
struct ProbeContext {
  Timers& timers;
  const Clock& clock;           // wall clock: canary timestamps
  CatalogClient& catalog;       // the region's catalog client
  HttpTransport& transport;     // the loop's HTTP transport
  TcpConnector* tcp = nullptr;  // needed by "tcp" only
};

using ProbeFactory =
    std::function<Result<std::unique_ptr<Probe>>(const ProbeSpec&, const ProbeContext&)>;

// Probe kinds by name. Fill it with registerBuiltinProbes() (and any extra kinds), then
// create probes from configuration.
class ProbeRegistry {
 public:
  // kInvalidArgument when `kind` is empty or already registered.
  Status Register(std::string kind, ProbeFactory factory);
  // The factory's result; kInvalidArgument for an unknown kind, naming the known ones:
  // "unknown probe kind \"http\"; known kinds: canary_commit, catalog_config, dns, ..."
  Result<std::unique_ptr<Probe>> Create(const ProbeSpec& spec, const ProbeContext& ctx) const;
  bool Has(const std::string& kind) const { return factories_.count(kind) > 0; }
  // Sorted.
  std::vector<std::string> Kinds() const;

 private:
  std::map<std::string, ProbeFactory> factories_;
};

// Registers catalog_config, table_load, canary_commit, tcp and dns. An error if any of
// them is registered already.
Status registerBuiltinProbes(ProbeRegistry& registry);

}  // namespace icewarden
