// CatalogSession: how a blocking catalog action talks to asynchronous CatalogClients. Each run
// makes its own session: a private io_context, a Beast transport and one CatalogClient per
// region (from ActionEnv::catalog), driven on the calling thread in short slices so that the
// step's deadline and cancellation are noticed within ~50 ms.
//
// Every callback of the session's clients runs on the thread that calls RunUntil/Sleep, so
// the caller's state needs no locks. Destroying the session (or Abandon) drops whatever is
// still in flight: those callbacks never run.
// Thread-safety: one thread, except Wake.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "actions/action.h"
#include "health/catalog_client.h"
#include "state/status.h"

namespace icewarden {

class CatalogSession {
 public:
  explicit CatalogSession(const ActionEnv& env);
  ~CatalogSession();
  CatalogSession(const CatalogSession&) = delete;
  CatalogSession& operator=(const CatalogSession&) = delete;

  // The client for `region`, made on first use. kFailedPrecondition when the environment
  // cannot say how to reach the region's catalog.
  Result<CatalogClient*> Client(const std::string& region);

  // Runs callbacks until `done()` holds (true) or the context expires (false). `done` is
  // checked after every callback. Also returns true when nothing is in flight any more.
  bool RunUntil(const ActionContext& ctx, const std::function<bool()>& done);
  // Runs callbacks for `d`, or until the context expires; false when it expired.
  bool Sleep(const ActionContext& ctx, std::chrono::milliseconds d);
  // Calls `fn` on the session's thread after `delay`.
  void After(std::chrono::milliseconds delay, std::function<void()> fn);
  // Stops the io_context; nothing in flight completes.
  void Abandon();
  // Makes a RunUntil in progress check `done` now instead of at the end of its slice. The
  // one call that may come from another thread (a worker whose result `done` looks at).
  void Wake();

  const Clock& clock() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Synchronous helpers over a session, for the few-calls-per-table actions.
// nullopt when the context expired first.
std::optional<Result<CatalogConfig>> GetConfigNow(CatalogSession& session, CatalogClient& client,
                                                  const ActionContext& ctx);

}  // namespace icewarden
