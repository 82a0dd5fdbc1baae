#include "state/types.h"

#include <array>
#include <utility>

namespace icewarden {
namespace {

template <typename E, std::size_t N>
std::optional<E> ParseByName(std::string_view s,
                             const std::array<std::pair<E, const char*>, N>& names) {
  for (const auto& [value, name] : names)
    if (s == name) return value;
  return std::nullopt;
}

template <typename E, std::size_t N>
const char* NameOf(E e, const std::array<std::pair<E, const char*>, N>& names) {
  for (const auto& [value, name] : names)
    if (value == e) return name;
  return "unknown";
}

constexpr std::array<std::pair<RegionHealth, const char*>, 3> kHealthNames{{
    {RegionHealth::kHealthy, "healthy"},
    {RegionHealth::kDegraded, "degraded"},
    {RegionHealth::kUnreachable, "unreachable"},
}};

constexpr std::array<std::pair<FailoverPhase, const char*>, 12> kPhaseNames{{
    {FailoverPhase::kProposed, "proposed"},
    {FailoverPhase::kApproved, "approved"},
    {FailoverPhase::kFencing, "fencing"},
    {FailoverPhase::kFenced, "fenced"},
    {FailoverPhase::kPromoting, "promoting"},
    {FailoverPhase::kVerifying, "verifying"},
    {FailoverPhase::kCompleted, "completed"},
    {FailoverPhase::kAborted, "aborted"},
    {FailoverPhase::kFailed, "failed"},
    {FailoverPhase::kCompensating, "compensating"},
    {FailoverPhase::kRolledBack, "rolled_back"},
    {FailoverPhase::kNeedsAttention, "needs_attention"},
}};

constexpr std::array<std::pair<FailoverKind, const char*>, 3> kKindNames{{
    {FailoverKind::kFailover, "failover"},
    {FailoverKind::kSwitchover, "switchover"},
    {FailoverKind::kDrill, "drill"},
}};

constexpr std::array<std::pair<FencingKind, const char*>, 4> kFencingNames{{
    {FencingKind::kEvidenceSteps, "steps_and_quiet_window"},
    {FencingKind::kEvidenceUnreachable, "old_region_unreachable"},
    {FencingKind::kOperator, "operator"},
    {FencingKind::kGatewayClosed, "gateway_closed"},
}};

constexpr std::array<std::pair<StepState, const char*>, 6> kStepNames{{
    {StepState::kPending, "pending"},
    {StepState::kRunning, "running"},
    {StepState::kSucceeded, "succeeded"},
    {StepState::kFailed, "failed"},
    {StepState::kCompensating, "compensating"},
    {StepState::kCompensated, "compensated"},
}};

}  // namespace

const char* RegionHealthName(RegionHealth h) { return NameOf(h, kHealthNames); }
std::optional<RegionHealth> ParseRegionHealth(std::string_view s) {
  return ParseByName(s, kHealthNames);
}
const char* FailoverPhaseName(FailoverPhase p) { return NameOf(p, kPhaseNames); }
std::optional<FailoverPhase> ParseFailoverPhase(std::string_view s) {
  return ParseByName(s, kPhaseNames);
}
const char* FailoverKindName(FailoverKind k) { return NameOf(k, kKindNames); }
std::optional<FailoverKind> ParseFailoverKind(std::string_view s) {
  return ParseByName(s, kKindNames);
}
const char* FencingKindName(FencingKind k) { return NameOf(k, kFencingNames); }
std::optional<FencingKind> ParseFencingKind(std::string_view s) {
  // The name configs used before the kind was named after what it observes.
  if (s == "quorum_unreachable") return FencingKind::kEvidenceUnreachable;
  return ParseByName(s, kFencingNames);
}
const char* StepStateName(StepState s) { return NameOf(s, kStepNames); }
std::optional<StepState> ParseStepState(std::string_view s) { return ParseByName(s, kStepNames); }

bool IsTerminal(FailoverPhase p) {
  return p == FailoverPhase::kCompleted || p == FailoverPhase::kAborted ||
         p == FailoverPhase::kRolledBack;
}

std::size_t TableIdentHash::operator()(const TableIdent& t) const {
  std::size_t h = std::hash<std::string>{}(t.name);
  for (const std::string& level : t.namespace_levels)
    h = h * 1099511628211ULL ^ std::hash<std::string>{}(level);
  return h;
}

std::string TableIdent::ToString() const {
  std::string out;
  for (const auto& level : namespace_levels) {
    out += level;
    out += '.';
  }
  return out + name;
}

std::string TableIdent::NamespaceKey() const {
  std::string out;
  for (std::size_t i = 0; i < namespace_levels.size(); ++i) {
    if (i) out += '\x1f';
    out += namespace_levels[i];
  }
  return out;
}

std::vector<std::string> TableIdent::SplitNamespaceKey(std::string_view key) {
  std::vector<std::string> levels;
  if (key.empty()) return levels;
  std::size_t start = 0;
  for (;;) {
    std::size_t sep = key.find('\x1f', start);
    levels.emplace_back(key.substr(start, sep - start));
    if (sep == std::string_view::npos) break;
    start = sep + 1;
  }
  return levels;
}

std::optional<TableIdent> TableIdent::Parse(std::string_view dotted) {
  TableIdent t;
  std::size_t start = 0;
  for (;;) {
    std::size_t dot = dotted.find('.', start);
    std::string_view part = dotted.substr(start, dot - start);
    if (part.empty()) return std::nullopt;
    if (dot == std::string_view::npos) {
      t.name = std::string(part);
      break;
    }
    t.namespace_levels.emplace_back(part);
    start = dot + 1;
  }
  if (t.namespace_levels.empty()) return std::nullopt;  // Iceberg tables live in a namespace
  return t;
}

}  // namespace icewarden
