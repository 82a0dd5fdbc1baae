#include "health/catalog_inventory.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <utility>

namespace icewarden {
namespace {

bool IsChildOf(const std::optional<Namespace>& parent, const Namespace& ns) {
  if (!parent) return !ns.empty();
  return ns.size() > parent->size() && std::equal(parent->begin(), parent->end(), ns.begin());
}

class InventoryWalk : public std::enable_shared_from_this<InventoryWalk> {
 public:
  InventoryWalk(CatalogClient& client, InFlightLimit& limit,
                std::function<void(Result<std::vector<TableIdent>>)> done)
      : client_(client), limit_(limit), done_(std::move(done)) {}

  void Start() {
    ++pending_;  // held by Start itself, so that synchronous completions cannot finish early
    ListNamespacesUnder(std::nullopt);
    Settle();
  }

 private:
  void ListNamespacesUnder(std::optional<Namespace> parent) {
    ++pending_;
    limit_.Run([self = shared_from_this(), parent](std::function<void()> release) {
      if (self->error_) {
        release();
        return self->Settle();
      }
      self->client_.ListNamespaces(
          parent, [self, parent, release](Result<std::vector<Namespace>> r) {
            release();
            if (!r.ok()) {
              self->Fail(r.status());
            } else if (!self->error_) {
              for (Namespace& ns : *r) {
                if (!IsChildOf(parent, ns) || !self->seen_.insert(ns).second) continue;
                self->ListTablesIn(ns);
                self->ListNamespacesUnder(std::move(ns));
              }
            }
            self->Settle();
          });
    });
  }

  void ListTablesIn(Namespace ns) {
    ++pending_;
    limit_.Run([self = shared_from_this(), ns](std::function<void()> release) {
      if (self->error_) {
        release();
        return self->Settle();
      }
      self->client_.ListTables(ns, [self, release](Result<std::vector<TableIdent>> r) {
        release();
        if (!r.ok()) {
          self->Fail(r.status());
        } else {
          for (TableIdent& t : *r) self->tables_.push_back(std::move(t));
        }
        self->Settle();
      });
    });
  }

  void Fail(const Status& s) {
    if (!error_) error_ = s;
  }

  // One pending unit is done; the last one reports.
  void Settle() {
    if (--pending_ > 0) return;
    if (error_) return done_(*error_);
    done_(std::move(tables_));
  }

  CatalogClient& client_;
  InFlightLimit& limit_;
  std::function<void(Result<std::vector<TableIdent>>)> done_;
  int pending_ = 0;
  std::set<Namespace> seen_;
  std::vector<TableIdent> tables_;
  std::optional<Status> error_;
};

}  // namespace

void ListCatalogTables(CatalogClient& client, InFlightLimit& limit,
                       std::function<void(Result<std::vector<TableIdent>>)> done) {
  std::make_shared<InventoryWalk>(client, limit, std::move(done))->Start();
}

}  // namespace icewarden
