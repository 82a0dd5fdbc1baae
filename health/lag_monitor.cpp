#include "health/lag_monitor.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "health/catalog_inventory.h"
#include "health/in_flight_limit.h"

namespace icewarden {
namespace {

// A table as one region's catalog holds it: the cache key and the unit of loading.
using RegionTable = std::pair<std::string, TableIdent>;

struct RememberedView {
  TableSnapshotView view;
  bool touched = false;  // loaded (or tried) in the current round
};

// One (table, replica) comparison the round has to make.
struct Pairing {
  TableIdent table;
  std::string owner;
  std::string replica;
};

// A (table, owner, replica) row's identity across rounds. The owner is part of it: a lag
// measured against the previous owner says nothing once ownership has moved.
using PairKey = std::tuple<TableIdent, std::string, std::string>;

// The last round that compared a pair (behind or caught up): what an uncompared row reports
// as its last known lag (TableLag::last_known_*).
struct LastComparison {
  UnixMillis at = 0;
  std::chrono::milliseconds lag{0};
  int missing = 0;
};

}  // namespace

struct LagMonitor::State {
  std::map<std::string, CatalogClient*> catalogs;
  OwnerLookup owner_of;
  const Clock& clock;
  LagMonitorOptions options;

  std::map<RegionTable, RememberedView> remembered;
  // Each region's tables at its last successful listing: what a failed region is
  // assumed to hold.
  std::map<std::string, std::set<TableIdent>> last_listing;
  std::map<PairKey, LastComparison> last_compared;
  std::optional<LagReport> latest;
  std::weak_ptr<Round> running;
  bool stopped = false;
};

class LagMonitor::Round : public std::enable_shared_from_this<LagMonitor::Round> {
 public:
  explicit Round(std::shared_ptr<State> state)
      : state_(std::move(state)),
        limit_(state_->options.max_in_flight),
        started_(state_->clock.Monotonic()) {}

  void Join(std::function<void(Result<LagReport>)> done) { waiting_.push_back(std::move(done)); }

  void Start() {
    pending_ = 1;  // held by Start, so synchronous completions cannot move on early
    for (const auto& [region, client] : state_->catalogs) {
      ++pending_;
      ListCatalogTables(
          *client, limit_,
          [self = shared_from_this(), region = region](Result<std::vector<TableIdent>> r) {
            self->listings_.emplace(region, std::move(r));
            self->AfterListing();
          });
    }
    AfterListing();
  }

 private:
  void AfterListing() {
    if (--pending_ > 0) return;
    if (state_->stopped) return Finish(Status::Unavailable("lag monitor stopped during the round"));
    Plan();
    LoadAll();
  }

