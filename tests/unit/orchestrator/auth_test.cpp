#include "orchestrator/api/auth.h"

#include <gtest/gtest.h>

#include "state/digest.h"

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

TEST(TokenVerifierTest, ATokenGivenAsItsHashMatchesTheTokenNotTheHash) {
  // `printf %s s3cret | sha256sum`, as an operator would write it into the config.
  const std::string hash = "1ec1c26b50d5d3c58d9583181af8076655fe00756bf7285940ba3670f99fcba0";
  EXPECT_EQ(Sha256Hex("s3cret"), hash);
  TokenVerifier v({ApiToken{"ci", Role::kOperator, Secret(), hash},
                   ApiToken{"other", Role::kViewer, Secret("plain")}});
  auto p = v.Verify("s3cret");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->name, "ci");
  EXPECT_EQ(p->role, Role::kOperator);
  EXPECT_EQ(v.Verify("plain")->name, "other");
  EXPECT_FALSE(v.Verify(hash)) << "the hash itself is not a credential";
  EXPECT_FALSE(v.Verify("s3cret2"));
  EXPECT_FALSE(v.Verify(""));
}

TEST(TokenVerifierTest, EmptySecretNeverMatches) {
  TokenVerifier v({ApiToken{"blank", Role::kAdmin, Secret("")}});
  EXPECT_FALSE(v.Verify(""));
}

}  // namespace
}  // namespace icewarden
