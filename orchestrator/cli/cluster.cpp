#include "orchestrator/cli/cluster.h"

#include <iostream>
#include <nlohmann/json.hpp>

#include "orchestrator/cli/cli.h"
#include "orchestrator/cli/http.h"
#include "orchestrator/cli/text_table.h"

namespace icewarden {
namespace {

using nlohmann::json;

std::string Seconds(std::int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1000.0);
  return buf;
}

// "answered", "silent 12.0s (48 rounds)", "not probed"
std::string Sight(const json& s) {
  if (!s.value("probed", false)) return "not probed";
  if (!s.value("silent", false)) return "answered";
  return "silent " + Seconds(s.value("silent_for_ms", std::int64_t{0})) + " (" +
         std::to_string(s.value("silent_rounds", 0)) + " rounds)";
}

}  // namespace

int CmdClusterStatus(const ClientOptions& o) {
  ApiAnswer a = CallApi(o, "GET", "/api/v1/cluster");
  if (a.exit_code != kExitOk) return a.exit_code;
  const json& c = a.body;
  if (o.output == "json") {
    std::cout << c.dump(2) << "\n";
    return kExitOk;
  }
  if (FieldText(c, "role") == "single") {
    std::cout << "single replica (state.backend sqlite): no cluster, no quorum\n";
    return kExitOk;
  }
  std::cout << "asked: " << FieldText(c, "replica") << " (" << FieldText(c, "role") << ")\n";
  const json leader = c.value("leader", json());
  if (leader.is_object()) {
    std::cout << "leader: " << FieldText(leader, "replica") << " at " << FieldText(leader, "api")
              << ", term " << FieldText(leader, "term");
    if (c.contains("lease"))
      std::cout << "; lease renewed " << Seconds(c["lease"].value("since_renewal_ms", 0))
                << " ago, may act for " << Seconds(c["lease"].value("may_act_for_ms", 0));
    std::cout << "\n";
  } else {
    std::cout << "leader: none right now";
    if (c.contains("etcd_error")) std::cout << " (etcd: " << FieldText(c, "etcd_error") << ")";
    std::cout << "\n";
  }
  if (c.contains("views_error")) std::cout << "views: " << FieldText(c, "views_error") << "\n";

  const json views = c.value("views", json::array());
  std::vector<std::string> regions;
  if (c.contains("quorum") && c["quorum"].is_object())
    for (const auto& [region, _] : c["quorum"].items()) regions.push_back(region);
  std::vector<std::string> header{"REPLICA", "HEARD"};
  header.insert(header.end(), regions.begin(), regions.end());
  TextTable t(header);
  for (const json& v : views) {
    std::string name = FieldText(v, "replica");
    if (v.value("self", false)) name += " (this)";
    if (!v.value("configured", true)) name += " (not in state.etcd.replicas)";
    std::vector<std::string> row{name,
                                 v["heard_ms_ago"].is_null()
                                     ? "not seen to change"
                                     : Seconds(v["heard_ms_ago"].get<std::int64_t>()) + " ago"};
    for (const std::string& region : regions)
      row.push_back(Sight(v.value("regions", json::object()).value(region, json::object())));
    t.AddRow(row);
  }
  std::cout << "\n";
  t.Print(std::cout);
  std::cout << "\n";
  TextTable q({"REGION", "UNREACHABLE BY QUORUM", "VOTES"});
  for (const std::string& region : regions) {
    const json& r = c["quorum"][region];
    q.AddRow({region, r.value("unreachable", false) ? "YES" : "no",
              FieldText(r, "votes") + " of " +
                  std::to_string(c.value("replicas", json::array()).size()) + " (a majority is " +
                  FieldText(r, "needed") + ")"});
  }
  q.Print(std::cout);
  return kExitOk;
}

}  // namespace icewarden
