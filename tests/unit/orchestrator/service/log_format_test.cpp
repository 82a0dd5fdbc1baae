// `--log-format json`: one object a line, the fields an operator searches by.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "orchestrator/service/service.h"

namespace icewarden {
namespace {

using nlohmann::json;

const std::vector<std::string> kRegions = {"us-east-1", "eu-central-1", "us-east"};

TEST(LogFormatTest, FieldsComeInAFixedOrderWithTheIdsTheMessageNames) {
  const std::string line =
      JsonLogLine("2026-12-07T03:00:00.000Z", "info", "icewarden",
                  "failover fo-20261207-ab12: step dns.cname in eu-central-1 completed", kRegions);
  EXPECT_EQ(line, R"({"ts":"2026-12-07T03:00:00.000Z","level":"info","logger":"icewarden",)"
                  R"("msg":"failover fo-20261207-ab12: step dns.cname in eu-central-1 completed",)"
                  R"("failover":"fo-20261207-ab12","region":"eu-central-1"})");
}

TEST(LogFormatTest, ARegionIsFoundOnlyAsAWholeWord) {
  // "us-east" is a prefix of "us-east-1": the whole word is the region the line is about.
  json j = json::parse(JsonLogLine("t", "warn", "l", "us-east-1: silent", kRegions));
  EXPECT_EQ(j["region"], "us-east-1");
  j = json::parse(JsonLogLine("t", "warn", "l", "probing us-east.", kRegions));
  EXPECT_EQ(j["region"], "us-east");
  j = json::parse(JsonLogLine("t", "warn", "l", "xus-east-1y and fo- alone", kRegions));
  EXPECT_FALSE(j.contains("region"));
  EXPECT_FALSE(j.contains("failover"));
}

TEST(LogFormatTest, TheFirstRegionNamedWins) {
  json j = json::parse(
      JsonLogLine("t", "info", "l", "eu-central-1 takes over from us-east-1", kRegions));
  EXPECT_EQ(j["region"], "eu-central-1");
}

TEST(LogFormatTest, ADrillIdIsAFieldAndQuotesAndBadBytesStayValidJson) {
  const std::string message = "drill dr-1a2b: \"catalog\" said \xff\xfe";
  json j = json::parse(JsonLogLine("t", "error", "l", message, kRegions));
  EXPECT_EQ(j["drill"], "dr-1a2b");
  EXPECT_EQ(j["msg"].get<std::string>().substr(0, 24), "drill dr-1a2b: \"catalog\"");
}

TEST(LogFormatTest, ConfiguredJsonLoggerWritesOneParsableObjectALine) {
  ::testing::internal::CaptureStderr();
  ConfigureLogging("icewarden-test", LogFormat::kJson, kRegions);
  spdlog::info("failover {}: approved for {}", "fo-20261207-zz99", "eu-central-1");
  spdlog::warn("second line");
  spdlog::default_logger()->flush();
  const std::string out = ::testing::internal::GetCapturedStderr();
  ConfigureLogging("icewarden-test", LogFormat::kText);
  std::istringstream lines(out);
  std::string first, second;
  ASSERT_TRUE(std::getline(lines, first)) << out;
  ASSERT_TRUE(std::getline(lines, second)) << out;
  const json a = json::parse(first), b = json::parse(second);
  EXPECT_EQ(a["level"], "info");
  EXPECT_EQ(a["logger"], "icewarden-test");
  EXPECT_EQ(a["failover"], "fo-20261207-zz99");
  EXPECT_EQ(a["region"], "eu-central-1");
  EXPECT_EQ(b["msg"], "second line");
  // RFC 3339 in UTC with milliseconds.
  const std::string ts = a["ts"];
  ASSERT_EQ(ts.size(), 24u) << ts;
  EXPECT_EQ(ts[10], 'T');
  EXPECT_EQ(ts.back(), 'Z');
}

TEST(LogFormatTest, AnUnknownFormatIsRefusedNamingTheChoices) {
  EXPECT_TRUE(ParseLogFormat("json").ok());
  EXPECT_TRUE(ParseLogFormat("text").ok());
  auto bad = ParseLogFormat("yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("expected text or json"), std::string::npos);
}

}  // namespace
}  // namespace icewarden
