#include "orchestrator/watch/region_silence.h"

#include <spdlog/spdlog.h>

namespace icewarden {

std::optional<RegionSilence> NextSilence(const std::optional<RegionSilence>& current,
                                         const ProbeRound& round, UnixMillis at) {
  if (!round.silent()) return std::nullopt;
  RegionSilence next = current.value_or(RegionSilence{at, 0, ""});
  next.rounds += 1;
  next.detail = round.detail;
  return next;
}

void RecordProbeRound(LiveView& live, const ProbeRound& round, UnixMillis at) {
  live.PublishProbeRound(round.region,
                         ProbeRoundView{round.ok, round.latency, round.kind, round.detail, at});
  for (const ProbeResult& probe : round.probes)
    live.ObserveProbe(round.region, probe.kind, probe.latency);
  const auto before = live.Silence(round.region);
  auto silence = NextSilence(before, round, at);
  if (silence && !before)
    spdlog::info("{}: silent: no answer at all ({})", round.region, silence->detail);
  if (!silence && before)
    spdlog::info("{}: answered again after {} silent rounds", round.region, before->rounds);
  live.PublishSilence(round.region, std::move(silence));
}

}  // namespace icewarden