  // Which regions hold which tables, from this round's listings (and, for a failed
  // region, its last good one); then the rows that need loads and the rows that cannot
  // be compared.
  void Plan() {
    std::map<std::string, std::string> failed;  // region -> error
    std::map<TableIdent, std::set<std::string>> holders;
    for (auto& [region, listed] : listings_) {
      if (listed.ok()) {
        std::set<TableIdent> tables(listed->begin(), listed->end());
        for (const auto& t : tables) holders[t].insert(region);
        state_->last_listing[region] = std::move(tables);
      } else {
        failed[region] = listed.status().message();
        report_.region_errors.push_back(region + ": " + listed.status().message());
      }
    }
    // A failed region holds what it held last time; never listed, it may hold anything.
    std::map<std::string, const std::set<TableIdent>*> assumed;
    for (const auto& [region, error] : failed) {
      auto last = state_->last_listing.find(region);
      assumed[region] = last == state_->last_listing.end() ? nullptr : &last->second;
      if (last != state_->last_listing.end()) {
        for (const auto& t : last->second) holders[t];  // known to exist somewhere
      }
    }
    auto may_hold = [&](const std::string& region, const TableIdent& t) {
      const auto* tables = assumed.at(region);
      return tables == nullptr || tables->count(t) > 0;
    };

    for (const auto& [table, regions] : holders) {
      const auto owner = state_->owner_of(table);
      if (!owner) {
        ++report_.unowned_tables;
        continue;
      }
      // An init-capture: clang 14 does not let a lambda name a structured binding.
      auto unknown = [&, &table = table](const std::string& replica, const std::string& why) {
        report_.tables.push_back(UncomparedLag(table, *owner, replica, LagState::kUnknown, why));
      };
      if (!state_->catalogs.count(*owner)) {
        for (const auto& r : regions) {
          unknown(r, "owner " + *owner + " is not a configured catalog region");
        }
        continue;
      }
      if (auto f = failed.find(*owner); f != failed.end()) {
        for (const auto& r : regions) {
          if (r == *owner) continue;
          unknown(r, "owner " + *owner + " could not be listed: " + f->second);
          keep_.insert({r, table});
        }
        continue;
      }
      const bool owner_has = regions.count(*owner) > 0;
      for (const auto& [region, client] : state_->catalogs) {
        if (region == *owner) continue;
        if (auto f = failed.find(region); f != failed.end()) {
          if (owner_has && may_hold(region, table)) {
            unknown(region, region + " could not be listed: " + f->second);
            keep_.insert({*owner, table});  // for the 304 once the replica is back
          }
        } else if (regions.count(region) && !owner_has) {
          report_.tables.push_back(
              UncomparedLag(table, *owner, region, LagState::kNotInOwner,
                            "in " + region + " but not in owner catalog " + *owner));
        } else if (regions.count(region)) {
          pairings_.push_back({table, *owner, region});
          to_load_.insert({*owner, table});
          to_load_.insert({region, table});
        }
      }
    }
  }

  void LoadAll() {
    pending_ = 1;
    for (const RegionTable& key : to_load_) {
      ++pending_;
      limit_.Run([self = shared_from_this(), key](std::function<void()> release) {
        self->Load(key, std::move(release));
      });
    }
    AfterLoad();
  }

  void Load(const RegionTable& key, std::function<void()> release) {
    if (state_->stopped) {
      release();
      return AfterLoad();
    }
    std::optional<std::string> etag;
    if (auto r = state_->remembered.find(key); r != state_->remembered.end()) {
      r->second.touched = true;
      if (!r->second.view.etag.empty()) etag = r->second.view.etag;
    }
    ++report_.loads_sent;
    CatalogClient& client = *state_->catalogs.at(key.first);
    client.LoadTable(key.second, etag,
                     [self = shared_from_this(), key, release](Result<LoadTableOutcome> r) {
                       release();
                       self->Loaded(key, std::move(r));
                       self->AfterLoad();
                     });
  }

  void Loaded(const RegionTable& key, Result<LoadTableOutcome> r) {
    auto& remembered = state_->remembered;
    if (!r.ok()) {
      ++report_.loads_failed;
      load_errors_[key] = r.status().message();
    } else if (r->not_modified) {
      if (remembered.count(key)) {
        ++report_.loads_not_modified;
      } else {
        ++report_.loads_failed;
        load_errors_[key] =
            "load table " + key.second.ToString() + ": HTTP 304 to a request without If-None-Match";
      }
    } else {
      remembered[key] = RememberedView{std::move(r->table), true};
    }
  }

  void AfterLoad() {
    if (--pending_ > 0) return;
    if (state_->stopped) return Finish(Status::Unavailable("lag monitor stopped during the round"));
    Compare();
  }

  void Compare() {
    const UnixMillis now = state_->clock.Now();
    for (const Pairing& p : pairings_) {
      const RegionTable owner_key{p.owner, p.table};
      const RegionTable replica_key{p.replica, p.table};
      if (auto e = load_errors_.find(owner_key); e != load_errors_.end()) {
        report_.tables.push_back(
            UncomparedLag(p.table, p.owner, p.replica, LagState::kUnknown,
                          "could not load from owner " + p.owner + ": " + e->second));
      } else if (auto e = load_errors_.find(replica_key); e != load_errors_.end()) {
        report_.tables.push_back(
            UncomparedLag(p.table, p.owner, p.replica, LagState::kUnknown,
                          "could not load from " + p.replica + ": " + e->second));
      } else {
        report_.tables.push_back(
            CompareReplica(p.table, p.owner, state_->remembered.at(owner_key).view, p.replica,
                           state_->remembered.at(replica_key).view, now, state_->options.policy));
      }
    }
    Forget();
    CarryLastComparisons(now);
    std::sort(report_.tables.begin(), report_.tables.end(),
              [](const TableLag& a, const TableLag& b) {
                return std::tie(a.table, a.replica) < std::tie(b.table, b.replica);
              });
    report_.at = now;
    Finish(std::move(report_));
  }

