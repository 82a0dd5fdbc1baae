// examples/alerting/grafana-dashboard.json against what icewarden exports (issue 31 item 1).
// The metric names and their labels come from real pages, not from a list kept here: the
// daemon's GET /metrics of an Api wired like `icewarden serve` (failover and drill services,
// live view, readiness, config reload, a pause), with state set up so that every family has
// samples, followed by the gateway's page (GatewayMetrics::Render). Every panel's expression,
// legend and the template variables' queries must name only those metrics (histograms by
// their _bucket, _sum and _count series), only labels those metrics carry (plus `job` and
// `instance`, which Prometheus adds, and `le` on buckets) and only PromQL functions; and,
// where /usr/bin/promtool is installed, every expression must parse.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "orchestrator/api/api.h"
#include "orchestrator/gateway/gateway_metrics.h"
#include "orchestrator/readiness/readiness.h"
#include "state/pause_store.h"
#include "tests/fakes/test_paths.h"
#include "tests/unit/orchestrator/drill_fixture.h"

namespace icewarden::testing {
namespace {

using nlohmann::json;

json LoadDashboard() {
  std::ifstream in(std::string(ICEWARDEN_SOURCE_DIR) + "/examples/alerting/grafana-dashboard.json");
  EXPECT_TRUE(in.good()) << "examples/alerting/grafana-dashboard.json is missing";
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// Every panel, rows and the panels nested in collapsed rows included, in order.
void Walk(const json& panels, std::vector<json>* out) {
  for (const json& p : panels) {
    out->push_back(p);
    if (p.contains("panels")) Walk(p["panels"], out);
  }
}

std::vector<json> Panels(const json& dashboard) {
  std::vector<json> out;
  Walk(dashboard.value("panels", json::array()), &out);
  return out;
}

// The series names a page lets one query, each with its label names.
struct Exported {
  std::map<std::string, std::set<std::string>> labels;
  std::set<std::string> sampled;  // names that had at least one sample
};

// Reads Prometheus text format 0.0.4. A histogram is queried by its _bucket (with `le`),
// _sum and _count series, never by its family name.
Exported ParseExposition(const std::string& page) {
  std::map<std::string, std::string> types;
  std::map<std::string, std::set<std::string>> family_labels;
  std::set<std::string> sampled;
  std::istringstream in(page);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      types[name] = type;
      family_labels[name];
      continue;
    }
    if (line[0] == '#') continue;
    const std::size_t end = line.find_first_of("{ ");
    std::string family = line.substr(0, end);
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s = suffix;
      if (family.size() > s.size() && family.compare(family.size() - s.size(), s.size(), s) == 0) {
        const std::string base = family.substr(0, family.size() - s.size());
        if (types.count(base) != 0 && types[base] == "histogram") family = base;
      }
    }
    sampled.insert(family);
    std::set<std::string>& labels = family_labels[family];
    if (end == std::string::npos || line[end] != '{') continue;
    // name="value" pairs; values may hold escaped quotes.
    for (std::size_t i = end + 1; i < line.size() && line[i] != '}';) {
      const std::size_t eq = line.find('=', i);
      if (eq == std::string::npos) break;
      const std::string name = line.substr(i, eq - i);
      if (name != "le") labels.insert(name);
      std::size_t j = eq + 2;  // past ="
      while (j < line.size() && line[j] != '"') j += line[j] == '\\' ? 2 : 1;
      i = j + 1;
      if (i < line.size() && line[i] == ',') ++i;
    }
  }
  Exported out;
  for (const auto& [family, labels] : family_labels) {
    std::vector<std::string> names{family};
    if (types[family] == "histogram")
      names = {family + "_bucket", family + "_sum", family + "_count"};
    for (const std::string& name : names) {
      out.labels[name].insert(labels.begin(), labels.end());
      if (name.size() > 7 && name.substr(name.size() - 7) == "_bucket")
        out.labels[name].insert("le");
      if (sampled.count(family) != 0) out.sampled.insert(name);
    }
  }
  return out;
}

// PromQL's functions and aggregations (Prometheus 2.x), keywords, and the series Prometheus
// itself writes for every target.
std::set<std::string> Words(const char* text) {
  std::istringstream in(text);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}
