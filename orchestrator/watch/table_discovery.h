// Tables the catalogs list that the store has never recorded: each gets its first owner by
// the config's ownership rules, at epoch 1, after the lag round that found it.
//
// OwnerOf answers the lag monitor's question (who owns this table?) with the store's record,
// a point lookup per listed table rather than a copy of the whole ownership table, so the
// daemon's memory does not grow with 100,000 owned tables; a table with no record is answered
// by the config's rules and remembered. ClaimDiscovered then records the remembered tables
// with a compare-and-set on epoch 0, in bounded chunks, so a table a failover claimed
// meanwhile is left alone and holds back only its own chunk (the next round retries it).
// Thread-safety: none; the watch's thread calls both.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "state/types.h"

namespace icewarden {

struct Config;
class StateStore;

class TableDiscovery {
 public:
  // `config` and `store` must outlive it.
  TableDiscovery(const Config& config, StateStore& store) : config_(config), store_(store) {}

  std::optional<std::string> OwnerOf(const TableIdent& table);
  void ClaimDiscovered();

 private:
  const Config& config_;
  StateStore& store_;
  std::set<TableIdent> unclaimed_;
};

}  // namespace icewarden
