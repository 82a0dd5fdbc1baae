// The example systemd units (examples/ha/*.service) as systemd reads them: no unknown key or
// bad value (systemd only warns about those and starts the unit anyway), Type=notify with a
// watchdog, and an ExecStart whose flags the binary has.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using testing::IcewardenBinary;
using testing::RunCommand;

std::string Read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::filesystem::path> Units() {
  std::vector<std::filesystem::path> units;
  for (const auto& e : std::filesystem::directory_iterator(testing::SourceDir() + "/examples/ha"))
    if (e.path().extension() == ".service") units.push_back(e.path());
  std::sort(units.begin(), units.end());
  return units;
}

TEST(SystemdUnitsTest, EveryExampleUnitVerifiesCleanAndIsANotifyServiceWithAWatchdog) {
  const auto units = Units();
  ASSERT_GE(units.size(), 2u) << "expected the daemon's and the gateway's units";
  const std::string dir = testing::MakeTempDir("icewarden-units");
  for (const auto& unit : units) {
    SCOPED_TRACE(unit.filename().string());
    std::string text = Read(unit);
    EXPECT_NE(text.find("\nType=notify\n"), std::string::npos);
    EXPECT_NE(text.find("\nWatchdogSec="), std::string::npos);
    EXPECT_NE(text.find("\nNoNewPrivileges=true\n"), std::string::npos);
    EXPECT_NE(text.find("\nProtectSystem=strict\n"), std::string::npos);
    // verify checks that ExecStart's program exists: point it at the one just built.
    text = std::regex_replace(text, std::regex("/usr/local/bin/icewarden"), IcewardenBinary());
    // EnvironmentFile= is read at start, not by verify; nothing else refers to the host.
    const std::string copy = dir + "/" + unit.filename().string();
    std::ofstream(copy) << text;
    auto r = RunCommand({"/usr/bin/systemd-analyze", "verify", copy});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // systemd starts a unit with unknown keys, ignoring them: a typo in a hardening line
    // would silently turn it off. Any word from verify about the file is a failure here.
    EXPECT_EQ(r.err.find(unit.filename().string()), std::string::npos) << r.err;
  }
  std::filesystem::remove_all(dir);
}

TEST(SystemdUnitsTest, ExecStartUsesOnlyFlagsTheCommandHas) {
  for (const auto& unit : Units()) {
    SCOPED_TRACE(unit.filename().string());
    const std::string text = Read(unit);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        text, m, std::regex("\nExecStart=/usr/local/bin/icewarden ([a-z]+)([^\n]*)")));
    const std::string command = m[1];
    auto help = RunCommand({IcewardenBinary(), command, "--help"});
    ASSERT_EQ(help.exit_code, 0) << help.err;
    const std::string flags = m[2];
    int checked = 0;
    const std::regex flag("--[a-z-]+");
    for (std::sregex_iterator it(flags.begin(), flags.end(), flag), end; it != end; ++it, ++checked)
      EXPECT_NE(help.out.find(it->str()), std::string::npos)
          << "`icewarden " << command << "` has no " << it->str();
    EXPECT_GE(checked, 2);
  }
}

}  // namespace
}  // namespace icewarden