const std::set<std::string> kFunctions = Words(
    "abs absent absent_over_time avg avg_over_time bottomk ceil changes clamp clamp_max "
    "clamp_min count count_over_time count_values day_of_month day_of_week day_of_year "
    "days_in_month delta deriv exp floor group histogram_quantile holt_winters hour idelta "
    "increase irate label_join label_replace last_over_time ln log10 log2 max max_over_time "
    "min min_over_time minute month predict_linear present_over_time quantile "
    "quantile_over_time rate resets round scalar sgn sort sort_desc sqrt stddev "
    "stddev_over_time stdvar stdvar_over_time sum sum_over_time time timestamp topk vector "
    "year");
const std::set<std::string> kGrouping = Words("by without on ignoring group_left group_right");
const std::set<std::string> kKeywords = Words("and or unless bool offset inf nan");
const std::set<std::string> kPrometheusSeries{"up"};
const std::set<std::string> kTargetLabels{"job", "instance"};

struct Token {
  enum Kind { kIdent, kString, kNumber, kVar, kPunct } kind;
  std::string text;
};

// Strings, durations and Grafana's $variables become single tokens; [ranges] are dropped.
std::vector<Token> Lex(const std::string& e) {
  std::vector<Token> out;
  auto ident_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':';
  };
  for (std::size_t i = 0; i < e.size();) {
    const char c = e[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '"' || c == '\'' || c == '`') {
      std::size_t j = i + 1;
      while (j < e.size() && e[j] != c) j += e[j] == '\\' && c != '`' ? 2 : 1;
      out.push_back({Token::kString, e.substr(i, j + 1 - i)});
      i = j + 1;
    } else if (c == '[') {
      i = e.find(']', i);
      i = i == std::string::npos ? e.size() : i + 1;
    } else if (c == '$') {
      std::size_t j = i + 1;
      if (j < e.size() && e[j] == '{') {
        j = e.find('}', j);
        j = j == std::string::npos ? e.size() : j + 1;
      } else {
        while (j < e.size() && ident_char(e[j])) ++j;
      }
      out.push_back({Token::kVar, e.substr(i, j - i)});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      std::size_t j = i;
      while (j < e.size() && (ident_char(e[j]) || e[j] == '.')) ++j;
      out.push_back({Token::kNumber, e.substr(i, j - i)});
      i = j;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':') {
      std::size_t j = i;
      while (j < e.size() && ident_char(e[j])) ++j;
      out.push_back({Token::kIdent, e.substr(i, j - i)});
      i = j;
    } else {
      const std::string two = e.substr(i, 2);
      const bool op2 =
          two == "!=" || two == "=~" || two == "!~" || two == "==" || two == "<=" || two == ">=";
      out.push_back({Token::kPunct, op2 ? two : std::string(1, c)});
      i += op2 ? 2 : 1;
    }
  }
  return out;
}

bool IsMatchOp(const std::string& t) { return t == "=" || t == "!=" || t == "=~" || t == "!~"; }

// What is wrong with one expression: metrics icewarden does not export, labels its series do
// not have, unknown functions. `wanted` are label names the caller uses on the result (legend
// {{label}}, label_values' label): each must be a label of a series in the expression.
std::vector<std::string> CheckExpr(const std::string& expr, const std::vector<std::string>& wanted,
                                   const Exported& exported, std::set<std::string>* metrics) {
  std::vector<std::string> findings;
  std::set<std::string> all_labels(kTargetLabels.begin(), kTargetLabels.end());
  std::set<std::string> grouping(wanted.begin(), wanted.end());
  const std::vector<Token> t = Lex(expr);
  auto next_is = [&](std::size_t i, const char* p) {
    return i + 1 < t.size() && t[i + 1].kind == Token::kPunct && t[i + 1].text == p;
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind == Token::kPunct && t[i].text == "{") {
      findings.push_back("a selector without a metric name");
      continue;
    }
    if (t[i].kind != Token::kIdent) continue;
    const std::string& word = t[i].text;
    if (kGrouping.count(word) != 0) {  // group_left and group_right may go without a list
      if (!next_is(i, "(")) continue;
      for (i += 2; i < t.size() && t[i].text != ")"; ++i)
        if (t[i].kind == Token::kIdent) grouping.insert(t[i].text);
      continue;
    }
    // An aggregation may put its grouping first: `sum by (region) (...)`.
    const bool grouped_first = i + 1 < t.size() && t[i + 1].kind == Token::kIdent &&
                               (t[i + 1].text == "by" || t[i + 1].text == "without");
    if (next_is(i, "(") || grouped_first) {
      if (kFunctions.count(word) == 0) findings.push_back(word + "() is not a PromQL function");
      continue;
    }
    if (kKeywords.count(word) != 0) continue;
    // A series name.
    std::set<std::string> labels(kTargetLabels.begin(), kTargetLabels.end());
    labels.insert("__name__");
    if (auto it = exported.labels.find(word); it != exported.labels.end()) {
      labels.insert(it->second.begin(), it->second.end());
      if (metrics != nullptr) metrics->insert(word);
    } else if (kPrometheusSeries.count(word) == 0) {
      findings.push_back(word.rfind("icewarden_", 0) == 0
                             ? word + " is not a series icewarden exports"
                             : word + " is not icewarden's (nor a series Prometheus writes)");
    }
    all_labels.insert(labels.begin(), labels.end());
    if (!next_is(i, "{")) continue;
    for (i += 2; i < t.size() && t[i].text != "}"; ++i) {
      if (t[i].kind == Token::kIdent && i + 1 < t.size() && IsMatchOp(t[i + 1].text) &&
          labels.count(t[i].text) == 0)
        findings.push_back(word + " has no label " + t[i].text);
    }
  }
  for (const std::string& l : grouping)
    if (all_labels.count(l) == 0) findings.push_back("no series here has a label " + l);
  return findings;
}

