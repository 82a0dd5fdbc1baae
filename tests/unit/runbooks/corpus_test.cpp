// The corpus of broken runbooks (tests/unit/runbooks/corpus/*.yaml): each file opens with
// one "# expect: LINE:COL: message-substring" line per error the parser must report, in
// file order, and the parser must report exactly those.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runbooks/runbook_parser.h"
#include "tests/fakes/fake_action.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

struct Expected {
  int line = 0;
  int column = 0;
  std::string substring;
};

std::vector<Expected> ExpectationsOf(const std::string& path) {
  std::ifstream in(path);
  std::vector<Expected> out;
  std::string text;
  const std::string prefix = "# expect: ";
  while (std::getline(in, text) && text.rfind(prefix, 0) == 0) {
    std::istringstream rest(text.substr(prefix.size()));
    Expected e;
    char colon = 0;
    rest >> e.line >> colon >> e.column >> colon;
    std::getline(rest, e.substring);
    if (!e.substring.empty() && e.substring[0] == ' ') e.substring.erase(0, 1);
    out.push_back(e);
  }
  return out;
}

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  auto dir = std::filesystem::path(testing::SourceDir()) / "tests/unit/runbooks/corpus";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(RunbookCorpusTest, EveryBrokenRunbookReportsExactlyItsExpectedErrors) {
  ActionRegistry registry = testing::FakeBuiltinRegistry();
  auto files = CorpusFiles();
  ASSERT_GE(files.size(), 15u);
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    auto expected = ExpectationsOf(file);
    ASSERT_FALSE(expected.empty()) << "a corpus file opens with '# expect: LINE:COL: text'";
    RunbookLoad load = LoadRunbook(file, registry);
    EXPECT_FALSE(load.runbook.has_value()) << "nothing half-parsed is returned";
    std::string all;
    for (const auto& e : load.errors) all += e.ToString() + "\n";
    ASSERT_EQ(load.errors.size(), expected.size()) << all;
    for (size_t i = 0; i < expected.size(); ++i) {
      const RunbookError& got = load.errors[i];
      EXPECT_EQ(got.pos.file, file);
      EXPECT_EQ(got.pos.line, expected[i].line) << got.ToString();
      EXPECT_EQ(got.pos.column, expected[i].column) << got.ToString();
      EXPECT_NE(got.message.find(expected[i].substring), std::string::npos)
          << "expected '" << expected[i].substring << "' in " << got.ToString();
    }
  }
}

}  // namespace
}  // namespace icewarden