  // Drops remembered views this round did not need, so memory follows the tables that
  // exist. Kept for the next round's 304s: the views of a region that could not be
  // listed, and the other side's views of the tables that needed it.
  void Forget() {
    auto& remembered = state_->remembered;
    for (auto it = remembered.begin(); it != remembered.end();) {
      auto listed = listings_.find(it->first.first);
      const bool region_listed = listed != listings_.end() && listed->second.ok();
      if (!it->second.touched && region_listed && !keep_.count(it->first)) {
        it = remembered.erase(it);
      } else {
        it->second.touched = false;
        ++it;
      }
    }
  }

  // Records this round's comparisons and gives every unknown row the pair's last one, which
  // stays until the pair is compared again however many rounds it stays unknown (its bound
  // grows with its age: LagUpperBound). A row that is neither (diverged, not in owner,
  // another table) or a pair that left the report forgets it: an old lag would understate
  // what it means now.
  void CarryLastComparisons(UnixMillis now) {
    std::map<PairKey, LastComparison> kept;
    for (TableLag& row : report_.tables) {
      PairKey key{row.table, row.owner, row.replica};
      if (row.state == LagState::kBehind || row.state == LagState::kCaughtUp) {
        kept[key] = {now, row.lag, row.missing_commits};
      } else if (row.state == LagState::kUnknown) {
        auto last = state_->last_compared.find(key);
        if (last == state_->last_compared.end()) continue;
        row.last_known_at = last->second.at;
        row.last_known_lag = last->second.lag;
        row.last_known_missing = last->second.missing;
        kept[key] = last->second;
      }
    }
    state_->last_compared = std::move(kept);
  }

  void Finish(Result<LagReport> result) {
    if (result.ok()) {
      result->duration = std::chrono::duration_cast<std::chrono::milliseconds>(
          state_->clock.Monotonic() - started_);
      state_->latest = *result;
    }
    state_->running.reset();  // a callback may start the next round
    auto waiting = std::move(waiting_);
    for (auto& done : waiting) done(result);
  }

  std::shared_ptr<State> state_;
  InFlightLimit limit_;
  std::chrono::steady_clock::time_point started_;
  std::vector<std::function<void(Result<LagReport>)>> waiting_;
  int pending_ = 0;
  std::map<std::string, Result<std::vector<TableIdent>>> listings_;
  std::vector<Pairing> pairings_;
  std::set<RegionTable> to_load_;
  std::set<RegionTable> keep_;  // remembered views kept although not loaded this round
  std::map<RegionTable, std::string> load_errors_;
  LagReport report_;
};

LagMonitor::LagMonitor(std::map<std::string, CatalogClient*> catalogs, OwnerLookup owner_of,
                       const Clock& clock, LagMonitorOptions options)
    : state_(std::make_shared<State>(State{
          std::move(catalogs), std::move(owner_of), clock, options, {}, {}, {}, {}, {}, false})) {}

LagMonitor::~LagMonitor() { state_->stopped = true; }

void LagMonitor::Refresh(std::function<void(Result<LagReport>)> done) {
  if (auto round = state_->running.lock()) {
    round->Join(std::move(done));
    return;
  }
  auto round = std::make_shared<Round>(state_);
  round->Join(std::move(done));
  state_->running = round;
  round->Start();
}

const LagReport* LagMonitor::latest() const { return state_->latest ? &*state_->latest : nullptr; }

}  // namespace icewarden
