// dns: resolves a name through one given DNS server (not the system resolver) with ldns.
// ldns is blocking, so every probe owns one worker thread that runs its lookups and posts
// each result back to the loop through Timers::Post. The worker runs one lookup at a time
// and each lookup is bounded by ldns's own timeout (the check's deadline, one try per
// query), so a dead server costs the worker at most twice the deadline; the check itself
// still answers at its deadline through ProbeAttempt.
#include <sys/time.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <type_traits>
#include <utility>

#include "health/probe_attempt.h"
#include "health/probe_kinds.h"

// ldns/common.h defines `true` and `false` as the ints 1 and 0 (and `bool` as a macro) unless
// <stdbool.h> came first: every `true` after it would be an int, and nlohmann::json stores an int
// as a number. In C++ <stdbool.h> only says the names exist. In a unity batch the macros reached
// the next file (dns_rfc2136_action.cpp's detail["landed_before"] = true became 1); the
// static_assert keeps them out.
#include <stdbool.h>

#include <ldns/ldns.h>
static_assert(std::is_same_v<decltype(true), bool> && std::is_same_v<decltype(false), bool>,
              "ldns/ldns.h redefined true and false; include <stdbool.h> before it");

namespace icewarden {
namespace {

std::string Normalize(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  while (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

struct DnsQuestion {
  std::string name;
  std::string server;
  std::uint16_t port = 53;
  std::string expect;  // normalized; empty: any answer
  std::chrono::milliseconds timeout{2000};
};

struct DnsAnswer {
  bool ok = false;
  std::string detail;
};

// Adds every A/AAAA address and CNAME target in the answer section to `found`.
// Returns an error detail, or "" on NOERROR.
std::string Query(ldns_resolver* res, ldns_rdf* name, ldns_rr_type type, const DnsQuestion& q,
                  std::set<std::string>& found) {
  ldns_pkt* pkt = nullptr;
  ldns_status st = ldns_resolver_query_status(&pkt, res, name, type, LDNS_RR_CLASS_IN, LDNS_RD);
  if (st != LDNS_STATUS_OK || !pkt) {
    if (pkt) ldns_pkt_free(pkt);
    std::string why = ldns_get_errorstr_by_id(st) ? ldns_get_errorstr_by_id(st) : "query failed";
    return "resolve " + q.name + " via " + q.server + ":" + std::to_string(q.port) + ": " + why;
  }
  std::string error;
  ldns_pkt_rcode rcode = ldns_pkt_get_rcode(pkt);
  if (rcode != LDNS_RCODE_NOERROR) {
    const ldns_lookup_table* t = ldns_lookup_by_id(ldns_rcodes, static_cast<int>(rcode));
    error = "resolve " + q.name + " via " + q.server + ":" + std::to_string(q.port) + ": " +
            (t ? t->name : "rcode " + std::to_string(static_cast<int>(rcode)));
  } else {
    ldns_rr_list* answer = ldns_pkt_answer(pkt);
    for (size_t i = 0; answer && i < ldns_rr_list_rr_count(answer); ++i) {
      ldns_rr* rr = ldns_rr_list_rr(answer, i);
      ldns_rr_type t = ldns_rr_get_type(rr);
      if (t != LDNS_RR_TYPE_A && t != LDNS_RR_TYPE_AAAA && t != LDNS_RR_TYPE_CNAME) continue;
      if (ldns_rr_rd_count(rr) < 1) continue;
      if (char* text = ldns_rdf2str(ldns_rr_rdf(rr, 0))) {
        found.insert(Normalize(text));
        free(text);  // NOLINT: allocated by ldns with malloc
      }
    }
  }
  ldns_pkt_free(pkt);
  return error;
}

// Blocking; runs on the worker thread.
DnsAnswer Lookup(const DnsQuestion& q) {
  const bool v6 = q.server.find(':') != std::string::npos;
  ldns_rdf* server =
      ldns_rdf_new_frm_str(v6 ? LDNS_RDF_TYPE_AAAA : LDNS_RDF_TYPE_A, q.server.c_str());
  if (!server) return {false, "dns server " + q.server + " is not an IP address"};
  ldns_rdf* name = ldns_dname_new_frm_str(q.name.c_str());
  if (!name) {
    ldns_rdf_deep_free(server);
    return {false, "\"" + q.name + "\" is not a DNS name"};
  }
  ldns_resolver* res = ldns_resolver_new();
  ldns_resolver_push_nameserver(res, server);  // copies
  ldns_rdf_deep_free(server);
  ldns_resolver_set_port(res, q.port);
  ldns_resolver_set_retry(res, 1);
  ldns_resolver_set_fallback(res, false);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(q.timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((q.timeout.count() % 1000) * 1000);
  ldns_resolver_set_timeout(res, tv);

  std::set<std::string> found;
  std::string error = Query(res, name, LDNS_RR_TYPE_A, q, found);
  const bool satisfied = q.expect.empty() ? !found.empty() : found.count(q.expect) > 0;
  if (error.empty() && !satisfied) error = Query(res, name, LDNS_RR_TYPE_AAAA, q, found);
  ldns_rdf_deep_free(name);
  ldns_resolver_deep_free(res);

  if (!error.empty()) return {false, error};
  std::string all;
  for (const auto& f : found) all += (all.empty() ? "" : ", ") + f;
  if (found.empty()) return {false, "no A, AAAA or CNAME records for " + q.name};
  if (!q.expect.empty() && !found.count(q.expect)) {
    return {false, q.name + " resolves to " + all + ", expected " + q.expect};
  }
  return {true, all};
}

// The worker thread and the state shared with the loop. `busy` is read and written on the
// loop thread only; the queue under the mutex.
struct DnsWorker {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> jobs;
  bool stopping = false;
  std::thread thread;

  void Run() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [this] { return stopping || !jobs.empty(); });
        if (stopping) return;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      job();
    }
  }
};

class DnsProbe final : public Probe {
 public:
  DnsProbe(Timers& timers, DnsQuestion question)
      : kind_(kDnsProbe),
        timers_(timers),
        question_(std::move(question)),
        busy_(std::make_shared<bool>(false)),
        worker_(std::make_unique<DnsWorker>()) {
    worker_->thread = std::thread([w = worker_.get()] { w->Run(); });
  }

