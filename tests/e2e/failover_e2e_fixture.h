// FailoverE2eTest: a LabStackTest (tests/e2e/lab_stack.h) with what failover tests ask of the
// stack: ownership and health as the API says, waiting until a lag round compared the regions,
// proposing as the operator, reading a failover.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/e2e/lab_stack.h"

namespace icewarden::testing {

using namespace std::chrono_literals;  // the tests' 30s limits

class FailoverE2eTest : public LabStackTest {
 protected:
  using json = nlohmann::json;
  // Every table and its epoch, as the store says.
  std::map<std::string, std::pair<std::string, long long>> Ownership() {
    std::map<std::string, std::pair<std::string, long long>> out;
    std::string after;
    for (;;) {
      HttpReply r = stack_->Api(
          "GET", "/api/v1/ownership?limit=10000" + (after.empty() ? "" : "&after=" + after));
      if (r.status != 200) return out;
      for (const json& t : r.body["tables"])
        out[t["table"]] = {t["owner"], t["epoch"].get<long long>()};
      if (r.body["next_after"].is_null()) return out;
      after = r.body["next_after"];
    }
  }

  // Whether the region's `fenced` overlay is set, as the API says (the split-brain watch sets it).
  bool Fenced(const std::string& region) {
    HttpReply r = stack_->Api("GET", "/api/v1/regions", "", "viewer");
    for (const json& x : r.body.value("regions", json::array()))
      if (x["name"] == region) return x.value("fenced", false);
    return false;
  }

  std::string Health(const std::string& region) {
    HttpReply r = stack_->Api("GET", "/api/v1/regions", "", "viewer");
    if (r.status != 200) return "";
    for (const json& x : r.body["regions"])
      if (x["name"] == region) return x["health"];
    return "";
  }

  // Waits until both regions are healthy, every table is owned and a lag round has compared
  // them.
  void WaitUntilSettled() {
    ASSERT_TRUE(Eventually(
        [&] { return Health(kLabUs) == "healthy" && Health(kLabEu) == "healthy"; }, 30s));
    ASSERT_TRUE(Eventually([&] { return Ownership().size() >= 4; }, 30s));
    // Every us-east-1 table compared in eu-central-1 by a lag round: the RPO guard needs it.
    ASSERT_TRUE(Eventually(
        [&] {
          int us = 0;
          for (const auto& [table, owner_epoch] : Ownership()) us += owner_epoch.first == kLabUs;
          HttpReply r = stack_->Api("GET", "/api/v1/lag?region=eu-central-1", "", "viewer");
          if (r.status != 200 || us == 0) return false;
          int compared = 0;
          for (const json& t : r.body.value("tables", json::array()))
            compared += t.value("owner", "") == kLabUs && t.value("replica", "") == kLabEu &&
                        (t.value("state", "") == "behind" || t.value("state", "") == "caught_up");
          return compared >= us;
        },
        30s));
  }

  // `failover propose ... --yes --id-only` as the operator; the id.
  std::string ProposeUsToEu(const std::string& role = "operator") {
    CommandResult r =
        stack_->Cli({"failover", "propose", "--to", kLabEu, "--scope", "owner:us-east-1",
                     "--reason", "us-east-1 catalog down", "--yes", "--id-only"},
                    role);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    std::string id = r.out.substr(0, r.out.find('\n'));
    EXPECT_EQ(id.rfind("fo-", 0), 0u) << r.out << r.err;
    return id.rfind("fo-", 0) == 0 ? id : "";
  }

  json Failover(const std::string& id) {
    return stack_->Api("GET", "/api/v1/failovers/" + id, "", "viewer").body;
  }

  std::string Phase(const std::string& id) {
    json f = Failover(id);
    return f.is_object() ? f.value("phase", "") : "";
  }
};

}  // namespace icewarden::testing