// The {{label}} names of a legend format.
std::vector<std::string> LegendLabels(const std::string& legend) {
  std::vector<std::string> out;
  static const std::regex kLabel(R"(\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\})");
  for (std::sregex_iterator it(legend.begin(), legend.end(), kLabel), end; it != end; ++it)
    out.push_back((*it)[1]);
  return out;
}

std::string VariableQuery(const json& v) {
  const json& q = v.value("query", json());
  if (q.is_object()) return q.value("query", "");
  return q.is_string() ? q.get<std::string>() : "";
}

// Findings for a query variable: label_values(SELECTOR, LABEL) or query_result(EXPR).
std::vector<std::string> CheckVariable(const std::string& query, const Exported& exported,
                                       std::set<std::string>* metrics) {
  std::smatch m;
  static const std::regex kLabelValues(
      R"(^\s*label_values\(\s*(.+)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$)");
  static const std::regex kQueryResult(R"(^\s*query_result\((.+)\)\s*$)");
  if (std::regex_match(query, m, kLabelValues))
    return CheckExpr(m[1].str(), {m[2].str()}, exported, metrics);
  if (std::regex_match(query, m, kQueryResult)) return CheckExpr(m[1].str(), {}, exported, metrics);
  return {"not a label_values() or query_result() query: " + query};
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : "; ") + s;
  return out;
}

TEST(GrafanaDashboard, IsAnImportableDashboard) {
  const json d = LoadDashboard();
  ASSERT_FALSE(d.is_discarded()) << "grafana-dashboard.json is not JSON";
  EXPECT_GE(d.value("schemaVersion", 0), 36);
  EXPECT_FALSE(d.value("uid", "").empty());
  EXPECT_FALSE(d.value("title", "").empty());
  // Import asks for the Prometheus datasource that replaces ${DS_PROMETHEUS}.
  ASSERT_TRUE(d.contains("__inputs"));
  bool input = false;
  for (const json& in : d["__inputs"])
    input |= in.value("name", "") == "DS_PROMETHEUS" && in.value("pluginId", "") == "prometheus";
  EXPECT_TRUE(input) << "__inputs must declare DS_PROMETHEUS, a prometheus datasource";
  const json ds = {{"type", "prometheus"}, {"uid", "${DS_PROMETHEUS}"}};

  std::set<int> ids;
  std::size_t charts = 0;
  for (const json& p : Panels(d)) {
    const std::string title = p.value("title", "");
    EXPECT_FALSE(title.empty()) << p.dump();
    EXPECT_TRUE(ids.insert(p.value("id", -1)).second)
        << "panel id " << p.value("id", -1) << " twice (" << title << ")";
    const json& g = p.value("gridPos", json::object());
    EXPECT_TRUE(g.contains("h") && g.contains("y")) << title << ": no gridPos";
    EXPECT_LE(g.value("x", 0) + g.value("w", 0), 24) << title << " is wider than the grid";
    if (p.value("type", "") == "row") continue;
    ++charts;
    EXPECT_EQ(p.value("datasource", json()), ds) << title;
    const json& targets = p.value("targets", json::array());
    EXPECT_FALSE(targets.empty()) << title << " has no target";
    std::set<std::string> refs;
    for (const json& t : targets) {
      EXPECT_FALSE(t.value("expr", "").empty()) << title << ": a target without expr";
      EXPECT_EQ(t.value("datasource", json()), ds) << title;
      EXPECT_TRUE(refs.insert(t.value("refId", "")).second) << title << ": refId twice";
    }
  }
  EXPECT_GE(charts, 20u);

  bool region = false;
  for (const json& v : d["templating"]["list"]) {
    if (v.value("name", "") != "region") continue;
    region = true;
    EXPECT_EQ(VariableQuery(v), "label_values(icewarden_region_health, region)");
    EXPECT_EQ(v.value("datasource", json()), ds);
  }
  EXPECT_TRUE(region) << "no `region` template variable";
}

