// Detection by quorum (issue 12, item 4; DESIGN.md rule 1: "unreachable from a quorum of
// vantage points"). With several replicas, each probes every region and publishes what it
// saw (orchestrator/cluster/); a region counts as unreachable, and as fencing evidence, only
// when a majority of the configured replicas have each heard nothing from it for the whole
// window. A partition around one replica, the leader included, is one vote.
//
// No timestamp crosses replicas: each replica measures its own silences and round ages on its
// own clock, and the reader measures how long ago each view last changed on its own. So a
// replica whose clock is off by any constant amount says exactly what one with a true clock
// would.
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "state/types.h"

namespace icewarden {

class LiveView;
struct Config;

// What one replica saw of one region.
struct RegionSight {
  bool probed = false;             // a round has finished
  bool silent = false;             // the latest round got no answer at all (any answer is life)
  std::int64_t silent_for_ms = 0;  // since the run of silent rounds began
  int silent_rounds = 0;
  std::string detail{};           // the latest round's failure
  std::int64_t round_age_ms = 0;  // since the latest round finished
};

// One replica's view, as it published it, and how fresh it is to whoever reads it.
struct ReplicaView {
  std::string replica;
  std::map<std::string, RegionSight> regions;
  // On the reader's clock: how long ago this view last changed in etcd (each replica re-puts
  // its view every second); 0 for the reader's own. nullopt: not seen to change yet (a view
  // left by a replica that died counts only if it is seen to change).
  std::optional<std::int64_t> heard_ms_ago;
};

// This replica's view of `regions` now, from what its probes published in `live`.
ReplicaView ViewOf(const std::string& replica, const std::vector<std::string>& regions,
                   const LiveView& live, UnixMillis now);

struct QuorumRules {
  std::vector<std::string> replicas;    // state.etcd.replicas: who votes
  std::chrono::milliseconds window{0};  // policies.unreachable_for
  // Older views and rounds are no vote: a replica that stopped publishing, or whose probes
  // stopped, does not know what the region does now.
  std::chrono::milliseconds max_view_age{5000};
  std::chrono::milliseconds max_round_age{0};  // the region's probe interval + timeout + 2 s
};

// The rules for `region` under `config`: state.etcd.replicas vote, over policies.unreachable_for;
// a round older than the region's probe interval + timeout + 2 s is stale.
QuorumRules QuorumRulesFor(const Config& config, const std::string& region);

struct ReplicaVote {
  std::string replica;
  bool silent_long_enough = false;
  std::string saw;  // "silent for 12.0s (48 rounds: connection refused)", "answered", "no view"
  std::optional<RegionSight> sight;  // absent: no usable view
};

struct QuorumVerdict {
  bool unreachable = false;
  int votes = 0;                        // replicas that heard nothing for the whole window
  int needed = 0;                       // a majority of the configured replicas
  std::vector<ReplicaVote> by_replica;  // one per configured replica, in the config's order
  std::string why;  // "2 of 3 replicas heard nothing from us-east-1 for 2s (a majority is 2)"
};

QuorumVerdict JudgeUnreachable(const std::string& region, const QuorumRules& rules,
                               const std::vector<ReplicaView>& views);

// For the leader's health machine (HealthInput::not_unreachable_because): "" when a majority of
// state.etcd.replicas got no answer from `region` in their latest rounds (or fewer than two
// replicas are listed, so there is nobody to ask), else why the region is not unreachable.
// Looser than the fencing evidence, which needs the silences to last policies.unreachable_for.
std::string UnreachableWithheld(const std::string& region, const Config& config,
                                const std::vector<ReplicaView>& views);

}  // namespace icewarden
