#include "orchestrator/auth.h"

#include <gtest/gtest.h>

#include "orchestrator/api_query.h"

namespace icewarden {
namespace {

TEST(RoleAllowsTest, ViewerReadsEverythingButTheAuditLog) {
  EXPECT_TRUE(RoleAllows(Role::kViewer, Permission::kReadRegions));
  EXPECT_TRUE(RoleAllows(Role::kViewer, Permission::kReadOwnership));
  EXPECT_TRUE(RoleAllows(Role::kViewer, Permission::kReadFailovers));
  EXPECT_FALSE(RoleAllows(Role::kViewer, Permission::kReadAudit));
  EXPECT_FALSE(RoleAllows(Role::kViewer, Permission::kProposeFailover));
}

TEST(RoleAllowsTest, OperatorProposesAndAbortsApproverApprovesAdminDoesAll) {
  EXPECT_TRUE(RoleAllows(Role::kOperator, Permission::kProposeFailover));
  EXPECT_TRUE(RoleAllows(Role::kOperator, Permission::kAbortFailover));
  EXPECT_FALSE(RoleAllows(Role::kOperator, Permission::kApproveFailover));
  EXPECT_TRUE(RoleAllows(Role::kApprover, Permission::kApproveFailover));
  EXPECT_FALSE(RoleAllows(Role::kApprover, Permission::kProposeFailover));
  for (Permission p :
       {Permission::kReadRegions, Permission::kReadOwnership, Permission::kReadFailovers,
        Permission::kReadAudit, Permission::kProposeFailover, Permission::kApproveFailover,
        Permission::kAbortFailover})
    EXPECT_TRUE(RoleAllows(Role::kAdmin, p)) << PermissionName(p);
  EXPECT_EQ(RolesAllowedTo(Permission::kReadAudit), "operator, approver or admin");
  EXPECT_EQ(RolesAllowedTo(Permission::kApproveFailover), "approver or admin");
}

TEST(BearerTokenTest, ParsesTheSchemeCaseInsensitively) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("bearer   abc  "), "abc");
  EXPECT_EQ(BearerToken("BEARER abc"), "abc");
  EXPECT_FALSE(BearerToken("Bearer"));
  EXPECT_FALSE(BearerToken("Bearer "));
  EXPECT_FALSE(BearerToken("Bearerabc"));
  EXPECT_FALSE(BearerToken("Basic abc"));
  EXPECT_FALSE(BearerToken("Bearer a b"));
}

TEST(TokenVerifierTest, MatchesOnlyTheExactSecret) {
  TokenVerifier v({ApiToken{"vera", Role::kViewer, Secret("s3cret")},
                   ApiToken{"root", Role::kAdmin, Secret("other")}});
  auto p = v.Verify("other");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->name, "root");
  EXPECT_EQ(p->role, Role::kAdmin);
  EXPECT_FALSE(v.Verify("s3cre"));
  EXPECT_FALSE(v.Verify("s3cret "));
  EXPECT_FALSE(v.Verify(""));
}

TEST(TokenVerifierTest, EmptySecretNeverMatches) {
  TokenVerifier v({ApiToken{"blank", Role::kAdmin, Secret("")}});
  EXPECT_FALSE(v.Verify(""));
}

TEST(QueryParamsTest, DecodesAndSplits) {
  auto q = QueryParams::Parse("owner=us%2Deast-1&target=a+b&&flag");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->Get("owner"), "us-east-1");
  EXPECT_EQ(q->Get("target"), "a b");
  EXPECT_EQ(q->Get("flag"), "");
  EXPECT_FALSE(q->Get("missing"));
  EXPECT_TRUE(q->OnlyAllowed({"owner", "target", "flag"}).ok());
  EXPECT_FALSE(q->OnlyAllowed({"owner"}).ok());
}

TEST(QueryParamsTest, RejectsBadEscapesDuplicatesAndTooMany) {
  EXPECT_FALSE(QueryParams::Parse("a=%4").ok());
  EXPECT_FALSE(QueryParams::Parse("a=%g1").ok());
  EXPECT_FALSE(QueryParams::Parse("a=%00").ok());
  EXPECT_FALSE(QueryParams::Parse("a=1&a=1").ok());
  std::string many;
  for (int i = 0; i <= static_cast<int>(QueryParams::kMaxParams); ++i)
    many += "p" + std::to_string(i) + "=1&";
  EXPECT_FALSE(QueryParams::Parse(many).ok());
}

TEST(QueryParamsTest, IntegerIsRangeChecked) {
  auto q = QueryParams::Parse("limit=42&bad=4x");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q->Integer("limit", 7, 1, 100), 42);
  EXPECT_EQ(*q->Integer("absent", 7, 1, 100), 7);
  EXPECT_FALSE(q->Integer("limit", 7, 1, 10).ok());
  auto bad = q->Integer("bad", 7, 1, 100);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "bad must be an integer from 1 to 100, got '4x'");
}

}  // namespace
}  // namespace icewarden
