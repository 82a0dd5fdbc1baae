// EtcdStore's side of the watch (etcd_watch.h): what a reader that keeps a picture of the store
// (the gateway's StoreWatch) waits on.
#include "state/etcd_store_internal.h"

namespace icewarden {

EtcdWatch& EtcdStore::Watch() {
  std::call_once(watch_once_, [this] {
    EtcdWatchOptions o;
    o.client = etcd_->options();
    o.prefix = options_.prefix;
    watch_ = std::make_unique<EtcdWatch>(std::move(o));
    watch_->Start();
    watching_.store(true);
  });
  return *watch_;
}

// Not under mu_: a wait must not hold up the store's other calls.
// Only for a caller that also waits (the gateway): the watch learns of a write a moment after it
// returns, so a writer that asked right after its own write (the daemon's scope listing) could
// be told "unchanged". A store nobody waits on says nullopt, as before: list again.
std::optional<std::int64_t> EtcdStore::OwnershipRevision() {
  if (!watching_.load()) return std::nullopt;
  const EtcdWatch::State state = Watch().Current();
  if (!state.healthy) return std::nullopt;
  return state.revision;
}

StoreChange EtcdStore::WaitForChange(std::optional<std::int64_t> since,
                                     std::chrono::milliseconds max_wait) {
  EtcdWatch::State now;
  // -1 is no revision etcd has: with no `since`, any healthy revision is a change.
  if (Watch().WaitForChange(since.value_or(-1), since.has_value(), max_wait, &now))
    return {StoreChange::Kind::kChanged, ""};
  if (!now.healthy) return {StoreChange::Kind::kUnreadable, now.why};
  return {StoreChange::Kind::kQuiet, ""};
}

}  // namespace icewarden