// The daemon's page as `icewarden serve` builds it, every family with samples, and the gateway's.
class GrafanaDashboardTest : public DrillTest {
 protected:
  void SetUp() override {
    BuildDrills();
    api_ = std::make_unique<Api>(ApiConfig{}, *store_, *clock_, nullptr);
    api_->SetLiveView(&live_);
    api_->SetReadiness(&board_);
    api_->SetFailoverService(service_.get());
    api_->SetDrillService(drill_service_.get());
    api_->SetConfigReloadStatus([] {
      return std::pair<bool, std::int64_t>{true, 1'780'000'000'000};
    });

    RouteReadiness ready;
    ready.route = "us-to-eu";
    ready.ready = true;
    ready.checked_at = clock_->Now();
    board_.Publish({ready});
    live_.ObserveProbe(kUs, "catalog_config", std::chrono::milliseconds(20));
    live_.PublishProbeRound(kUs, {true, std::chrono::milliseconds(20), "catalog_config", "", 1});
    live_.CountUnparsed(kUs, "config");
    // The fixture published lag for both tables (so worst tables have samples too).
    EXPECT_FALSE(RunDrill("shadow").empty());
    Pause pause;
    pause.scope = "region:eu-central-1";
    pause.by = "olivia";
    pause.reason = "test";
    pause.since = clock_->Now();
    pause.expected_end = clock_->Now() + 1000;
    PauseStore* pauses = PauseStoreOf(*store_);
    ASSERT_NE(pauses, nullptr);
    ASSERT_TRUE(pauses->PutPause(pause, Audit("pause")).ok());
    EXPECT_EQ(Request("POST", "/api/v1/webhooks/alertmanager").status, 503);  // no receiver: error

    page_ = Request("GET", "/metrics").body;
    GatewayMetrics gateway;
    gateway.CountRequest("updateTable", 200, kUs);
    gateway.CountRefusal("owned_elsewhere");
    gateway.ObserveForward(kUs, true, std::chrono::milliseconds(3));
    page_ += gateway.Render({1, 1, true});
    exported_ = ParseExposition(page_);
  }

  ApiResponse Request(const std::string& method, const std::string& path) {
    return api_->Handle(ApiRequest{method, path, {}, "{}", "127.0.0.1:1"});
  }

  ReadinessBoard board_;
  std::unique_ptr<Api> api_;
  std::string page_;
  Exported exported_;
};

TEST_F(GrafanaDashboardTest, EveryExpressionNamesExportedSeriesAndTheirLabels) {
  const json d = LoadDashboard();
  ASSERT_FALSE(d.is_discarded());
  ASSERT_GT(exported_.labels.size(), 30u) << page_;
  std::set<std::string> used;
  std::size_t exprs = 0;
  for (const json& p : Panels(d)) {
    for (const json& t : p.value("targets", json::array())) {
      const std::string expr = t.value("expr", "");
      ++exprs;
      auto findings = CheckExpr(expr, LegendLabels(t.value("legendFormat", "")), exported_, &used);
      EXPECT_TRUE(findings.empty())
          << p.value("title", "") << ": " << Join(findings) << "\n  " << expr;
    }
  }
  for (const json& v : d["templating"]["list"]) {
    if (v.value("type", "") != "query") continue;
    auto findings = CheckVariable(VariableQuery(v), exported_, &used);
    EXPECT_TRUE(findings.empty()) << "variable " << v.value("name", "") << ": " << Join(findings);
  }
  EXPECT_GT(exprs, 30u);
  // A label check is only as good as the samples it read.
  for (const std::string& name : used)
    EXPECT_EQ(exported_.sampled.count(name), 1u)
        << name
        << " has no samples in this test's page, so its labels went unchecked: give the "
           "fixture the state that makes it render some";
}

