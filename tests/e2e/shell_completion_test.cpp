// `icewarden completion bash|zsh` as a user installs it: the script the binary prints is
// sourced by the real bash and zsh, and asked what follows the words typed so far. The
// answers come from the same CLI11 tree the binary parses, so a renamed subcommand or option
// shows up here.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using testing::IcewardenBinary;
using testing::RunCommand;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  std::sort(out.begin(), out.end());
  return out;
}

class ShellCompletionTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const auto printed = RunCommand({IcewardenBinary(), "completion", Shell()});
    ASSERT_EQ(printed.exit_code, 0) << printed.err;
    script_ = testing::MakeTempDir("icewarden-completion") + "/icewarden." + Shell();
    std::ofstream(script_) << printed.out;
  }

  std::string Shell() const { return GetParam(); }
  std::string Program() const { return Shell() == "bash" ? "/usr/bin/bash" : "/usr/bin/zsh"; }

  // What the script's candidate function answers for `words` (the last is being typed).
  std::vector<std::string> Complete(const std::string& words) {
    const std::string flags = Shell() == "bash" ? "--norc" : "-f";
    const auto r = RunCommand(
        {Program(), flags, "-c", "source " + script_ + " && _icewarden_candidates " + words});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return Lines(r.out);
  }

  std::string script_;
};

using Words = std::vector<std::string>;

TEST_P(ShellCompletionTest, SubcommandsAtEveryLevel) {
  const auto top = Complete("icewarden ''");
  for (const char* cmd : {"serve", "gateway", "failover", "switchover", "failback", "pause",
                          "resume", "drill", "audit", "completion"})
    EXPECT_NE(std::find(top.begin(), top.end(), cmd), top.end()) << cmd;
  EXPECT_EQ(Complete("icewarden fail"), (Words{"failback", "failover"}));
  EXPECT_EQ(Complete("icewarden failover a"), (Words{"abort", "ack", "approve"}));
  EXPECT_EQ(Complete("icewarden region ''"), (Words{"fence", "unfence"}));
}

TEST_P(ShellCompletionTest, OptionsOfTheCommandTyped) {
  const auto opts = Complete("icewarden failover approve --");
  for (const char* o : {"--server", "--token", "--token-file", "--output", "--help"})
    EXPECT_NE(std::find(opts.begin(), opts.end(), o), opts.end()) << o;
  EXPECT_EQ(Complete("icewarden pause --re"), (Words{"--reason"}));
  // The root's own flags are not offered below it.
  EXPECT_EQ(Complete("icewarden pause --ver"), Words{});
  EXPECT_EQ(Complete("icewarden --ver"), (Words{"--version"}));
}

TEST_P(ShellCompletionTest, AnOptionsValueIsItsChoicesOrAFile) {
  EXPECT_EQ(Complete("icewarden status --output ''"), (Words{"json", "table"}));
  EXPECT_EQ(Complete("icewarden status -o j"), (Words{"json"}));
  EXPECT_EQ(Complete("icewarden serve --config ''"), (Words{"__icewarden_files__"}));
  EXPECT_EQ(Complete("icewarden serve --log-format ''"), (Words{"json", "text"}));
  // A positional argument (the config file) is a file too; options when "-" is typed.
  EXPECT_EQ(Complete("icewarden config validate ''"), (Words{"__icewarden_files__"}));
  EXPECT_EQ(Complete("icewarden config validate --st"), (Words{"--strict"}));
  // A value already given is skipped: what follows is options again, not the value's choices.
  EXPECT_EQ(Complete("icewarden status --output json --ser"), (Words{"--server"}));
  EXPECT_EQ(Complete("icewarden status --output=json --ser"), (Words{"--server"}));
}

TEST_P(ShellCompletionTest, TheShellsOwnMachineryCallsIt) {
  if (Shell() == "bash") {
    const auto r =
        RunCommand({Program(), "--norc", "-c",
                    "source " + script_ +
                        " && COMP_WORDS=(icewarden failover app) COMP_CWORD=2 && _icewarden && "
                        "printf '%s\\n' \"${COMPREPLY[@]}\" && complete -p icewarden"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "approve\ncomplete -o default -F _icewarden icewarden\n");
  } else {
    // Installed the zsh way (the file _icewarden in fpath, then compinit), in an interactive
    // zsh on a pseudo-terminal (zsh/zpty): a Tab after "app" completes the word to approve.
    const std::string dir = testing::MakeTempDir("icewarden-zfp");
    std::filesystem::copy_file(script_, dir + "/_icewarden");
    const std::string driver =
        "zmodload zsh/zpty && zpty -b z 'zsh -f -i' && "
        "zpty -w z \"PS1='ready> '; fpath=(" +
        dir +
        " \\$fpath); autoload -U compinit; "
        "compinit -u -D; icewarden() { :; }\" && "
        "zpty -r z out '*ready> *' && "
        "zpty -w -n z $'icewarden failover app\\t' && "
        "zpty -r z out '*failover approve*' && print -r -- completed; zpty -d z";
    const auto r = RunCommand({Program(), "-f", "-c", driver}, {}, std::chrono::seconds(20));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "completed\n") << r.err;
    // Sourced after compinit, the script registers itself for the command.
    const auto sourced = RunCommand({Program(), "-f", "-c",
                                     "autoload -U compinit && compinit -u -D && source " + script_ +
                                         " && print -r -- ${_comps[icewarden]}"});
    ASSERT_EQ(sourced.exit_code, 0) << sourced.err;
    EXPECT_EQ(sourced.out, "_icewarden\n");
  }
}

TEST(ShellCompletionCliTest, AnotherShellIsAUsageError) {
  const auto r = RunCommand({IcewardenBinary(), "completion", "fish"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("fish"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

INSTANTIATE_TEST_SUITE_P(Shells, ShellCompletionTest, ::testing::Values("bash", "zsh"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace icewarden
