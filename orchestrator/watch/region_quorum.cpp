#include "orchestrator/watch/region_quorum.h"

#include <algorithm>

#include "health/replication_lag.h"
#include "orchestrator/config/config.h"
#include "orchestrator/watch/live_view.h"

namespace icewarden {
namespace {

std::string Duration(std::int64_t ms) {
  return FormatLagDuration(std::chrono::milliseconds(std::max<std::int64_t>(ms, 0)));
}

ReplicaVote VoteOf(const std::string& replica, const std::string& region, const QuorumRules& rules,
                   const ReplicaView* view) {
  ReplicaVote vote;
  vote.replica = replica;
  if (view == nullptr) {
    vote.saw = "no view in etcd (not running, or cut off from etcd)";
    return vote;
  }
  if (!view->heard_ms_ago) {
    vote.saw = "a view not yet seen to change (its replica may have stopped)";
    return vote;
  }
  if (*view->heard_ms_ago > rules.max_view_age.count()) {
    vote.saw = "a view last changed " + Duration(*view->heard_ms_ago) + " ago";
    return vote;
  }
  auto it = view->regions.find(region);
  if (it == view->regions.end() || !it->second.probed) {
    vote.saw = "has not probed " + region + " yet";
    return vote;
  }
  const RegionSight& sight = it->second;
  // How old the sight is now: its round's age when published, plus the view's age.
  const std::int64_t round_age = sight.round_age_ms + *view->heard_ms_ago;
  if (round_age > rules.max_round_age.count()) {
    vote.saw = "its latest round of " + region + " finished " + Duration(round_age) +
               " ago (its probes are stuck)";
    return vote;
  }
  vote.sight = sight;
  if (!sight.silent) {
    vote.saw = "answered";
    return vote;
  }
  vote.saw = "silent for " + Duration(sight.silent_for_ms) + " (" +
             std::to_string(sight.silent_rounds) + " rounds: " + sight.detail + ")";
  vote.silent_long_enough = sight.silent_for_ms >= rules.window.count();
  return vote;
}

}  // namespace

ReplicaView ViewOf(const std::string& replica, const std::vector<std::string>& regions,
                   const LiveView& live, UnixMillis now) {
  ReplicaView view;
  view.replica = replica;
  view.heard_ms_ago = 0;
  const auto rounds = live.ProbeRounds();
  for (const std::string& region : regions) {
    RegionSight sight;
    auto round = rounds.find(region);
    if (round != rounds.end()) {
      sight.probed = true;
      sight.round_age_ms = std::max<std::int64_t>(now - round->second.at, 0);
      sight.detail = round->second.ok ? "" : round->second.detail;
    }
    if (auto silence = live.Silence(region)) {
      sight.silent = true;
      sight.silent_for_ms = std::max<std::int64_t>(now - silence->since, 0);
      sight.silent_rounds = silence->rounds;
      sight.detail = silence->detail;
    }
    view.regions[region] = std::move(sight);
  }
  return view;
}

QuorumRules QuorumRulesFor(const Config& config, const std::string& region) {
  QuorumRules rules;
  rules.replicas = config.state.etcd.replicas;
  rules.window = config.policies.unreachable_for;
  const RegionConfig* rc = config.FindRegion(region);
  const auto interval = rc ? rc->probe.interval : std::chrono::milliseconds(10'000);
  const auto timeout = rc ? rc->probe.timeout : std::chrono::milliseconds(5'000);
  rules.max_round_age = interval + timeout + std::chrono::milliseconds(2000);
  return rules;
}

QuorumVerdict JudgeUnreachable(const std::string& region, const QuorumRules& rules,
                               const std::vector<ReplicaView>& views) {
  QuorumVerdict verdict;
  verdict.needed = static_cast<int>(rules.replicas.size()) / 2 + 1;
  for (const std::string& replica : rules.replicas) {
    auto it = std::find_if(views.begin(), views.end(),
                           [&](const ReplicaView& v) { return v.replica == replica; });
    ReplicaVote vote = VoteOf(replica, region, rules, it == views.end() ? nullptr : &*it);
    if (vote.silent_long_enough) ++verdict.votes;
    verdict.by_replica.push_back(std::move(vote));
  }
  verdict.unreachable = !rules.replicas.empty() && verdict.votes >= verdict.needed;
  verdict.why = std::to_string(verdict.votes) + " of " + std::to_string(rules.replicas.size()) +
                " replicas heard nothing from " + region +
                (rules.window.count() > 0 ? " for " + Duration(rules.window.count())
                                          : std::string(" in their latest round")) +
                " (a majority is " + std::to_string(verdict.needed) + ")";
  for (const ReplicaVote& v : verdict.by_replica) verdict.why += "; " + v.replica + ": " + v.saw;
  return verdict;
}

std::string UnreachableWithheld(const std::string& region, const Config& config,
                                const std::vector<ReplicaView>& views) {
  if (config.state.etcd.replicas.size() < 2) return "";
  QuorumRules rules = QuorumRulesFor(config, region);
  rules.window = std::chrono::milliseconds(0);  // silent now, for however long
  QuorumVerdict verdict = JudgeUnreachable(region, rules, views);
  return verdict.unreachable ? "" : verdict.why;
}

}  // namespace icewarden
