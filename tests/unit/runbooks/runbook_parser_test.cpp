// The runbook parser on good input: what lands in the model, the examples in
// examples/runbooks/, and the error-reporting rules the corpus test does not pin down
// (did-you-mean for kinds, template params checked with their parameter's type, an
// unreadable file). Positions are counted by hand from the YAML literals (1-based).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runbooks/runbook_parser.h"
#include "tests/fakes/fake_action.h"
#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Yaml(const char* text) { return text[0] == '\n' ? text + 1 : text; }

class RunbookParserTest : public ::testing::Test {
 protected:
  RunbookLoad Parse(const std::string& yaml) { return ParseRunbook(yaml, "rb.yaml", registry_); }
  std::vector<std::string> ErrorsOf(const std::string& yaml) {
    RunbookLoad load = Parse(yaml);
    EXPECT_EQ(load.runbook.has_value(), load.errors.empty());
    std::vector<std::string> out;
    for (const auto& e : load.errors) out.push_back(e.ToString());
    return out;
  }
  ActionRegistry registry_ = testing::FakeBuiltinRegistry();
};

TEST_F(RunbookParserTest, ReadsEveryFieldIntoTheModel) {
  RunbookLoad load = Parse(Yaml(R"(
name: full
description: every field
parameters:
  - name: ttl
    type: integer
    default: 30
  - name: zone
    required: true
    description: the zone
guards:
  - kind: target_healthy
  - kind: max_lag
    max_staleness: 300s
fence:
  - id: quiet
    action: fence.catalog_quiet
    params: {region: "${from}", window: 2m}
    timeout: 5m
promote:
  - id: move-writer
    action: dns.rfc2136
    params:
      server: 127.0.0.1:53
      zone: ${params.zone}
      records:
        - name: writer
          type: CNAME
          value: "writer.${to}"
          ttl: ${params.ttl}
    retry: {attempts: 4, initial_backoff: 500ms, max_backoff: 20s, multiplier: 1.5, jitter: 0.1}
    on_failure: compensate
    parallel: cutover
    compensate:
      action: http.request
      params: {url: "https://x/${from}", expect_status: 200}
  - id: transfer
    action: ownership.transfer
    params: {concurrency: 8, write_catalog_properties: true, scope: "42"}
    on_failure: continue
    parallel: cutover
verify:
  - id: healthy
    action: verify.catalog_healthy
    params: {region: "${to}"}
compensate:
  - id: tell
    action: alert.webhook
    params: {url: "https://hooks/x"}
)"));
  ASSERT_TRUE(load.ok()) << load.errors[0].ToString();
  const Runbook& rb = *load.runbook;
  EXPECT_EQ(rb.name, "full");
  EXPECT_EQ(rb.description, "every field");
  EXPECT_EQ(rb.source_file, "rb.yaml");
  ASSERT_EQ(rb.parameters.size(), 2u);
  EXPECT_EQ(rb.parameters[0].type, "integer");
  EXPECT_EQ(rb.parameters[0].default_value, "30");
  EXPECT_EQ(rb.parameters[1].type, "string");
  EXPECT_TRUE(rb.parameters[1].required);
  ASSERT_EQ(rb.guards.size(), 2u);
  EXPECT_EQ(rb.guards[1].kind, "max_lag");
  EXPECT_EQ(rb.guards[1].params["max_staleness"], "5m");
  EXPECT_EQ(rb.guards[1].pos.line, 12);

  ASSERT_EQ(rb.fence.size(), 1u);
  EXPECT_EQ(rb.fence[0].timeout, std::chrono::minutes(5));
  EXPECT_EQ(rb.fence[0].pos.line, 15);
  ASSERT_EQ(rb.promote.size(), 2u);
  const RunbookStep& dns = rb.promote[0];
  EXPECT_EQ(dns.id, "move-writer");
  EXPECT_EQ(dns.action, "dns.rfc2136");
  EXPECT_EQ(dns.timeout, std::chrono::seconds(60)) << "the default";
  EXPECT_EQ(dns.retry.attempts, 4);
  EXPECT_EQ(dns.retry.initial_backoff, std::chrono::milliseconds(500));
  EXPECT_EQ(dns.retry.max_backoff, std::chrono::seconds(20));
  EXPECT_DOUBLE_EQ(dns.retry.multiplier, 1.5);
  EXPECT_DOUBLE_EQ(dns.retry.jitter, 0.1);
  EXPECT_EQ(dns.on_failure, OnFailure::kCompensate);
  EXPECT_EQ(dns.parallel_group, "cutover");
  EXPECT_EQ(dns.params["records"][0]["ttl"], "${params.ttl}") << "templates stay unresolved";
  EXPECT_EQ(dns.params["server"], "127.0.0.1:53");
  ASSERT_TRUE(dns.compensate.has_value());
  EXPECT_EQ(dns.compensate->action, "http.request");
  EXPECT_EQ(dns.compensate->params["expect_status"], 200);
  // Positions of params, top-level and nested.
  EXPECT_EQ(dns.param_pos.at("server").line, 23);
  EXPECT_EQ(dns.param_pos.at("server").column, 15);
  EXPECT_EQ(dns.param_pos.at("records[0].type").line, 27);
  EXPECT_EQ(dns.param_pos.at("records[0].type").column, 17);
  // Plain scalars are typed as in YAML 1.2; quoted ones stay strings.
  const RunbookStep& transfer = rb.promote[1];
  EXPECT_EQ(transfer.params["concurrency"], 8);
  EXPECT_EQ(transfer.params["write_catalog_properties"], true);
  EXPECT_EQ(transfer.params["scope"], "42");
  EXPECT_EQ(transfer.on_failure, OnFailure::kContinue);
  EXPECT_EQ(rb.verify.size(), 1u);
  EXPECT_EQ(rb.compensate.size(), 1u);
  EXPECT_EQ(rb.compensate[0].on_failure, OnFailure::kAbort);
}

TEST_F(RunbookParserTest, EveryExampleRunbookParses) {
  std::string dir = testing::SourceDir() + "/examples/runbooks/";
  for (const char* name :
       {"single-writer-failover.yaml", "partitioned-failover.yaml", "switchover.yaml",
        "gateway-switchover.yaml", "failback.yaml", "lab-failover.yaml"}) {
    RunbookLoad load = LoadRunbook(dir + name, registry_);
    std::string errors;
    for (const auto& e : load.errors) errors += e.ToString() + "\n";
    ASSERT_TRUE(load.ok()) << errors;
    const Runbook& rb = *load.runbook;
    EXPECT_FALSE(rb.fence.empty()) << name;
    EXPECT_FALSE(rb.promote.empty()) << name;
    EXPECT_FALSE(rb.verify.empty()) << name;
    EXPECT_FALSE(rb.compensate.empty()) << name;
  }
}

TEST_F(RunbookParserTest, UnknownKindSuggestsTheClosestKnownOne) {
  auto errors = ErrorsOf(Yaml(R"(
name: x
promote:
  - id: a
    action: ownership.transfre
)"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("rb.yaml:4:13: promote[0].action: unknown action kind "
                                   "'ownership.transfre'; known kinds: alert.alertmanager,"));
  EXPECT_THAT(errors[0], HasSubstr("; did you mean 'ownership.transfer'?"));
}

