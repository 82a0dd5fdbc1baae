// catalog_config: GET /v1/config on every check. CatalogClient::GetConfig always sends a
// request (it never answers from its cached config), so a pass proves the catalog answered
// within this check's deadline. Any HTTP status, and a body that is not a CatalogConfig,
// is an answer: only a failed exchange with nothing heard back is silence.
#include <utility>

#include "health/catalog_client.h"
#include "health/probe_attempt.h"
#include "health/probe_kinds.h"

namespace icewarden {
namespace {

class CatalogConfigProbe final : public Probe {
 public:
  CatalogConfigProbe(Timers& timers, CatalogClient& catalog)
      : kind_(kCatalogConfigProbe), timers_(timers), catalog_(catalog) {}

  const std::string& kind() const override { return kind_; }

  void Check(std::chrono::milliseconds deadline, std::function<void(ProbeResult)> done) override {
    auto attempt = ProbeAttempt::Start(timers_, kind_, deadline, std::move(done));
    catalog_.GetConfig(
        [attempt](Result<CatalogConfig> r) {
          if (!r.ok()) return attempt->Fail(r.status(), "GET /v1/config");
          attempt->NoteAnswer();
          attempt->Pass();
        },
        CallOptions{attempt->Remaining()});
  }

 private:
  std::string kind_;
  Timers& timers_;
  CatalogClient& catalog_;
};

}  // namespace

Result<std::unique_ptr<Probe>> MakeCatalogConfigProbe(const ProbeSpec&, const ProbeContext& ctx) {
  return std::unique_ptr<Probe>(std::make_unique<CatalogConfigProbe>(ctx.timers, ctx.catalog));
}

}  // namespace icewarden
