// Templates in step params: resolution with secrets masked, typed whole-string templates,
// and the static check `runbook validate` runs.

#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runbooks/template.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using json = nlohmann::json;

TemplateBindings Bindings() {
  TemplateBindings b;
  b.failover_id = "f-17";
  b.from = "us-east";
  b.to = "us-west";
  b.scope = "sales.*";
  b.params = {{"zone", "lake.example.com."}, {"ttl", 30}, {"dry", false}};
  b.env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "TOKEN") return "s3cr3t-token";
    return std::nullopt;
  };
  return b;
}

TEST(TemplateTest, ResolvesEveryVariableInsideStringsAtAnyDepth) {
  json params = {{"url", "https://${to}.example/f/${failover.id}"},
                 {"records", json::array({{{"name", "w.${params.zone}"}, {"from", "${from}"}}})},
                 {"scope", "${scope}"},
                 {"count", 3},
                 {"flag", true}};
  auto r = ResolveTemplates(params, Bindings());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->value["url"], "https://us-west.example/f/f-17");
  EXPECT_EQ(r->value["records"][0]["name"], "w.lake.example.com.");
  EXPECT_EQ(r->value["records"][0]["from"], "us-east");
  EXPECT_EQ(r->value["scope"], "sales.*");
  EXPECT_EQ(r->value["count"], 3);
  EXPECT_EQ(r->value["flag"], true);
  EXPECT_EQ(r->masked, r->value) << "nothing secret here";
}

TEST(TemplateTest, AWholeTemplateOfATypedParameterKeepsItsType) {
  auto r = ResolveTemplates(
      {{"ttl", "${params.ttl}"}, {"dry", "${params.dry}"}, {"label", "ttl=${params.ttl}"}},
      Bindings());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->value["ttl"], 30);
  EXPECT_EQ(r->value["dry"], false);
  EXPECT_EQ(r->value["label"], "ttl=30");
}

TEST(TemplateTest, EnvSecretsAreMaskedInTheCopyToShow) {
  auto r = ResolveTemplates({{"headers", {{"Authorization", "Bearer ${env.TOKEN}"}}}}, Bindings());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->value["headers"]["Authorization"], "Bearer s3cr3t-token");
  EXPECT_EQ(r->masked["headers"]["Authorization"], "Bearer ***");
  EXPECT_THAT(r->masked.dump(), Not(HasSubstr("s3cr3t")));
}

TEST(TemplateTest, FileSecretsResolveAgainstTheBaseDirWithoutTheTrailingNewline) {
  std::string dir = testing::MakeTempDir("template_test");
  std::filesystem::create_directories(dir + "/keys");
  std::ofstream(dir + "/keys/tsig") << "c2VjcmV0LWtleQ==\n";
  TemplateBindings b = Bindings();
  b.base_dir = dir;
  auto r = ResolveTemplates(
      {{"tsig_secret", "${file:keys/tsig}"}, {"abs", "${file:" + dir + "/keys/tsig}"}}, b);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->value["tsig_secret"], "c2VjcmV0LWtleQ==");
  EXPECT_EQ(r->value["abs"], "c2VjcmV0LWtleQ==");
  EXPECT_EQ(r->masked["tsig_secret"], "***");
  std::filesystem::remove_all(dir);
}

TEST(TemplateTest, FileSecretsAreRegularFilesAndResolvedStringsAreBounded) {
  std::string dir = testing::MakeTempDir("template_test");
  // A FIFO would block the reader until someone writes to it.
  ASSERT_EQ(mkfifo((dir + "/pipe").c_str(), 0600), 0);
  auto fifo = ResolveTemplates({{"k", "${file:" + dir + "/pipe}"}}, Bindings());
  ASSERT_FALSE(fifo.ok());
  EXPECT_THAT(fifo.status().message(), HasSubstr("is not a regular file"));

  // 20 uses of a 60 KiB file: 1.2 MB in one string.
  std::ofstream(dir + "/big") << std::string(60 * 1024, 'x');
  std::string many;
  for (int i = 0; i < 20; ++i) many += "${file:" + dir + "/big}";
  auto big = ResolveTemplates({{"k", many}}, Bindings());
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.status().message(), HasSubstr("params.k: resolves to more than 1 MiB"));
  auto few =
      ResolveTemplates({{"k", "${file:" + dir + "/big}${file:" + dir + "/big}"}}, Bindings());
  ASSERT_TRUE(few.ok()) << few.status().ToString();
  EXPECT_EQ(few->value["k"].get<std::string>().size(), 120u * 1024);
  std::filesystem::remove_all(dir);
}

