// The lab's admin commands as README.md ("Injecting faults by hand") and docs/lab.md ("Admin
// API") print them, run verbatim through /bin/sh against the real icewarden-lab executable.
// Regression: `curl -X POST $A/lab/regions/us-east-1/stop` (no body, so no Content-Length)
// was answered {"error": "no route for POST ..."}; only `curl -X POST -d ''` worked.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using nlohmann::json;
using testing::RunCommand;
using testing::Subprocess;

// The address the documents use for the admin API, i.e. the lab's default --admin.
constexpr char kDocumentedAdmin[] = "A=http://127.0.0.1:18180";

struct DocumentedCommands {
  bool found_heading = false;
  bool defines_admin = false;              // the block sets A as kDocumentedAdmin
  std::vector<std::string> commands;       // curl lines, in order
  std::vector<std::string> unknown_lines;  // anything else the test would not run
};

// Every line of the ```sh blocks between the `heading` line and the next heading.
DocumentedCommands ReadSection(const std::string& path, const std::string& heading) {
  DocumentedCommands out;
  std::ifstream in(path);
  std::string line;
  bool in_section = false, in_sh = false;
  while (std::getline(in, line)) {
    if (!in_sh && line.rfind("#", 0) == 0) {
      if (in_section) break;
      in_section = line == heading;
      out.found_heading |= in_section;
      continue;
    }
    if (!in_section) continue;
    if (line.rfind("```", 0) == 0) {
      in_sh = !in_sh && line == "```sh";
      continue;
    }
    if (!in_sh || line.empty() || line.rfind("#", 0) == 0) continue;
    if (line == kDocumentedAdmin) {
      out.defines_admin = true;
    } else if (line.rfind("curl ", 0) == 0) {
      out.commands.push_back(line);
    } else {
      out.unknown_lines.push_back(line);
    }
  }
  return out;
}

class LabDocsCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("icewarden-lab-docs");
    lab_ = std::make_unique<Subprocess>(std::vector<std::string>{
        ICEWARDEN_LAB_BINARY, "--data", dir_ + "/catalogs", "--admin", "127.0.0.1:0", "--region",
        "us-east-1=127.0.0.1:0", "--region", "eu-central-1=127.0.0.1:0", "--default-owner",
        "us-east-1", "--owner", "eu[.].*=eu-central-1", "--replication-lag-ms", "100",
        "--workload-interval-ms", "200"});
    for (;;) {
      auto line = lab_->ReadLine(std::chrono::seconds(20));
      ASSERT_TRUE(line.has_value()) << "the lab did not start";
      if (line->rfind("lab: admin ", 0) == 0) admin_ = line->substr(line->find("http://"));
      if (*line == "lab: ready") break;
    }
    ASSERT_FALSE(admin_.empty());
    // curl reads $CURL_HOME/.curlrc: every command also reports its HTTP status on stderr
    // (stdout may go through a pipe), and none may hang the test.
    std::ofstream(dir_ + "/.curlrc")
        << "write-out = \"%{stderr}curl-http-status=%{http_code}\\n\"\n"
        << "max-time = 20\n";
  }

  void TearDown() override {
    lab_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Runs each command as printed, with $A the lab's admin address; each must exit 0 and get
  // a 2xx answer, and, unless piped into another program, a JSON object that is no error.
  void RunAsPrinted(const std::string& document, const std::string& heading, size_t at_least) {
    const std::string path = testing::SourceDir() + "/" + document;
    DocumentedCommands doc = ReadSection(path, heading);
    ASSERT_TRUE(doc.found_heading) << path << " has no line '" << heading << "'";
    EXPECT_TRUE(doc.defines_admin) << path << ": the block no longer sets " << kDocumentedAdmin;
    EXPECT_TRUE(doc.unknown_lines.empty()) << path << ": lines this test does not know how to run: "
                                           << ::testing::PrintToString(doc.unknown_lines);
    ASSERT_GE(doc.commands.size(), at_least) << path << ": fewer curl commands than expected";
    const std::regex status(R"(curl-http-status=(\d{3}))");
    for (const std::string& command : doc.commands) {
      auto r = RunCommand({"/bin/sh", "-c", command},
                          {{"A", admin_}, {"CURL_HOME", dir_}, {"HOME", dir_}},
                          std::chrono::seconds(30));
      SCOPED_TRACE(document + ": " + command + "\nstdout: " + r.out + "\nstderr: " + r.err);
      EXPECT_EQ(r.exit_code, 0);
      std::smatch m;
      ASSERT_TRUE(std::regex_search(r.err, m, status)) << "curl reported no status";
      EXPECT_EQ(m[1].str()[0], '2') << "HTTP " << m[1];
      if (command.find('|') != std::string::npos) {
        EXPECT_FALSE(r.out.empty());
        continue;
      }
      json body = json::parse(r.out, nullptr, false);
      ASSERT_TRUE(body.is_object()) << "not a JSON object";
      EXPECT_FALSE(body.contains("error"));
    }
  }

  std::string dir_, admin_;
  std::unique_ptr<Subprocess> lab_;
};

TEST_F(LabDocsCommandsTest, ReadmeFaultInjectionCommandsWorkAsPrinted) {
  RunAsPrinted("README.md", "### Injecting faults by hand", 10);
}

TEST_F(LabDocsCommandsTest, LabGuideAdminCommandsWorkAsPrinted) {
  RunAsPrinted("docs/lab.md", "## Admin API", 10);
}

// What the docs promise about errors: {"error": message} with 404 for an unknown route or
// region and 400 for a bad body, worded so that the mistake can be found.
TEST_F(LabDocsCommandsTest, ErrorsSayWhatWasWrong) {
  const std::regex status(R"(curl-http-status=(\d{3}))");
  auto answer = [&](const std::string& command) {
    auto r = RunCommand({"/bin/sh", "-c", command},
                        {{"A", admin_}, {"CURL_HOME", dir_}, {"HOME", dir_}});
    std::smatch m;
    EXPECT_TRUE(std::regex_search(r.err, m, status)) << command << ": " << r.err;
    json body = json::parse(r.out, nullptr, false);
    return std::pair<std::string, std::string>{m.size() > 1 ? m[1].str() : "",
                                               body.is_object() ? body.value("error", "") : r.out};
  };
  EXPECT_EQ(answer("curl -s -X POST $A/lab/regions/us-east-1/halt"),
            (std::pair<std::string, std::string>{"404",
                                                 "no route for POST /lab/regions/us-east-1/halt"}));
  auto unknown_region = answer("curl -s -X POST $A/lab/regions/mars/stop");
  EXPECT_EQ(unknown_region.first, "404");
  EXPECT_NE(unknown_region.second.find("unknown region"), std::string::npos)
      << unknown_region.second;
  EXPECT_EQ(answer("curl -s -X POST $A/lab/replication -d 'lag_ms=5'"),
            (std::pair<std::string, std::string>{"400", "the body must be a JSON object"}));
}

}  // namespace
}  // namespace icewarden
