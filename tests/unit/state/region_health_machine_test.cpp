#include "state/region_health_machine.h"

#include <gtest/gtest.h>

namespace icewarden {
namespace {

using H = RegionHealth;

HealthInput Fail(std::string detail = "connection refused") {
  return {HealthEvent::kProbeRoundFailed, EventSource::kProbe, "catalog_config", std::move(detail),
          100};
}
HealthInput Pass() {
  return {HealthEvent::kProbeRoundPassed, EventSource::kProbe, "catalog_config", "", 200};
}

Region Named(H health = H::kHealthy) {
  Region r;
  r.name = "us-east-1";
  r.health = health;
  return r;
}

// Drives a region through events and returns the decisions.
std::vector<HealthDecision> Drive(Region& r, const std::vector<HealthInput>& inputs,
                                  HealthThresholds t = {3, 2}) {
  std::vector<HealthDecision> out;
  for (const auto& in : inputs) {
    out.push_back(ApplyHealthEvent(r, in, t));
    r = out.back().next;
  }
  return out;
}

TEST(RegionHealthMachine, FallFailedRoundsMakeARegionUnreachableWithAReason) {
  Region r = Named();
  auto d = Drive(r, {Fail(), Fail(), Fail()});
  EXPECT_EQ(d[0].next.health, H::kDegraded);
  EXPECT_TRUE(d[0].changed);
  EXPECT_EQ(d[1].next.health, H::kDegraded);
  EXPECT_FALSE(d[1].changed);
  EXPECT_EQ(d[2].next.health, H::kUnreachable);
  EXPECT_TRUE(d[2].changed);
  EXPECT_EQ(d[2].reason,
            "us-east-1 unreachable: 3 consecutive catalog_config failures: connection refused");
  EXPECT_EQ(r.reason, d[2].reason);
  EXPECT_EQ(r.since, 100);
}

// One replica of several that alone hears nothing cannot tell its partition from the region's
// loss (issue 12): its failures count, but the region stops at degraded and says why.
TEST(RegionHealthMachine, FailuresTheOtherReplicasDoNotShareStopAtDegraded) {
  HealthInput alone = Fail();
  alone.not_unreachable_because = "1 of 3 replicas heard nothing from us-east-1";
  Region r = Named();
  auto d = Drive(r, {alone, alone, alone, alone});
  EXPECT_EQ(r.health, H::kDegraded);
  EXPECT_EQ(r.consecutive_failures, 4) << "the rounds still count";
  EXPECT_EQ(d[2].reason,
            "us-east-1 degraded: 3 consecutive catalog_config failures (fall 3): connection "
            "refused; not unreachable: 1 of 3 replicas heard nothing from us-east-1");
  EXPECT_TRUE(d[2].changed) << "persisted once, so the region says why it stays degraded";
  EXPECT_EQ(r.reason, d[2].reason);
  EXPECT_FALSE(d[3].changed);
  // Once the others agree, the next failed round is enough.
  auto agreed = Drive(r, {Fail()});
  EXPECT_EQ(r.health, H::kUnreachable);
  EXPECT_TRUE(agreed[0].changed);
  // And an unreachable region the others hear again is only degraded.
  Drive(r, {alone});
  EXPECT_EQ(r.health, H::kDegraded);
  // A passed round is not affected.
  Region healthy = Named();
  HealthInput pass = Pass();
  pass.not_unreachable_because = "ignored";
  EXPECT_EQ(ApplyHealthEvent(healthy, pass, {3, 2}).next.health, H::kHealthy);
}

TEST(RegionHealthMachine, APassedRoundResetsTheFailureCount) {
  Region r = Named();
  Drive(r, {Fail(), Fail(), Pass(), Fail(), Fail()});
  EXPECT_EQ(r.health, H::kDegraded) << "failures were not consecutive";
  EXPECT_EQ(r.consecutive_failures, 2);
}

TEST(RegionHealthMachine, RiseGoodRoundsBringItBackThroughDegraded) {
  Region r = Named(H::kUnreachable);
  r.consecutive_failures = 7;
  auto d = Drive(r, {Pass(), Pass()});
  EXPECT_EQ(d[0].next.health, H::kDegraded);
  EXPECT_EQ(d[1].next.health, H::kHealthy);
  EXPECT_EQ(d[1].reason, "us-east-1 healthy: 2 consecutive passed rounds");
  EXPECT_EQ(r.consecutive_failures, 0);
}

TEST(RegionHealthMachine, FlappingNeverReachesUnreachableOrHealthy) {
  Region r = Named(H::kDegraded);
  for (int i = 0; i < 50; ++i) {
    Drive(r, {Fail(), Pass()});
    EXPECT_EQ(r.health, H::kDegraded);
  }
}

TEST(RegionHealthMachine, FallAndRiseOfOneAreImmediate) {
  Region r = Named();
  Drive(r, {Fail()}, {1, 1});
  EXPECT_EQ(r.health, H::kUnreachable);
  Drive(r, {Pass()}, {1, 1});
  EXPECT_EQ(r.health, H::kHealthy);
}

TEST(RegionHealthMachine, WebhooksMaySuspectButNotDeclareUnreachable) {
  Region r = Named();
  HealthInput suspect{HealthEvent::kMarkSuspect, EventSource::kWebhook, "", "CatalogDown firing",
                      5};
  auto d = ApplyHealthEvent(r, suspect, {});
  EXPECT_TRUE(d.accepted);
  EXPECT_EQ(d.next.health, H::kDegraded);
  EXPECT_EQ(d.reason, "us-east-1 degraded: marked suspect by webhook: CatalogDown firing");
  // Suspicion of an unreachable region changes nothing and is refused with a reason.
  auto none = ApplyHealthEvent(Named(H::kUnreachable), suspect, {});
  EXPECT_FALSE(none.accepted);
  EXPECT_EQ(none.next.health, H::kUnreachable);
}

TEST(RegionHealthMachine, AResolvedAlertLiftsTheSuspicionUnlessProbesFail) {
  HealthInput suspect{HealthEvent::kMarkSuspect, EventSource::kWebhook, "", "CatalogDown", 5};
  HealthInput lift{HealthEvent::kLiftSuspect, EventSource::kWebhook, "", "CatalogDown resolved", 6};
  auto marked = ApplyHealthEvent(Named(), suspect, {});
  auto lifted = ApplyHealthEvent(marked.next, lift, {});
  EXPECT_TRUE(lifted.accepted);
  EXPECT_TRUE(lifted.changed);
  EXPECT_EQ(lifted.next.health, H::kHealthy);
  EXPECT_EQ(lifted.reason, "us-east-1 healthy: suspicion lifted by webhook: CatalogDown resolved");
  Region failing = Named(H::kDegraded);
  failing.consecutive_failures = 1;
  auto kept = ApplyHealthEvent(failing, lift, {});
  EXPECT_TRUE(kept.accepted);
  EXPECT_FALSE(kept.changed);
  EXPECT_EQ(kept.next.health, H::kDegraded) << "the probes decide while they fail";
  EXPECT_FALSE(ApplyHealthEvent(Named(H::kUnreachable), lift, {}).accepted);
}

TEST(RegionHealthMachine, OnlyOperatorsAndTheOrchestratorSetOverlays) {
  for (auto source : {EventSource::kProbe, EventSource::kWebhook}) {
    auto d = ApplyHealthEvent(Named(), {HealthEvent::kSetFenced, source, "", "x", 1}, {});
    EXPECT_FALSE(d.accepted);
    EXPECT_FALSE(d.next.fenced);
  }
  auto d = ApplyHealthEvent(
      Named(), {HealthEvent::kSetMaintenance, EventSource::kOperator, "", "patching", 1}, {});
  EXPECT_TRUE(d.accepted);
  EXPECT_TRUE(d.changed);
  EXPECT_TRUE(d.next.maintenance);
  EXPECT_EQ(d.next.health, H::kHealthy) << "overlays do not change health";
  EXPECT_EQ(d.reason, "us-east-1 maintenance (operator: patching)");
  auto f = ApplyHealthEvent(
      d.next, {HealthEvent::kSetFenced, EventSource::kOrchestrator, "", "fo-1", 2}, {});
  EXPECT_TRUE(f.next.fenced);
  EXPECT_TRUE(f.next.maintenance);
  auto c =
      ApplyHealthEvent(f.next, {HealthEvent::kClearFenced, EventSource::kOperator, "", "", 3}, {});
  EXPECT_FALSE(c.next.fenced);
}

TEST(RegionHealthMachine, ProbesCannotBeImpersonated) {
  HealthInput forged{HealthEvent::kProbeRoundFailed, EventSource::kWebhook, "", "", 1};
  auto d = ApplyHealthEvent(Named(), forged, {});
  EXPECT_FALSE(d.accepted);
  EXPECT_EQ(d.next.consecutive_failures, 0);
}

// Every (health, event, source) combination: probe rounds only from probes, overlays only
// from people and the orchestrator, and health moves at most one step per event unless
// fall/rise is 1.
TEST(RegionHealthMachine, EveryStateEventSourceCombination) {
  const std::vector<H> healths = {H::kHealthy, H::kDegraded, H::kUnreachable};
  const std::vector<HealthEvent> events = {
      HealthEvent::kProbeRoundFailed, HealthEvent::kProbeRoundPassed,
      HealthEvent::kMarkSuspect,      HealthEvent::kSetFenced,
      HealthEvent::kClearFenced,      HealthEvent::kSetMaintenance,
      HealthEvent::kClearMaintenance, HealthEvent::kProbeRoundUnparsed,
      HealthEvent::kLiftSuspect};
  const std::vector<EventSource> sources = {EventSource::kProbe, EventSource::kWebhook,
                                            EventSource::kOperator, EventSource::kOrchestrator};
  for (H h : healths)
    for (auto e : events)
      for (auto s : sources) {
        auto d = ApplyHealthEvent(Named(h), {e, s, "catalog_config", "x", 9}, {3, 2});
        bool probe_event = e == HealthEvent::kProbeRoundFailed ||
                           e == HealthEvent::kProbeRoundPassed ||
                           e == HealthEvent::kProbeRoundUnparsed;
        bool overlay =
            !probe_event && e != HealthEvent::kMarkSuspect && e != HealthEvent::kLiftSuspect;
        bool expect = probe_event ? s == EventSource::kProbe
                      : overlay   ? (s == EventSource::kOperator || s == EventSource::kOrchestrator)
                                  : (s != EventSource::kOrchestrator && h != H::kUnreachable);
        SCOPED_TRACE(std::string(RegionHealthName(h)) + " " + HealthEventName(e) + " from " +
                     EventSourceName(s) + ": " + d.reason);
        EXPECT_EQ(d.accepted, expect);
        if (!d.accepted) {
          EXPECT_EQ(d.next.health, h);
        }
        if (e == HealthEvent::kProbeRoundFailed && d.accepted) {
          EXPECT_EQ(d.next.health, h == H::kUnreachable ? H::kUnreachable : H::kDegraded);
        }
        if (e == HealthEvent::kProbeRoundPassed && d.accepted) {
          EXPECT_EQ(d.next.health, h == H::kHealthy ? H::kHealthy : H::kDegraded);
        }
        // An answer icewarden cannot parse is a live catalog: degraded from anywhere.
        if (e == HealthEvent::kProbeRoundUnparsed && d.accepted) {
          EXPECT_EQ(d.next.health, H::kDegraded);
        }
      }
}

}  // namespace
}  // namespace icewarden
