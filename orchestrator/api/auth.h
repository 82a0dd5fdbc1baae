// Authentication and authorization for the HTTP API.
//
// A caller authenticates with `Authorization: Bearer TOKEN`; the token is compared with
// every configured ApiToken in constant time (the comparison takes the same time whether
// or not, and wherever, it differs). What a role may do is one table in auth.cpp.
// Thread-safety: TokenVerifier is immutable after construction and safe to share between
// threads; the free functions are pure.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/config/config.h"

namespace icewarden {

// Something a caller of the API may be allowed to do.
enum class Permission {
  kReadRegions,
  kReadOwnership,
  kReadFailovers,
  kReadAudit,  // the audit log says who approved what, from where: not for viewers
  kProposeFailover,
  kApproveFailover,
  kAbortFailover,
  kConfirmFencing,  // an operator's word that the old owner stopped writing
  kAckFailover,
  kSetRegionOverlay,  // fence / unfence a region (an operator's command with a reason)
  kRunDrill,          // start a drill run (a live one proposes a failover: as proposing)
  kNoteDrill,         // add an operator's note to a drill run's report
  kPauseAutomation,   // pause / resume webhooks' and drills' proposals (stopping is safe)
  kReloadConfig,      // re-read the config file (what it says changes who may do what)
};

// "read_audit": for error messages and logs.
const char* PermissionName(Permission p);

// Whether a token with `role` may do `p` (the table in auth.cpp).
bool RoleAllows(Role role, Permission p);

// The names of every permission `role` holds, in the table's order: GET /api/v1/session,
// which the dashboard reads to show only the buttons the signed-in role may use.
std::vector<std::string> PermissionNamesOf(Role role);

// "operator, approver or admin": the roles that hold `p`, for 403 messages.
std::string RolesAllowedTo(Permission p);

// The authenticated caller: the token's name (the identity recorded in the audit log)
// and its role. Never carries the secret.
struct Principal {
  std::string name;
  Role role = Role::kViewer;
};

// Checks bearer tokens against the configured ones. Stores SHA-256 digests of the
// secrets, never the secrets themselves. Tokens with an empty secret never match.
class TokenVerifier {
 public:
  explicit TokenVerifier(const std::vector<ApiToken>& tokens);

  // The principal whose token equals `token`, or nullopt. Examines every configured token
  // whatever the outcome, and compares digests with CRYPTO_memcmp, so the time taken says
  // nothing about which token, or how much of one, matched.
  std::optional<Principal> Verify(std::string_view token) const;

 private:
  struct Entry {
    Principal principal;
    std::array<unsigned char, 32> digest{};
    bool usable = false;
  };
  std::vector<Entry> entries_;
};

// The token in an Authorization header value "Bearer TOKEN" (scheme case-insensitive,
// RFC 6750), or nullopt when the header is not a well-formed bearer credential.
std::optional<std::string_view> BearerToken(std::string_view authorization);

}  // namespace icewarden
