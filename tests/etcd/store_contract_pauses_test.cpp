// The pause contract for both backends (store_contract_fixture.h): a pause per scope, replaced
// by a second pause of the same scope, lifted once, kept across a restart, each change audited
// in its own transaction; a read-only store reads pauses and refuses to change them.
#include "state/pause_store.h"
#include "tests/etcd/store_contract_fixture.h"

namespace icewarden::testing {
namespace {

Pause MakePause(std::string scope, std::string reason, UnixMillis since, UnixMillis until = 0) {
  return {std::move(scope), "otto", std::move(reason), since, until};
}

TEST_P(StoreContractTest, PausesAreOnePerScopeReplacedLiftedOnceAndAudited) {
  PauseStore* pauses = PauseStoreOf(*store_);
  ASSERT_NE(pauses, nullptr) << "both backends keep pauses";
  const std::int64_t seq_before = *store_->LastAuditSeq();
  ASSERT_TRUE(pauses
                  ->PutPause(MakePause("region:eu", "maintenance", 1000, 8200000),
                             Why("automation.pause", "region:eu"))
                  .ok());
  ASSERT_TRUE(
      pauses->PutPause(MakePause("all", "incident 42", 2000), Why("automation.pause", "all")).ok());
  // The same scope again replaces its pause: a new reason, a new expected end.
  ASSERT_TRUE(pauses
                  ->PutPause(MakePause("region:eu", "maintenance, longer", 3000, 9000000),
                             Why("automation.pause", "region:eu"))
                  .ok());
  auto listed = pauses->ListPauses();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].scope, "all");
  EXPECT_EQ((*listed)[1].scope, "region:eu");
  EXPECT_EQ((*listed)[1].reason, "maintenance, longer");
  EXPECT_EQ((*listed)[1].since, 3000);
  EXPECT_EQ((*listed)[1].expected_end, 9000000);
  EXPECT_EQ((*listed)[1].by, "otto");
  EXPECT_EQ(*store_->LastAuditSeq(), seq_before + 3);

  Reopen();
  pauses = PauseStoreOf(*store_);
  ASSERT_EQ(pauses->ListPauses()->size(), 2u) << "pauses survive a restart";
  ASSERT_TRUE(pauses->DeletePause("all", Why("automation.resume", "all")).ok());
  // A second resume finds nothing and writes nothing, not even an audit event.
  const std::int64_t seq_after = *store_->LastAuditSeq();
  EXPECT_EQ(pauses->DeletePause("all", Why("automation.resume", "all")).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(*store_->LastAuditSeq(), seq_after);
  listed = pauses->ListPauses();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].scope, "region:eu");
  const auto audit = AllAudit();
  ASSERT_FALSE(audit.empty());
  EXPECT_EQ(audit.back().action, "automation.resume");
}

TEST_P(StoreContractTest, APauseNeedsAScopeAndAReasonAndAReadOnlyStoreRefusesOne) {
  PauseStore* pauses = PauseStoreOf(*store_);
  ASSERT_NE(pauses, nullptr);
  EXPECT_EQ(pauses->PutPause(MakePause("", "why", 1), Why("automation.pause", "")).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(pauses->PutPause(MakePause("all", "", 1), Why("automation.pause", "all")).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(pauses->PutPause(MakePause("all", "why", 1), Why("automation.pause", "all")).ok());
  auto ro = Open(/*read_only=*/true);
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  PauseStore* read = PauseStoreOf(**ro);
  ASSERT_NE(read, nullptr);
  ASSERT_EQ(read->ListPauses()->size(), 1u);
  EXPECT_EQ(
      read->PutPause(MakePause("drill:weekly", "why", 1), Why("automation.pause", "d")).code(),
      StatusCode::kFailedPrecondition);
  EXPECT_EQ(read->DeletePause("all", Why("automation.resume", "all")).code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace icewarden::testing
