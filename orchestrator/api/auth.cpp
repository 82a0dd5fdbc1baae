#include "orchestrator/api/auth.h"

#include <openssl/crypto.h>

#include <cctype>

#include "state/digest.h"

namespace icewarden {
namespace {

// Who may do what. Read top to bottom; a new permission is a new row.
//   operator: proposes, aborts and acknowledges failovers; approver: approves and confirms
//   fencing; admin: everything.
//   The audit log is not for viewers: it records who approved what, from where.
struct Grant {
  Permission permission;
  const char* name;
  bool viewer;
  bool operator_;
  bool approver;
  bool admin;
};

// clang-format off
constexpr Grant kGrants[] = {
    // permission                  name                viewer operator approver admin
    {Permission::kReadRegions,     "read_regions",     true,  true,    true,    true},
    {Permission::kReadOwnership,   "read_ownership",   true,  true,    true,    true},
    {Permission::kReadFailovers,   "read_failovers",   true,  true,    true,    true},
    {Permission::kReadAudit,       "read_audit",       false, true,    true,    true},
    {Permission::kProposeFailover, "propose_failover", false, true,    false,   true},
    {Permission::kApproveFailover, "approve_failover", false, false,   true,    true},
    {Permission::kAbortFailover,   "abort_failover",   false, true,    false,   true},
    {Permission::kConfirmFencing,  "confirm_fencing",  false, false,   true,    true},
    {Permission::kAckFailover,     "ack_failover",     false, true,    false,   true},
    {Permission::kSetRegionOverlay, "set_region_overlay", false, true,  false,   true},
    {Permission::kRunDrill,        "run_drill",        false, true,    false,   true},
    {Permission::kNoteDrill,       "note_drill",       false, true,    true,    true},
    {Permission::kPauseAutomation, "pause_automation", false, true,    true,    true},
    {Permission::kReloadConfig,    "reload_config",    false, false,   false,   true},
};
// clang-format on

const Grant* FindGrant(Permission p) {
  for (const Grant& g : kGrants)
    if (g.permission == p) return &g;
  return nullptr;
}

bool Holds(const Grant& g, Role role) {
  switch (role) {
    case Role::kViewer:
      return g.viewer;
    case Role::kOperator:
      return g.operator_;
    case Role::kApprover:
      return g.approver;
    case Role::kAdmin:
      return g.admin;
  }
  return false;
}

}  // namespace

const char* PermissionName(Permission p) {
  const Grant* g = FindGrant(p);
  return g ? g->name : "unknown";
}

bool RoleAllows(Role role, Permission p) {
  const Grant* g = FindGrant(p);
  return g != nullptr && Holds(*g, role);
}

std::vector<std::string> PermissionNamesOf(Role role) {
  std::vector<std::string> out;
  for (const Grant& g : kGrants)
    if (Holds(g, role)) out.emplace_back(g.name);
  return out;
}

std::string RolesAllowedTo(Permission p) {
  static constexpr std::pair<Role, const char*> kRoles[] = {
      {Role::kViewer, "viewer"},
      {Role::kOperator, "operator"},
      {Role::kApprover, "approver"},
      {Role::kAdmin, "admin"},
  };
  std::vector<const char*> names;
  for (const auto& [role, name] : kRoles)
    if (RoleAllows(role, p)) names.push_back(name);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += (i + 1 == names.size()) ? " or " : ", ";
    out += names[i];
  }
  return out.empty() ? "no role" : out;
}

TokenVerifier::TokenVerifier(const std::vector<ApiToken>& tokens) {
  entries_.reserve(tokens.size());
  for (const ApiToken& t : tokens) {
    Entry e;
    e.principal = Principal{t.name, t.role};
    // A token given as its hash is compared by that digest; the token itself is never here.
    if (auto hashed = ParseSha256Hex(t.token_sha256)) {
      e.usable = true;
      e.digest = *hashed;
    } else {
      e.usable = !t.token.empty();
      e.digest = Sha256(t.token.value());
    }
    entries_.push_back(std::move(e));
  }
}

std::optional<Principal> TokenVerifier::Verify(std::string_view token) const {
  // Comparing fixed-size digests makes the work independent of the token's length too.
  const auto digest = Sha256(token);
  const Entry* found = nullptr;
  for (const Entry& e : entries_) {
    const bool equal = CRYPTO_memcmp(e.digest.data(), digest.data(), digest.size()) == 0;
    if (equal && e.usable && found == nullptr) found = &e;
  }
  if (token.empty() || found == nullptr) return std::nullopt;
  return found->principal;
}

std::optional<std::string_view> BearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i])
      return std::nullopt;
  }
  std::string_view rest = authorization.substr(kScheme.size());
  if (rest.front() != ' ') return std::nullopt;
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
  if (rest.empty() || rest.find_first_of(" \t") != std::string_view::npos) return std::nullopt;
  return rest;
}

}  // namespace icewarden
