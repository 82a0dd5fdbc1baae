// Switchovers, failbacks and the split-brain watch in the lab, with a real BIND 9 and a real
// Alertmanager (tests/e2e/lab_stack.h), driven through the CLI as operators and approvers would.
#include <fstream>
#include <set>
#include <thread>

#include "state/types.h"
#include "tests/e2e/failover_e2e_fixture.h"

namespace icewarden::testing {
namespace {

using ::testing::HasSubstr;

class SwitchoverE2eTest : public FailoverE2eTest {
 protected:
  // `icewarden switchover ... --yes --id-only` as the operator; the id.
  std::string SwitchUsToEu() {
    CommandResult r =
        stack_->Cli({"switchover", "--to", kLabEu, "--scope", "owner:us-east-1", "--reason",
                     "planned maintenance of us-east-1", "--yes", "--id-only"},
                    "operator");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    std::string id = r.out.substr(0, r.out.find('\n'));
    return id.rfind("fo-", 0) == 0 ? id : "";
  }

  void Approve(const std::string& id) {
    CommandResult r =
        stack_->Cli({"failover", "approve", id, "--reason", "planned", "--yes"}, "approver");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  json Step(const std::string& id, const std::string& step) {
    for (const json& s : Failover(id).value("steps", json::array()))
      if (s.value("step_id", "") == step) return s;
    return nullptr;
  }

  // Waits until the workload has committed in us-east-1 after this call: with replication
  // paused, that commit is one eu-central-1 lacks.
  bool NewCommitInTheOldOwner() {
    const long long since = stack_->LabAdmin("GET", "/lab/commits").body.value("total", 0LL);
    return Eventually(
        [&] {
          HttpReply log = stack_->LabAdmin("GET", "/lab/commits?since=" + std::to_string(since));
          for (const json& c : log.body.value("commits", json::array()))
            if (c["region"] == kLabUs) return true;
          return false;
        },
        20s);
  }

  // The snapshot ids a region's catalog holds for a table.
  std::set<long long> Snapshots(const std::string& region, const std::string& dotted) {
    auto t = *TableIdent::Parse(dotted);
    std::string ns;
    for (const auto& l : t.namespace_levels) ns += (ns.empty() ? "" : "%1F") + l;
    httplib::Client c(stack_->region_url(region));
    auto res = c.Get("/v1/lab/namespaces/" + ns + "/tables/" + t.name);
    std::set<long long> out;
    if (!res || res->status != 200) return out;
    json m = json::parse(res->body)["metadata"];
    for (const json& s : m.value("snapshots", json::array()))
      out.insert(s["snapshot-id"].get<long long>());
    return out;
  }
};

// Zero loss under the lab's continuous workload: every commit the workload made (the lab's own
// log) is in the new owner afterwards.
TEST_F(SwitchoverE2eTest, SwitchoverUnderTheWorkloadLosesNothing) {
  WaitUntilSettled();
  const auto before = Ownership();
  // The workload has committed in the old owner (the lab's log says so) before the switch.
  ASSERT_TRUE(Eventually(
      [&] {
        HttpReply log = stack_->LabAdmin("GET", "/lab/commits");
        int us = 0;
        for (const json& c : log.body.value("commits", json::array())) us += c["region"] == kLabUs;
        return us >= 8;
      },
      30s));
  const std::string id = SwitchUsToEu();
  ASSERT_FALSE(id.empty());
  Approve(id);
  CommandResult watched = stack_->Cli({"failover", "watch", id, "--timeout", "90"}, "viewer", 100s);
  ASSERT_EQ(watched.exit_code, 0) << watched.out << watched.err << Failover(id).dump(2);
  // The writers now commit in eu-central-1; let them, then stop and compare.
  std::this_thread::sleep_for(2s);
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/workload", R"({"enabled":false})").status, 200);
  std::this_thread::sleep_for(1s);
  json commits = stack_->LabAdmin("GET", "/lab/commits").body;
  ASSERT_TRUE(commits.is_object()) << "the lab's commit log";
  int checked = 0, in_old_owner = 0;
  std::map<std::string, std::set<long long>> eu;
  for (const json& c : commits["commits"]) {
    const std::string table = c["table"];
    if (!before.count(table) || before.at(table).first != kLabUs) continue;
    if (!eu.count(table)) eu[table] = Snapshots(kLabEu, table);
    EXPECT_TRUE(eu[table].count(c["snapshot_id"].get<long long>()))
        << table << ": commit " << c["snapshot_id"] << " in " << c["region"]
        << " is not in the new owner";
    ++checked;
    in_old_owner += c["region"] == kLabUs;
  }
  EXPECT_GT(in_old_owner, 0) << "the workload wrote in the old owner before the switchover: "
                             << commits.dump().substr(0, 600);
  EXPECT_GT(checked, in_old_owner) << "and in the new owner after it";
  json report = stack_->Api("GET", "/api/v1/failovers/" + id + "/report", "", "viewer").body;
  EXPECT_EQ(report["lost_commits"], 0) << report.dump(2);
  EXPECT_EQ(report["demotion_token"]["state"], "succeeded");
  EXPECT_GT(report["demotion_token"]["tables"].get<int>(), 0);
  CommandResult text = stack_->Cli({"failover", "report", id}, "viewer");
  EXPECT_THAT(text.out, HasSubstr("0 commits lost: the target was at the demotion token"));
  EXPECT_THAT(text.out, HasSubstr("Demotion token"));
  EXPECT_EQ(stack_->Dig("writer.lake.lab", "CNAME"),
            std::vector<std::string>{"catalog.eu-central-1.lake.lab."});
  json state = stack_->LabAdmin("GET", "/lab/state").body;
  for (const json& r : state["regions"]) EXPECT_FALSE(r.value("writes_paused", true)) << r.dump();
}

class SwitchoverStuckE2eTest : public SwitchoverE2eTest {
 protected:
  SwitchoverStuckE2eTest() { options_.switchover_catch_up = "2s"; }
};

// A replica that never reaches the token stops the switchover before anything is promoted, and
// the fence is undone.
TEST_F(SwitchoverStuckE2eTest, AReplicaThatNeverCatchesUpStopsItBeforePromotion) {
  WaitUntilSettled();
  const auto before = Ownership();
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/replication/pause").status, 200);
  ASSERT_TRUE(NewCommitInTheOldOwner()) << "a commit that now waits in us-east-1";
  const std::string id = SwitchUsToEu();
  ASSERT_FALSE(id.empty());
  Approve(id);
  ASSERT_TRUE(Eventually([&] { return Phase(id) == "rolled_back"; }, 60s)) << Failover(id).dump(2);
  json token = Step(id, "demotion-token");
  EXPECT_EQ(token["state"], "failed");
  EXPECT_THAT(token.value("reason", ""), HasSubstr("did not reach the demotion token in "
                                                   "eu-central-1 within 2s"));
  EXPECT_THAT(token.value("reason", ""), HasSubstr("commits"));
  EXPECT_TRUE(Step(id, "transfer-ownership").is_null()) << "nothing was promoted";
  EXPECT_EQ(Ownership(), before);
  json state = stack_->LabAdmin("GET", "/lab/state").body;
  for (const json& r : state["regions"])
    EXPECT_FALSE(r.value("writes_paused", true)) << "the fence was compensated: " << r.dump();
}

class SwitchoverCrashE2eTest : public SwitchoverE2eTest {
 protected:
  SwitchoverCrashE2eTest() { options_.switchover_catch_up = "60s"; }
};

// SIGKILL between capturing the token and promoting: the restart resumes with the same token.
TEST_F(SwitchoverCrashE2eTest, KilledWhileWaitingForTheTokenResumesWithTheSameToken) {
  WaitUntilSettled();
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/replication/pause").status, 200);
  ASSERT_TRUE(NewCommitInTheOldOwner()) << "a commit that now waits in us-east-1";
  const std::string id = SwitchUsToEu();
  ASSERT_FALSE(id.empty());
  Approve(id);
  json captured;
  ASSERT_TRUE(Eventually(
      [&] {
        json s = Step(id, "demotion-token");
        if (!s.is_object() || s["state"] != "running") return false;
        captured = s["result"]["before"];
        return captured.is_object();
      },
      60s))
      << Failover(id).dump(2);
  stack_->KillServe(SIGKILL);
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/replication/resume").status, 200);
  ASSERT_EQ(stack_->RestartServe(), "");
  CommandResult watched = stack_->Cli({"failover", "watch", id, "--timeout", "90"}, "viewer", 100s);
  ASSERT_EQ(watched.exit_code, 0) << watched.out << watched.err << Failover(id).dump(2);
  json after = Step(id, "demotion-token");
  EXPECT_EQ(after["state"], "succeeded");
  EXPECT_EQ(after["result"]["before"], captured) << "the token journaled before the kill";
  json report = stack_->Api("GET", "/api/v1/failovers/" + id + "/report", "", "viewer").body;
  EXPECT_EQ(report["lost_commits"], 0);
}

// After a failover, the old owner writes again (the rogue writer): the split-brain watch fences
// it and pages through a real Alertmanager; ownership stays. Failing back onto it is refused
// while it holds those commits, and allowed only when the loss is accepted with a reason.
TEST_F(SwitchoverE2eTest, RogueWriterAfterAFailoverIsCaughtAndFailbackRefused) {
  WaitUntilSettled();
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/regions/us-east-1/stop").status, 200);
  ASSERT_TRUE(Eventually([&] { return Health(kLabUs) == "unreachable"; }, 30s));
  const std::string id = ProposeUsToEu();
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(
      stack_->Cli({"failover", "approve", id, "--reason", "down", "--yes"}, "approver").exit_code,
      0);
  CommandResult watched = stack_->Cli({"failover", "watch", id, "--timeout", "90"}, "viewer", 100s);
  ASSERT_EQ(watched.exit_code, 0) << watched.out << watched.err;
  const auto moved = Ownership();
  ASSERT_EQ(stack_->LabAdmin("POST", "/lab/regions/us-east-1/start").status, 200);
  ASSERT_TRUE(Eventually([&] { return Health(kLabUs) == "healthy"; }, 30s));
  // us-east-1's writers were never told: they keep writing.
  ASSERT_EQ(
      stack_->LabAdmin("POST", "/lab/rogue-writer", R"({"region":"us-east-1","enabled":true})")
          .status,
      200);
  ASSERT_TRUE(Eventually([&] { return Fenced(kLabUs); }, 30s))
      << "the split-brain watch fences the second writer\n"
      << stack_->Api("GET", "/api/v1/lag?region=us-east-1", "", "viewer").text << "\n"
      << std::ifstream(stack_->serve_log()).rdbuf();
  // It keeps writing while fenced: the same split brain, journaled as such (30 s after the
  // detection, then every 30 s). The operator who clears the overlay has seen those commits, so
  // they do not fence us-east-1 again.
  auto watch_journal = [&] {
    return stack_->Api("GET", "/api/v1/audit?target=split-brain:us-east-1&limit=100", "",
                       "operator");
  };
  ASSERT_TRUE(Eventually(
      [&] {
        for (const json& e : watch_journal().body.value("events", json::array()))
          if (e.value("action", "") == "split_brain.continued") return true;
        return false;
      },
      60s))
      << watch_journal().text;
  ASSERT_EQ(
      stack_->LabAdmin("POST", "/lab/rogue-writer", R"({"region":"us-east-1","enabled":false})")
          .status,
      200);
  // Lag rounds (and so the watch) must have seen its last commits before the overlay is
  // cleared: otherwise a commit first seen after the unfence is new evidence, and the watch
  // rightly fences again. The lab's disable returns after its last rogue commit, so the second
  // round to end after it began after it: that round has seen every rogue commit.
  const std::int64_t stopped = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
  auto round_end = [&] {
    return stack_->Api("GET", "/api/v1/lag?region=us-east-1", "", "viewer")
        .body.value("at_unix_ms", std::int64_t{0});
  };
  std::int64_t first_after = 0;
  ASSERT_TRUE(Eventually([&] { return (first_after = round_end()) > stopped; }, 30s));
  ASSERT_TRUE(Eventually([&] { return round_end() > first_after; }, 30s));
  HttpReply lag = stack_->Api("GET", "/api/v1/lag?region=us-east-1", "", "viewer");
  bool diverged = false;
  for (const json& t : lag.body.value("tables", json::array()))
    diverged = diverged || !t.value("divergent_snapshot_ids", json::array()).empty();
  ASSERT_TRUE(diverged) << lag.text;
  std::this_thread::sleep_for(1s);  // the watch acts on the round that showed them
  CommandResult status = stack_->Cli({"status"}, "viewer");
  EXPECT_THAT(status.out, HasSubstr("split brain: us-east-1 committed to"));
  ASSERT_TRUE(Eventually(
      [&] {
        for (const json& a : stack_->AlertmanagerAlerts())
          if (a["labels"].value("alertname", "") == "IcewardenSplitBrain" &&
              a["labels"].value("region", "") == kLabUs &&
              a["labels"].value("severity", "") == "critical")
            return true;
        return false;
      },
      20s))
      << stack_->AlertmanagerAlerts().dump(2);
  ASSERT_TRUE(Eventually(
      [&] {
        return stack_->Cli({"lag", "--region", kLabUs}, "viewer").out.find("SPLIT BRAIN") !=
               std::string::npos;
      },
      20s));
  EXPECT_EQ(Ownership(), moved) << "the watch never moves ownership";
  json report = stack_->Api("GET", "/api/v1/failovers/" + id + "/report", "", "viewer").body;
  ASSERT_FALSE(report["split_brain"].empty()) << report.dump(2);

  // Clearing the overlay is an operator's command with a reason.
  CommandResult unfenced = stack_->Cli(
      {"region", "unfence", kLabUs, "--reason", "rogue writers stopped", "--yes"}, "operator");
  ASSERT_EQ(unfenced.exit_code, 0) << unfenced.out << unfenced.err;
  ASSERT_EQ(
      stack_->Cli({"failover", "ack", id, "--comment", "us-east-1 is back", "--yes"}, "operator")
          .exit_code,
      0);  // lifts the failover's cooldown
  // Failing back now would give up the rogue commits: refused, naming them.
  CommandResult refused = stack_->Cli(
      {"failback", "--scope", "owner:us-east-1", "--reason", "us-east-1 is back", "--yes"},
      "operator");
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_THAT(refused.err,
              HasSubstr("tables hold commits in us-east-1 that eu-central-1 never had"));
  EXPECT_THAT(refused.err, HasSubstr("reconcile them by hand"));
  EXPECT_THAT(refused.err, HasSubstr("accept_data_loss"));
  // Accepted by the proposer, and again by an approver: then it may go on.
  CommandResult proposed =
      stack_->Cli({"failback", "--scope", "owner:us-east-1", "--reason", "us-east-1 is back",
                   "--accept-data-loss", "the rogue commits were a test", "--yes", "--id-only"},
                  "operator");
  ASSERT_EQ(proposed.exit_code, 0) << proposed.out << proposed.err;
  const std::string back = proposed.out.substr(0, proposed.out.find('\n'));
  json f = Failover(back);
  EXPECT_EQ(f["kind"], "switchover");
  EXPECT_EQ(f["to"], kLabUs);
  EXPECT_EQ(f["scope"], "failover:" + id);
  CommandResult not_accepted =
      stack_->Cli({"failover", "approve", back, "--reason", "ok", "--yes"}, "approver");
  EXPECT_EQ(not_accepted.exit_code, 1);
  EXPECT_THAT(not_accepted.err, HasSubstr("divergence"));
  CommandResult accepted =
      stack_->Cli({"failover", "approve", back, "--reason", "ok", "--accept-data-loss",
                   "the rogue commits were a test", "--yes"},
                  "approver");
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out << accepted.err;
  EXPECT_EQ(Failover(back)["accept_data_loss"], "the rogue commits were a test");
  // Accepting the loss does not make us-east-1's copies the owner's: the demotion-token wait
  // still promotes only a target at exactly eu-central-1's snapshots, so this one stops before
  // promotion and rolls back.
  ASSERT_TRUE(Eventually([&] { return Phase(back) == "rolled_back"; }, 60s))
      << stack_->Cli({"failover", "show", back}, "viewer").out;  // phase, hold, steps: short
  EXPECT_EQ(Step(back, "demotion-token")["state"], "failed");
  EXPECT_TRUE(Step(back, "transfer-ownership").is_null());
  EXPECT_EQ(Ownership(), moved);

  // Reconciled by hand (the lab re-seeds us-east-1's copies from eu-central-1), the failback
  // needs no waiver and loses nothing.
  HttpReply rewound = stack_->LabAdmin("POST", "/lab/regions/us-east-1/rewind");
  ASSERT_EQ(rewound.status, 200) << rewound.text;
  EXPECT_FALSE(rewound.body["rewound"].empty()) << rewound.text;
  ASSERT_TRUE(Eventually(
      [&] {
        HttpReply lag = stack_->Api("GET", "/api/v1/lag?region=us-east-1", "", "viewer");
        if (lag.status != 200) return false;
        for (const json& t : lag.body.value("tables", json::array()))
          if (t.value("diverged", true)) return false;
        return true;
      },
      30s));
  ASSERT_EQ(stack_->Cli({"failover", "ack", back, "--comment", "reconciled", "--yes"}, "operator")
                .exit_code,
            0);
  CommandResult again = stack_->Cli(
      {"failback", "--scope", "owner:us-east-1", "--reason", "reconciled", "--yes", "--id-only"},
      "operator");
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  const std::string home = again.out.substr(0, again.out.find('\n'));
  Approve(home);
  CommandResult done = stack_->Cli({"failover", "watch", home, "--timeout", "90"}, "viewer", 100s);
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err << Failover(home).dump(2);
  json report_back = stack_->Api("GET", "/api/v1/failovers/" + home + "/report", "", "viewer").body;
  EXPECT_EQ(report_back["lost_commits"], 0);
  EXPECT_EQ(stack_->Dig("writer.lake.lab", "CNAME"),
            std::vector<std::string>{"catalog.us-east-1.lake.lab."});
  for (const auto& [table, owner_epoch] : Ownership()) {
    if (moved.at(table).second > 1) {
      EXPECT_EQ(owner_epoch.first, kLabUs) << table;
    }
  }
}

}  // namespace
}  // namespace icewarden::testing