  ~DnsProbe() override {
    {
      std::lock_guard lock(worker_->mu);
      worker_->stopping = true;
    }
    worker_->cv.notify_all();
    worker_->thread.join();  // bounded: a running lookup ends within its ldns timeout
  }

  const std::string& kind() const override { return kind_; }

  void Check(std::chrono::milliseconds deadline, std::function<void(ProbeResult)> done) override {
    auto attempt = ProbeAttempt::Start(timers_, kind_, deadline, std::move(done));
    if (*busy_) {
      // The previous lookup outlived its deadline; queueing more would let a dead server
      // pile up blocked lookups.
      return attempt->Fail("previous lookup of " + question_.name + " still running");
    }
    *busy_ = true;
    DnsQuestion q = question_;
    q.timeout = attempt->Remaining();
    Timers* timers = &timers_;
    {
      std::lock_guard lock(worker_->mu);
      worker_->jobs.push_back([q, timers, attempt, busy = busy_]() mutable {
        DnsAnswer a = Lookup(q);
        timers->Post([attempt = std::move(attempt), busy = std::move(busy), a = std::move(a)] {
          *busy = false;
          // Never `answered`: the reply comes from the DNS server, not from the catalog, so
          // it proves nothing about whether the catalog is alive; a failure (no reply,
          // NXDOMAIN, no address) is the "unresolvable" kind of silence.
          if (a.ok) return attempt->Pass(a.detail);
          attempt->Fail(a.detail);
        });
      });
    }
    worker_->cv.notify_one();
  }

 private:
  std::string kind_;
  Timers& timers_;
  DnsQuestion question_;
  std::shared_ptr<bool> busy_;
  std::unique_ptr<DnsWorker> worker_;
};

}  // namespace

Result<std::unique_ptr<Probe>> MakeDnsProbe(const ProbeSpec& spec, const ProbeContext& ctx) {
  if (spec.dns_name.empty() || spec.dns_server_host.empty()) {
    return Status::InvalidArgument("dns probe for region " + spec.region +
                                   " needs a name and a dns server");
  }
  DnsQuestion q;
  q.name = spec.dns_name;
  q.server = spec.dns_server_host;
  q.port = spec.dns_server_port;
  q.expect = Normalize(spec.expect);
  return std::unique_ptr<Probe>(std::make_unique<DnsProbe>(ctx.timers, std::move(q)));
}

}  // namespace icewarden
