// TableObservations: the last answer (ETag and table) a failover's catalog steps had for each
// table of a region, so that a later step of the same failover asks with If-None-Match and an
// unchanged table costs a 304 instead of a body to send and parse. The demotion token's
// capture, right after the quiet fence, reads the same tables of the same fenced region: with
// this it is a round of 304s. A 304 is the server's word that the table is as it was when it
// sent that ETag, the same evidence as a new body, so nothing here is ever trusted without
// asking. Only tables loaded with snapshots=refs are kept, without their snapshot and metadata
// logs; at most `max_tables` in all; a failover's are forgotten when its drive ends. A step
// may also keep its own, for its own polls (fence.catalog_quiet outside the daemon).
// Thread-safety: safe from any thread.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "health/catalog_model.h"

namespace icewarden {

class TableObservations {
 public:
  explicit TableObservations(std::size_t max_tables = 100'000) : max_tables_(max_tables) {}

  // The table as `failover_id`'s steps last saw it in `region` (its etag is not empty), or
  // nullopt.
  std::optional<TableSnapshotView> Find(const std::string& failover_id, const std::string& region,
                                        const TableIdent& table) const;
  // Keeps `view` (its logs dropped) when it carries an ETag and there is room.
  void Remember(const std::string& failover_id, const std::string& region, const TableIdent& table,
                TableSnapshotView view);
  void Forget(const std::string& failover_id);
  std::size_t size() const;

 private:
  using Tables = std::unordered_map<std::string, std::shared_ptr<const TableSnapshotView>>;
  static std::string Key(const std::string& region, const TableIdent& table);

  const std::size_t max_tables_;
  mutable std::mutex mu_;
  std::map<std::string, Tables> by_failover_;  // with mu_
  std::size_t size_ = 0;                       // with mu_: tables in by_failover_
};

}  // namespace icewarden