TEST(TemplateTest, FailuresNameThePathAndNeverTheSecret) {
  auto unset = ResolveTemplates({{"k", "${env.NOPE}"}}, Bindings());
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(unset.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(unset.status().message(),
              HasSubstr("params.k: ${env.NOPE}: environment variable is not set"));

  auto missing = ResolveTemplates({{"k", "${file:/nonexistent/key}"}}, Bindings());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(),
              HasSubstr("params.k: ${file:/nonexistent/key}: cannot read"));

  auto unknown = ResolveTemplates({{"url", "${form}"}}, Bindings());
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("params.url: unknown template ${form}; known: ${failover.id} ${from} "
                        "${to} ${scope} ${params.NAME} ${env.NAME} ${file:PATH}"));

  auto unbound = ResolveTemplates({{"x", "${params.region}"}}, Bindings());
  ASSERT_FALSE(unbound.ok());
  EXPECT_THAT(unbound.status().message(), HasSubstr("parameter 'region' was not given"));
}

TEST(TemplateTest, DoubleDollarIsALiteral) {
  auto r = ResolveTemplates({{"s", "cost $5, literal $${to}, real ${to}"}}, Bindings());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->value["s"], "cost $5, literal ${to}, real us-west");
}

TEST(TemplateTest, CheckTemplatesReportsEveryProblemWithItsPath) {
  json params = {{"a", "${form}"},
                 {"b", json::array({"ok ${to}", "${params.regoin}"})},
                 {"c", {{"d", "${to"}}},
                 {"e", "${}"},
                 {"f", "${env.1BAD}"},
                 {"g", "${file:}"},
                 {"h", "${params.region} ${env.TOKEN} ${file:k} ${failover.id} ${scope}"}};
  EXPECT_THAT(CheckTemplates(params, {"region", "zone"}),
              ElementsAre("params.a: unknown template ${form}; known: ${failover.id} ${from} ${to} "
                          "${scope} ${params.NAME} ${env.NAME} ${file:PATH}; did you mean ${from}?",
                          "params.b[1]: ${params.regoin} names no declared parameter; declared: "
                          "region, zone; did you mean ${params.region}?",
                          HasSubstr("params.c.d: unterminated template '${to'"),
                          HasSubstr("params.e: empty template ${}"),
                          HasSubstr("params.f: ${env.1BAD} does not name an environment variable"),
                          "params.g: ${file:} names no file"));
  EXPECT_THAT(CheckTemplates({{"x", "${param.zone}"}}, {"zone"}),
              ElementsAre(HasSubstr("did you mean ${params.zone}?")));
}

TEST(TemplateTest, FindTemplateProblemsKeepsThePathApart) {
  auto problems = FindTemplateProblems({{"records", json::array({{{"name", "${nope}"}}})}}, {});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path, "records[0].name");
  EXPECT_THAT(problems[0].message, HasSubstr("unknown template ${nope}"));
  EXPECT_THAT(FindTemplateProblems({{"a", "plain"}, {"b", 3}}, {}), IsEmpty());
}

TEST(TemplateTest, WholeParameterTemplate) {
  EXPECT_EQ(WholeParameterTemplate("${params.ttl}"), "ttl");
  EXPECT_EQ(WholeParameterTemplate(" ${params.ttl}"), std::nullopt);
  EXPECT_EQ(WholeParameterTemplate("${params.ttl}s"), std::nullopt);
  EXPECT_EQ(WholeParameterTemplate("${from}"), std::nullopt);
  EXPECT_EQ(WholeParameterTemplate("$${params.ttl}"), std::nullopt);
}

}  // namespace
}  // namespace icewarden
