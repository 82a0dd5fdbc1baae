// table_load: loads the canary table. The ETag of the last full answer goes out as
// If-None-Match, so a healthy catalog usually answers 304 with no body; a 304 passes, since
// the catalog had to look the table up to say it has not changed. Loaded with snapshots=refs:
// the probe needs an answer, not the table's history, which can be megabytes.
#include <utility>

#include "health/catalog_client.h"
#include "health/probe_attempt.h"
#include "health/probe_kinds.h"

namespace icewarden {
namespace {

class TableLoadProbe final : public Probe {
 public:
  TableLoadProbe(Timers& timers, CatalogClient& catalog, TableIdent table)
      : kind_(kTableLoadProbe),
        timers_(timers),
        catalog_(catalog),
        table_(std::move(table)),
        etag_(std::make_shared<std::string>()) {}

  const std::string& kind() const override { return kind_; }

  void Check(std::chrono::milliseconds deadline, std::function<void(ProbeResult)> done) override {
    auto attempt = ProbeAttempt::Start(timers_, kind_, deadline, std::move(done));
    // The ETag lives in shared state: the answer may arrive after this probe is gone.
    std::optional<std::string> etag;
    if (!etag_->empty()) etag = *etag_;
    catalog_.LoadTable(
        table_, etag,
        [attempt, etag_slot = etag_,
         request = "load table " + table_.ToString()](Result<LoadTableOutcome> r) {
          if (!r.ok()) return attempt->Fail(r.status(), request);
          attempt->NoteAnswer();
          if (r->not_modified) return attempt->Pass("not modified");
          *etag_slot = r->table.etag;
          attempt->Pass();
        },
        CallOptions{attempt->Remaining()}, SnapshotsMode::kRefs);
  }

 private:
  std::string kind_;
  Timers& timers_;
  CatalogClient& catalog_;
  TableIdent table_;
  std::shared_ptr<std::string> etag_;
};

}  // namespace

Result<std::unique_ptr<Probe>> MakeTableLoadProbe(const ProbeSpec& spec, const ProbeContext& ctx) {
  if (!spec.table) {
    return Status::InvalidArgument("table_load probe for region " + spec.region +
                                   " needs a canary table");
  }
  return std::unique_ptr<Probe>(
      std::make_unique<TableLoadProbe>(ctx.timers, ctx.catalog, *spec.table));
}

}  // namespace icewarden
