// The test harness's Subprocess: a program that cannot be started says so on stderr, so an
// end-to-end test that fails with "did not start" shows why.
#include "tests/fakes/subprocess.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace icewarden::testing {
namespace {

using ::testing::HasSubstr;

TEST(SubprocessTest, AProgramThatCannotBeStartedSaysWhyOnStderr) {
  CommandResult r = RunCommand({"/nonexistent/icewarden-binary", "serve"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_THAT(r.err, HasSubstr("subprocess: cannot exec /nonexistent/icewarden-binary (errno 2)"));
}

TEST(SubprocessTest, RunsAProgramAndCollectsItsOutput) {
  CommandResult r = RunCommand({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

}  // namespace
}  // namespace icewarden::testing
