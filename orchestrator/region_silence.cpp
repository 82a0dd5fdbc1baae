#include "orchestrator/region_silence.h"

namespace icewarden {

std::optional<RegionSilence> NextSilence(const std::optional<RegionSilence>& current,
                                         const ProbeRound& round, UnixMillis at) {
  if (!round.silent()) return std::nullopt;
  RegionSilence next = current.value_or(RegionSilence{at, 0, ""});
  next.rounds += 1;
  next.detail = round.detail;
  return next;
}

}  // namespace icewarden