TEST_F(RunbookParserTest, AParallelGroupOfMoreThan32StepsIsRefusedAtTheStepPastTheLimit) {
  auto runbook = [](int steps) {
    std::string yaml = "name: x\npromote:\n";
    for (int i = 0; i < steps; ++i) {
      yaml += "  - id: s" + std::to_string(i) +
              "\n    action: wait\n    params: {duration: 1s}\n    parallel: checks\n";
    }
    return yaml;
  };
  EXPECT_TRUE(ErrorsOf(runbook(32)).empty());
  auto errors = ErrorsOf(runbook(33));
  ASSERT_EQ(errors.size(), 1u);
  // Step 33 (index 32) starts at line 3 + 32 * 4; its parallel key is three lines below.
  EXPECT_THAT(errors[0], HasSubstr("rb.yaml:134:15: parallel group 'checks' has more than 32 "
                                   "steps; each runs on its own thread"));
}

TEST_F(RunbookParserTest, AliasesThatExpandParamsPastTheBoundAreRefused) {
  // Six nested levels of ten aliases: a few hundred bytes that would be a million values.
  std::string yaml =
      "name: x\npromote:\n  - id: a\n    action: wait\n    params:\n"
      "      duration: 1s\n      l0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
  for (int level = 1; level <= 5; ++level) {
    std::string prev = "*l" + std::to_string(level - 1);
    yaml += "      l" + std::to_string(level) + ": &l" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) yaml += (i ? ", " : "") + prev;
    yaml += "]\n";
  }
  auto errors = ErrorsOf(yaml);
  bool bounded = false;
  for (const auto& e : errors)
    bounded = bounded || e.find("params hold more than 10000 values") != std::string::npos;
  EXPECT_TRUE(bounded) << ::testing::PrintToString(errors);
}

