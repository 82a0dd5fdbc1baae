#include "orchestrator/serve/config_reload.h"

#include <spdlog/spdlog.h>

#include "orchestrator/cluster/cluster.h"
#include "orchestrator/service/service.h"
#include "state/clock.h"
#include "state/state_store.h"

namespace icewarden {
namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string Millis(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

}  // namespace

std::vector<std::string> ChangesNeedingRestart(const Config& a, const Config& b) {
  std::vector<std::string> out;
  auto text = [&out](const char* what, const std::string& x, const std::string& y) {
    if (x != y) out.push_back(std::string(what) + " (" + x + " -> " + y + ")");
  };
  auto secret = [&out](const char* what, const Secret& x, const Secret& y) {
    if (x.value() != y.value()) out.push_back(std::string(what) + " (changed)");
  };
  text("api.listen", a.api.listen, b.api.listen);
  text("api.read_timeout", Millis(a.api.read_timeout), Millis(b.api.read_timeout));
  text("api.write_timeout", Millis(a.api.write_timeout), Millis(b.api.write_timeout));
  // The listener loads its certificate once: a new one (or a renewed file) needs a restart.
  text("api.tls.cert_file", a.api.tls.cert_file, b.api.tls.cert_file);
  secret("api.tls key", a.api.tls.key, b.api.tls.key);
  text("api.tls.client_ca_file", a.api.tls.client_ca_file, b.api.tls.client_ca_file);
  text("state.backend", a.state.backend, b.state.backend);
  if (a.state.backend == "sqlite" && b.state.backend == "sqlite")
    text("state.path", a.state.path, b.state.path);
  if (a.state.backend == "etcd" && b.state.backend == "etcd") {
    const EtcdStateConfig &x = a.state.etcd, &y = b.state.etcd;
    text("state.etcd.endpoints", Join(x.endpoints), Join(y.endpoints));
    text("state.etcd.prefix", x.prefix, y.prefix);
    text("state.etcd.max_txn_ops", std::to_string(x.max_txn_ops), std::to_string(y.max_txn_ops));
    text("state.etcd.timeout", Millis(x.timeout), Millis(y.timeout));
    text("state.etcd.leader_ttl", Millis(x.leader_ttl), Millis(y.leader_ttl));
    text("state.etcd.replica", x.replica, y.replica);
    text("state.etcd.advertise", x.advertise, y.advertise);
    text("state.etcd.replicas", Join(x.replicas), Join(y.replicas));
    text("state.etcd.tls.ca_file", x.tls.ca_file, y.tls.ca_file);
    text("state.etcd.tls.cert_file", x.tls.cert_file, y.tls.cert_file);
    secret("state.etcd.tls key", x.tls.key, y.tls.key);
    text("state.etcd.auth.username", x.auth.username, y.auth.username);
    secret("state.etcd.auth.password", x.auth.password, y.auth.password);
  }
  return out;
}

ConfigReloader::ConfigReloader(Load load, DaemonInputs inputs, std::unique_ptr<Daemon> current,
                               std::shared_ptr<Clock> clock)
    : load_(std::move(load)),
      inputs_(std::move(inputs)),
      clock_(std::move(clock)),
      current_(std::move(current)) {
  status_.last_successful = true;
  status_.last_success_at = clock_->Now();
}

std::shared_ptr<Daemon> ConfigReloader::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

ConfigReloadStatus ConfigReloader::LastReload() const {
  std::lock_guard lock(mu_);
  return status_;
}

void ConfigReloader::StopCurrent() {
  if (auto d = Current()) d->Stop();
}

std::optional<Config> ConfigReloader::Read(const Daemon& running,
                                           std::vector<std::string>* errors) const {
  ConfigLoad load = load_();
  for (const ConfigError& e : load.errors) errors->push_back(e.ToString());
  if (!load.errors.empty()) return std::nullopt;
  if (auto fixed = ChangesNeedingRestart(running.config(), *load.config); !fixed.empty()) {
    errors->push_back(running.config().source_path + ": " + Join(fixed) +
                      " cannot change without a restart; restart icewarden to apply them");
    return std::nullopt;
  }
  return std::move(*load.config);
}

namespace {

std::string Refused(const std::string& path, std::size_t errors) {
  return "reload refused: " + path + " has " + std::to_string(errors) +
         (errors == 1 ? " error" : " errors") + "; the running config is kept";
}

}  // namespace

ReloadOutcome ConfigReloader::Check(const std::string& actor) {
  ReloadOutcome out;
  const std::shared_ptr<Daemon> running = Current();
  const std::string& path = running->config().source_path;
  if (auto next = Read(*running, &out.errors)) CheckRunbooks(*next, &out.errors);
  out.ok = out.errors.empty();
  out.summary = out.ok ? path + " checks out" : Refused(path, out.errors.size());
  if (!out.ok) Record(out, path, actor);
  return out;
}

ReloadOutcome ConfigReloader::Reload(const std::string& actor) {
  std::lock_guard one(reload_mu_);
  ReloadOutcome out;
  const std::shared_ptr<Daemon> running = Current();
  const std::string path = running->config().source_path;
  std::unique_ptr<Daemon> next;
  if (auto config = Read(*running, &out.errors))
    next = Daemon::Build(std::move(*config), inputs_, &out.errors);
  if (next == nullptr) {
    out.summary = Refused(path, out.errors.size());
    Record(out, path, actor);
    return out;
  }
  // The running daemon answered until the new one was built; now it stops (its steps in
  // flight finish and are journaled) and the new one resumes the journal.
  running->Stop();
  {
    std::lock_guard lock(mu_);
    current_ = std::shared_ptr<Daemon>(std::move(next));
  }
  std::vector<std::string> lines;
  if (Status s = Current()->Start(&lines); !s.ok()) {
    // Nothing half-done can be left running: the supervisor restarts the process, and the
    // journal resumes what was in flight.
    spdlog::critical("reload: the new config built but did not start: {}; stopping", s.ToString());
    spdlog::default_logger()->flush();
    std::_Exit(kExitFailed);
  }
  for (const std::string& l : lines) spdlog::info("{}", l);
  out.ok = true;
  out.summary = "reloaded " + path;
  Record(out, path, actor);
  return out;
}

void ConfigReloader::Record(const ReloadOutcome& out, const std::string& path,
                            const std::string& actor) {
  AuditEvent why;
  why.at = clock_->Now();
  why.actor = actor;
  why.source = "internal";
  why.action = out.ok ? "config.reload" : "config.reload_refused";
  why.target = path;
  why.reason = out.summary;
  for (const std::string& e : out.errors) {
    if (why.reason.size() + e.size() > 3900) break;
    why.reason += "; " + e;
  }
  if (Status s = inputs_.state->store->AppendAudit(why); !s.ok())
    spdlog::warn("reload: cannot audit it: {}", s.ToString());
  // After the audit event: whoever sees the metric move finds the event.
  {
    std::lock_guard lock(mu_);
    status_.last_successful = out.ok;
    if (out.ok) status_.last_success_at = clock_->Now();
  }
}

}  // namespace icewarden
