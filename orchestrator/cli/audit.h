// `icewarden audit verify`: the audit log's seal (state/audit_seal.h) checked from the state
// record itself, not through the daemon, so a verifier does not trust what it checks.
// Thread-safety: one call per process.
#pragma once

#include <iosfwd>
#include <string>

namespace icewarden {

// Reads the state record that `config_path` names (read-only) and checks every audit event's
// seal, and the anchor ("SEQ:SHA256", from an earlier run's output) when given. Prints the
// head to record as the next anchor. Exit 0 intact, 1 broken (where and how on `err`), 2 a
// config, anchor or store that cannot be read.
int CmdAuditVerify(const std::string& config_path, const std::string& anchor, std::ostream& out,
                   std::ostream& err);

}  // namespace icewarden