TEST_F(RunbookParserTest, WholeTemplateOfATypedParameterValidatesAsThatType) {
  // ttl is an integer param of dns records; "${params.ttl}" passes when ttl is declared an
  // integer and fails when it is a string parameter.
  const char* text = R"(
name: x
parameters:
  - name: ttl
    type: %s
    default: "30"
promote:
  - id: a
    action: ownership.transfer
    params:
      concurrency: ${params.ttl}
)";
  char buf[512];
  std::snprintf(buf, sizeof buf, text, "integer");
  EXPECT_THAT(ErrorsOf(Yaml(buf)), ElementsAre());
  std::snprintf(buf, sizeof buf, text, "string");
  EXPECT_THAT(ErrorsOf(Yaml(buf)),
              ElementsAre("rb.yaml:10:20: promote[0].params.concurrency: expected an integer, "
                          "got \"${params.ttl}\""));
}

TEST_F(RunbookParserTest, ABadTemplateIsReportedOnceNotAgainAsATypeError) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
name: x
promote:
  - id: a
    action: ownership.transfer
    params:
      concurrency: ${params.n}
)")),
              ElementsAre("rb.yaml:6:20: promote[0].params.concurrency: ${params.n} names no "
                          "declared parameter; the runbook declares no parameters"));
}

TEST_F(RunbookParserTest, InlineCompensationIsValidatedByItsAction) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
name: x
promote:
  - id: a
    action: ownership.transfer
    compensate:
      action: http.request
      params:
        expect_status: ok
)")),
              ElementsAre("rb.yaml:8:9: promote[0].compensate.params.url: missing required param",
                          "rb.yaml:8:24: promote[0].compensate.params.expect_status: expected an "
                          "integer, got \"ok\""));
}

TEST_F(RunbookParserTest, ErrorsComeInFileOrderAcrossReadingAndValidation) {
  auto errors = ErrorsOf(Yaml(R"(
name: x
promote:
  - id: a
    action: ownership.transfer
    params: {concurrency: many}
  - id: a
    action: wait
    timeout: never
)"));
  EXPECT_THAT(errors, ElementsAre(HasSubstr("rb.yaml:5:27: promote[0].params.concurrency"),
                                  HasSubstr("rb.yaml:6:9: duplicate step id 'a'"),
                                  HasSubstr("rb.yaml:8:14: promote[1].timeout")));
}

TEST_F(RunbookParserTest, UnreadableFileIsOneErrorWithoutPosition) {
  RunbookLoad load = LoadRunbook("/nonexistent/rb.yaml", registry_);
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_THAT(load.errors[0].ToString(), HasSubstr("/nonexistent/rb.yaml: cannot read"));
}

// yaml-cpp's LoadAll never returned on a stray comma (tests/fuzz found it).
TEST_F(RunbookParserTest, AStrayCommaIsAnErrorNotAHang) {
  EXPECT_FALSE(ErrorsOf(",").empty());
  EXPECT_FALSE(ErrorsOf(Yaml(R"(
name: x
promote: [{id: a, action: wait, params: {duration: 1s}}]
)") + ",\n")
                   .empty());
}

TEST_F(RunbookParserTest, EmptyFileAndSecondDocumentAreErrors) {
  EXPECT_THAT(ErrorsOf(""), ElementsAre(HasSubstr("rb.yaml:1:1: the file is empty")));
  EXPECT_THAT(ErrorsOf(Yaml(R"(
name: x
promote: [{id: a, action: wait}]
---
name: y
)")),
              ElementsAre(HasSubstr("rb.yaml:4:1: a runbook file holds one YAML document")));
}

TEST_F(RunbookParserTest, ARequiredParameterTakesNoDefault) {
  EXPECT_THAT(ErrorsOf(Yaml(R"(
name: x
parameters:
  - {name: zone, required: true, default: a}
promote: [{id: a, action: wait}]
)")),
              ElementsAre(HasSubstr("rb.yaml:3:43: parameters[0].default: a required parameter "
                                    "takes no default")));
}

}  // namespace
}  // namespace icewarden
