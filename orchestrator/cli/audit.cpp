#include "orchestrator/cli/audit.h"

#include <ostream>

#include "orchestrator/cluster/cluster.h"
#include "orchestrator/config/config.h"
#include "orchestrator/service/service.h"
#include "state/audit_seal.h"
#include "state/clock.h"
#include "state/state_store.h"

namespace icewarden {

int CmdAuditVerify(const std::string& config_path, const std::string& anchor_text,
                   std::ostream& out, std::ostream& err) {
  std::optional<AuditAnchor> anchor;
  if (!anchor_text.empty()) {
    anchor = ParseAuditAnchor(anchor_text);
    if (!anchor) {
      err << "icewarden: --anchor " << anchor_text
          << " is not SEQ:SHA256 (a sequence number, a colon, 64 hex digits), as `audit verify` "
             "prints after \"head\"\n";
      return kExitUsage;
    }
  }
  // The store's secrets (etcd's password) are needed; the API's are not.
  ConfigLoad load = LoadConfig(config_path, ProcessEnv, SecretCheck::kWarnIfMissing);
  if (!load.errors.empty()) {
    for (const ConfigError& e : load.errors) err << e.ToString() << '\n';
    return kExitUsage;
  }
  auto store = OpenExistingState(*load.config, SystemClock(), /*read_only=*/true);
  if (!store.ok()) {
    err << "icewarden: " << store.status().message() << '\n';
    return kExitUsage;
  }
  auto report = VerifyAuditChain(**store, anchor);
  if (!report.ok()) {
    err << "icewarden: cannot read the audit log: " << report.status().message() << '\n';
    return kExitUsage;
  }
  const AuditChainReport& r = *report;
  if (!r.intact) {
    err << "icewarden: the audit log is broken at event " << r.broken_at << ": " << r.problem
        << "\n  " << r.events << " events before it hold; `icewarden audit list --after "
        << (r.broken_at > 1 ? r.broken_at - 1 : 0) << " --limit 2` shows the place\n";
    return kExitFailed;
  }
  out << "audit log intact: " << r.events << " events";
  if (r.unsealed > 0)
    out << " (the first " << r.unsealed << " written before the seal existed, so not covered)";
  if (anchor) out << ", anchor " << anchor->seq << " holds";
  out << '\n';
  if (r.head_seq > 0)
    out << "head " << r.head_seq << ":" << (r.head_sha256.empty() ? "(unsealed)" : r.head_sha256)
        << "\n  (record it elsewhere: `audit verify --anchor` with it fails later if this event "
           "is removed or the log is rewritten from it)\n";
  return kExitOk;
}

}  // namespace icewarden
