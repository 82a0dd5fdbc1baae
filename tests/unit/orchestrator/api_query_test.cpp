#include "orchestrator/api/query.h"

#include <gtest/gtest.h>

namespace icewarden {
namespace {

TEST(SplitRequestTargetTest, SplitsAtTheFirstQuestionMark) {
  auto t = SplitRequestTarget("/a/b?x=1?2");
  EXPECT_EQ(t.path, "/a/b");
  EXPECT_EQ(t.query, "x=1?2");
  EXPECT_EQ(SplitRequestTarget("/a").query, "");
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
