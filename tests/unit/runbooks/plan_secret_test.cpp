// Regression: the plan line of a step with a templated secret was computed on the masked
// params, so an action that checks the secret's form (dns.rfc2136's base64 TSIG secret) said
// "invalid params" in every plan, even with a valid secret.
#include <gtest/gtest.h>

#include "actions/action.h"
#include "runbooks/plan.h"
#include "runbooks/runbook_parser.h"

namespace icewarden {
namespace {

TEST(PlanSecretTest, PlanLineOfATemplatedTsigSecretIsValidAndMasked) {
  ActionRegistry registry;
  ASSERT_TRUE(registerBuiltinActions(registry, ActionEnv{}).ok());
  RunbookLoad load = ParseRunbook(R"(name: dns
fence: []
promote:
  - id: dns
    action: dns.rfc2136
    params:
      server: 127.0.0.1:53
      zone: lake.lab.
      tsig_key_name: k
      tsig_algorithm: hmac-sha256
      tsig_secret: ${env.SECRET}
      records:
        - name: writer.lake.lab.
          type: CNAME
          value: catalog.${to}.lake.lab.
          ttl: 5
          op: replace
)",
                                  "rb.yaml", registry);
  ASSERT_TRUE(load.ok()) << load.errors.front().ToString();
  TemplateBindings b;
  b.from = "us-east-1";
  b.to = "eu-central-1";
  b.scope = "owner:us-east-1";
  const std::string secret = "aWNld2FyZGVuLXNlY3JldC0xMjM=";
  b.env = [&](const std::string& name) -> std::optional<std::string> {
    if (name == "SECRET") return secret;
    return std::nullopt;
  };
  auto plan = PlanRunbook(*load.runbook, registry, b);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const std::string& line = plan->entries.at(0).plan_line;
  EXPECT_EQ(line.find("invalid"), std::string::npos) << line;
  EXPECT_EQ(line.find(secret), std::string::npos) << line;
  EXPECT_NE(line.find("writer.lake.lab."), std::string::npos) << line;
  EXPECT_EQ(plan->entries.at(0).params["tsig_secret"], "***");
}

}  // namespace
}  // namespace icewarden