// The expressions parse, with Grafana's variables replaced (`promtool check rules` parses a
// rule's expr offline). Skipped where the Debian package prometheus is not installed.
TEST(GrafanaDashboard, EveryExpressionParses) {
  const std::string promtool = "/usr/bin/promtool";
  if (!std::filesystem::exists(promtool)) GTEST_SKIP() << promtool << " is not installed";
  const json d = LoadDashboard();
  ASSERT_FALSE(d.is_discarded());
  static const std::regex kGrafanaInterval(R"(\$__[a-z_]+)");
  static const std::regex kVariable(R"(\$\{?[a-zA-Z_][a-zA-Z0-9_]*(:[a-z]+)?\}?)");
  json rules = json::array();
  for (const json& p : Panels(d)) {
    for (const json& t : p.value("targets", json::array())) {
      std::string e = std::regex_replace(t.value("expr", ""), kGrafanaInterval, "5m");
      e = std::regex_replace(e, kVariable, ".*");
      rules.push_back({{"record", "grafana:expr:" + std::to_string(rules.size())}, {"expr", e}});
    }
  }
  const std::string dir = MakeTempDir("grafana-dashboard");
  json group = {{"name", "dashboard"}, {"rules", rules}};
  json file;
  file["groups"] = json::array({group});
  std::ofstream(dir + "/rules.yml") << file.dump(2);  // JSON is YAML
  const int rc =
      std::system((promtool + " check rules " + dir + "/rules.yml > " + dir + "/out 2>&1").c_str());
  std::ifstream out(dir + "/out");
  const std::string said((std::istreambuf_iterator<char>(out)), {});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(rc, 0) << said;
}

// The checker itself: what it must catch, on a page written here.
TEST(GrafanaDashboardChecker, CatchesUnknownSeriesLabelsAndFunctions) {
  const Exported e = ParseExposition(
      "# TYPE icewarden_failovers gauge\n"
      "icewarden_failovers{phase=\"proposed\"} 0\n"
      "# TYPE icewarden_probe_duration_seconds histogram\n"
      "icewarden_probe_duration_seconds_bucket{region=\"a\",kind=\"tcp\",le=\"+Inf\"} 1\n"
      "icewarden_probe_duration_seconds_sum{region=\"a\",kind=\"tcp\"} 0.5\n"
      "icewarden_probe_duration_seconds_count{region=\"a\",kind=\"tcp\"} 1\n"
      "# TYPE icewarden_readiness_round_timestamp_seconds gauge\n");
  auto check = [&](const std::string& expr, std::vector<std::string> legend = {}) {
    return Join(CheckExpr(expr, legend, e, nullptr));
  };
  using ::testing::HasSubstr;
  EXPECT_EQ(check("sum by (phase) (icewarden_failovers{phase=~\"$phase\"})", {"phase"}), "");
  EXPECT_EQ(check("histogram_quantile(0.99, sum by (le, region, kind) "
                  "(rate(icewarden_probe_duration_seconds_bucket{region=~\"$region\"}"
                  "[$__rate_interval])))",
                  {"region", "kind"}),
            "");
  EXPECT_EQ(check("time() - icewarden_readiness_round_timestamp_seconds or up{job=\"x\"}"), "");
  EXPECT_THAT(check("sum(icewarden_failover)"), HasSubstr("icewarden_failover is not a series"));
  EXPECT_THAT(check("icewarden_probe_duration_seconds"), HasSubstr("is not a series"))
      << "a histogram's family name is no series";
  EXPECT_THAT(check("rate(node_cpu_seconds_total[5m])"), HasSubstr("is not icewarden's"));
  EXPECT_THAT(check("icewarden_failovers{state=\"x\"}"), HasSubstr("has no label state"));
  EXPECT_THAT(check("sum by (region) (icewarden_failovers)"), HasSubstr("a label region"));
  EXPECT_THAT(check("icewarden_failovers", {"route"}), HasSubstr("a label route"));
  EXPECT_THAT(check("rat(icewarden_failovers[5m])"), HasSubstr("rat() is not a PromQL function"));
  EXPECT_THAT(Join(CheckVariable("label_values(icewarden_failovers, region)", e, nullptr)),
              HasSubstr("a label region"));
  EXPECT_EQ(Join(CheckVariable("label_values(icewarden_failovers, phase)", e, nullptr)), "");
}

}  // namespace
}  // namespace icewarden::testing
