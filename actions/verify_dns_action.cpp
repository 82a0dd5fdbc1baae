// verify.dns: checks that one DNS server answers a name as expected, e.g. that the
// authoritative server already hands out the new region's endpoint.
//
// Params: server (IP[:port], default port 53), name, type (A|AAAA|CNAME|TXT), expect (a
// value or a list). Succeeds when the set of records of that type in the answer is exactly
// the expected set (order and case of names do not matter; an A or AAAA query follows a
// CNAME in the answer). Idempotent: a query changes nothing. It asks once; a step that
// should wait for propagation combines it with retries.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "actions/dns_actions.h"
#include "actions/dns_client.h"
#include "actions/param_reader.h"
#include "actions/parsed_action.h"
#include "actions/preflight.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;

const std::vector<std::string> kVerifyDnsParams = {"server", "name", "type", "expect"};

struct VerifyDnsSpec {
  DnsServer server;
  std::string name;
  DnsType type = DnsType::kA;
  std::vector<std::string> expect;  // canonical, sorted
};

std::optional<VerifyDnsSpec> ParseVerifyDns(const nlohmann::json& params,
                                            std::vector<ParamError>& errors) {
  ParamReader r(&errors);
  if (!r.RequireObject(params, "")) return std::nullopt;
  r.RejectUnknown(params, "", kVerifyDnsParams);
  VerifyDnsSpec s;
  std::string why;
  if (auto server = r.String(params, "", "server", true)) {
    if (auto parsed = ParseDnsServer(*server, &why))
      s.server = *parsed;
    else
      r.Error("server", why);
  }
  if (auto name = r.String(params, "", "name", true)) {
    if (auto fq = FullyQualified(*name))
      s.name = *fq;
    else
      r.Error("name", "not a valid DNS name: '" + *name + "'");
  }
  auto type = r.OneOf(params, "", "type", {"A", "AAAA", "CNAME", "TXT"}, true);
  if (type) s.type = *ParseDnsType(*type);
  if (auto expect = r.StringOrList(params, "", "expect", true); expect && type) {
    for (size_t i = 0; i < expect->size(); ++i) {
      auto v = CanonicalDnsValue(s.type, (*expect)[i], &why);
      if (!v) {
        r.Error(
            expect->size() == 1 && params["expect"].is_string() ? "expect" : ParamPath("expect", i),
            why);
        continue;
      }
      s.expect.push_back(*v);
    }
    std::sort(s.expect.begin(), s.expect.end());
    s.expect.erase(std::unique(s.expect.begin(), s.expect.end()), s.expect.end());
  }
  if (!r.ok()) return std::nullopt;
  return s;
}

std::string Join(const std::vector<std::string>& values) {
  std::string s;
  for (const auto& v : values) s += (s.empty() ? "" : ", ") + v;
  return s;
}

class VerifyDnsAction final : public ParsedAction<VerifyDnsSpec>, public ActionPreflight {
 public:
  // Readiness: the server answers the name at all (what it answers now is the state before
  // the failover, which the step checks after it).
  std::vector<std::string> Preflight(const nlohmann::json& params,
                                     const ActionContext& ctx) const override {
    std::vector<ParamError> errors;
    auto s = Read(params, errors);
    if (!s) return {"verify.dns: " + FirstParamError(errors)};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        ctx.deadline - std::chrono::steady_clock::now());
    DnsLookup got = QueryRRset(s->server, s->name, s->type,
                               std::clamp<std::chrono::milliseconds>(left, 1ms, 5s));
    if (!got.ok) return {"DNS server " + s->server.ToString() + " does not answer: " + got.error};
    return {};
  }

  std::string_view kind() const override { return "verify.dns"; }
  bool idempotent() const override { return true; }

 protected:
  std::optional<VerifyDnsSpec> Read(const nlohmann::json& params,
                                    std::vector<ParamError>& errors) const override {
    return ParseVerifyDns(params, errors);
  }

  std::string PlanSpec(const VerifyDnsSpec& s) const override {
    return "check that " + s.server.ToString() + " answers " + s.name + " " + DnsTypeName(s.type) +
           " with exactly " + Join(s.expect);
  }

  ActionResult RunSpec(const VerifyDnsSpec& s, const ActionContext& ctx) override {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        ctx.deadline - std::chrono::steady_clock::now());
    if (ctx.expired() || left <= 0ms)
      return ActionResult::Failed("verify.dns did not start: the step's deadline passed");
    DnsLookup got =
        QueryRRset(s.server, s.name, s.type, std::min<std::chrono::milliseconds>(left, 10s),
                   /*follow_cnames=*/true);
    const std::string asked = s.name + " " + DnsTypeName(s.type);
    if (!got.ok) return ActionResult::Failed(got.error);
    nlohmann::json detail = {
        {"server", s.server.ToString()}, {"rcode", got.rcode}, {"values", got.rrset.values}};
    const std::string dumped = DumpJson(detail);
    if (got.rrset.values == s.expect)
      return ActionResult::Succeeded(asked + " is " + Join(got.rrset.values), dumped);
    if (got.rrset.values.empty())
      return ActionResult::Failed(
          asked + " has no records (" + got.rcode + "), expected " + Join(s.expect), dumped);
    return ActionResult::Failed(
        asked + " is " + Join(got.rrset.values) + ", expected " + Join(s.expect), dumped);
  }
};

}  // namespace

std::unique_ptr<Action> MakeVerifyDnsAction() { return std::make_unique<VerifyDnsAction>(); }

}  // namespace icewarden
