// dns.rfc2136: changes records in a zone with one RFC 2136 UPDATE signed with TSIG, then
// asks the server whether every record is as intended.
//
// Params: server (IP[:port]), zone, tsig_key_name, tsig_algorithm (hmac-sha256 |
// hmac-sha512, default hmac-sha256), tsig_secret (base64), records: a list of
// {name, type (CNAME|A|AAAA|TXT), value, ttl (default 60), op (add|replace|delete, default
// replace)}. Names are relative to the zone unless they end with a dot or with the zone
// ("@" is the apex); CNAME values are fully qualified. Records with the same name and type
// form one RRset: replace sets it to exactly the values given (two replace entries give two
// values), add adds values, delete without a value removes the RRset and with a value
// removes that record.
//
// Capture reads the current RRsets before the step's first attempt; the executor journals them
// and hands them to every attempt (ctx.before_json), and Run returns them in detail_json
// ("previous"), so Compensate can put them back (replace with the old values, or delete what
// did not exist). A re-run after a crash that followed the update therefore still restores
// what was there before the step, not the update itself. Run outside an executor (no
// before_json) reads the RRsets itself. Idempotent: replace and delete are, and adding a
// record that is already there is a no-op in DNS.
//
// Fencing (fence_record: a TXT name in the zone): the UPDATE carries an RFC 2136 prerequisite
// that this TXT RRset is exactly what Capture read before the step's first attempt (or absent),
// and in the same message replaces it with "icewarden epoch=N+1 by=FAILOVER/STEP", N being the
// epoch it held (0 when none). So the server itself refuses the change of anyone who read the
// zone before another fenced change landed: a deposed leader, a stale retry, a second
// orchestrator. An attempt whose earlier try did land (the record holds this step's own next
// value) is verified, not sent again. Compensation is fenced the same way, on the value the run
// wrote.
//
// Transport: UDP when the UPDATE fits in 512 bytes, else TCP (dns_client.h); detail_json says
// which ("transport").
//
// Outcomes: REFUSED, NOTAUTH, BADSIG and other error RCODEs -> failed with the RCODE name
// (the server changed nothing); no answer after sending -> unknown; the server accepted
// but the records are not as intended -> unknown (some may have changed) or failed (none
// did).
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "actions/dns_actions.h"
#include "actions/dns_client.h"
#include "actions/param_reader.h"
#include "actions/parsed_action.h"
#include "actions/preflight.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;

const std::vector<std::string> kRfc2136Params = {
    "server", "zone", "tsig_key_name", "tsig_algorithm", "tsig_secret", "records", "fence_record"};
const std::vector<std::string> kRecordParams = {"name", "type", "value", "ttl", "op"};

// Everything asked of one RRset, merged from the records that name it.
struct RRsetChange {
  std::string name;
  DnsType type = DnsType::kA;
  bool replace = false;       // the RRset becomes exactly `add`
  bool delete_rrset = false;  // the RRset goes away
  std::vector<std::string> add;
  std::vector<std::string> remove;
  uint32_t ttl = 60;
  size_t first_record = 0;  // index in params.records, for messages
};

struct Rfc2136Spec {
  DnsServer server;
  std::string zone;  // fully qualified
  TsigKey key;
  std::vector<RRsetChange> rrsets;  // in the order first named
  std::string fence_record;         // fully qualified TXT name; empty: no fencing
};

// The fence record's next value after `now` (its values when read before the step).
// The record is read from the zone, so it can hold anything: an epoch that is not ours, not a
// number, or one that cannot be raised counts as 0 (the prerequisite still holds it exactly).
std::string NextFenceValue(const std::vector<std::string>& now, const ActionContext& ctx) {
  std::uint64_t epoch = 0;
  if (now.size() == 1) {
    const std::string& v = now.front();
    if (auto at = v.find("epoch="); at != std::string::npos) {
      const char* first = v.data() + at + 6;
      const char* last = v.data() + v.size();
      auto [end, ec] = std::from_chars(first, last, epoch);
      if (ec != std::errc() || (end != last && *end != ' ') ||
          epoch == std::numeric_limits<std::uint64_t>::max())
        epoch = 0;
    }
  }
  std::string by = ctx.failover_id.empty() ? "manual" : ctx.failover_id;
  if (!ctx.step_id.empty()) by += "/" + ctx.step_id;
  return "icewarden epoch=" + std::to_string(epoch + 1) + " by=" + by;
}

std::string Join(const std::vector<std::string>& values) {
  std::string s;
  for (const auto& v : values) s += (s.empty() ? "" : ", ") + v;
  return s.empty() ? "nothing" : s;
}

// The record's owner, fully qualified: absolute when it ends with a dot or with the zone.
std::optional<std::string> OwnerName(const std::string& name, const std::string& zone) {
  if (name == "@") return zone;
  const std::string bare = zone.substr(0, zone.size() - 1);
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool absolute =
      (!lower.empty() && lower.back() == '.') || lower == bare ||
      (lower.size() > bare.size() &&
       lower.compare(lower.size() - bare.size() - 1, std::string::npos, "." + bare) == 0);
  return FullyQualified(absolute ? lower : lower + "." + zone);
}

bool InZone(const std::string& fqdn, const std::string& zone) {
  return fqdn == zone ||
         (fqdn.size() > zone.size() &&
          fqdn.compare(fqdn.size() - zone.size() - 1, std::string::npos, "." + zone) == 0);
}

void ReadRecord(const nlohmann::json& rec, const std::string& path, size_t index,
                const std::string& zone, ParamReader& r, std::vector<RRsetChange>& rrsets) {
  if (!r.RequireObject(rec, path)) return;
  r.RejectUnknown(rec, path, kRecordParams);
  const size_t before = r.errors().size();
  std::string why;
  std::optional<std::string> owner;
  if (auto name = r.String(rec, path, "name", true); name && !zone.empty()) {
    owner = OwnerName(*name, zone);
    if (!owner)
      r.Error(ParamPath(path, "name"), "not a valid DNS name: '" + *name + "'");
    else if (!InZone(*owner, zone))
      r.Error(ParamPath(path, "name"), *owner + " is outside zone " + zone);
  }
  auto type_name = r.OneOf(rec, path, "type", {"CNAME", "A", "AAAA", "TXT"}, true);
  const std::string op =
      r.OneOf(rec, path, "op", {"add", "replace", "delete"}, false).value_or("replace");
  std::optional<std::string> value = r.String(rec, path, "value", op != "delete");
  if (value && type_name) {
    value = CanonicalDnsValue(*ParseDnsType(*type_name), *value, &why);
    if (!value) r.Error(ParamPath(path, "value"), why);
  }
  uint32_t ttl = 60;
  if (auto t = r.Integer(rec, path, "ttl", false)) {
    if (*t < 0 || *t > 2147483647)
      r.Error(ParamPath(path, "ttl"), "must be from 0 to 2147483647 seconds");
    else
      ttl = static_cast<uint32_t>(*t);
    if (op == "delete") r.Error(ParamPath(path, "ttl"), "not used with op: delete");
  }
  if (r.errors().size() != before || !owner || !type_name) return;

  const DnsType type = *ParseDnsType(*type_name);
  RRsetChange* set = nullptr;
  for (auto& s : rrsets)
    if (s.name == *owner && s.type == type) set = &s;
  if (!set) {
    rrsets.push_back(RRsetChange{*owner, type, false, false, {}, {}, ttl, index});
    set = &rrsets.back();
  }
  const std::string other = "records[" + std::to_string(set->first_record) + "]";
  const bool first = set->first_record == index;
  const bool adds = op != "delete";
  if (!first && (set->delete_rrset || (op == "delete" && !value) ||
                 (op == "delete" && set->replace) || (op == "replace" && !set->remove.empty()))) {
    r.Error(path, "conflicts with " + other + ", which changes the same RRset (" + *owner + " " +
                      *type_name + ") differently");
    return;
  }
  if (adds && !first && !set->add.empty() && ttl != set->ttl) {
    r.Error(ParamPath(path, "ttl"), "differs from the ttl of " + other + ": one RRset has one ttl");
    return;
  }
  if (adds) {
    set->ttl = ttl;
    set->replace = set->replace || op == "replace";
    if (std::find(set->add.begin(), set->add.end(), *value) == set->add.end())
      set->add.push_back(*value);
  } else if (value) {
    if (std::find(set->add.begin(), set->add.end(), *value) != set->add.end()) {
      r.Error(path, "deletes the value that " + other + " adds");
      return;
    }
    set->remove.push_back(*value);
  } else {
    set->delete_rrset = true;
  }
  if (type == DnsType::kCNAME && set->add.size() > 1)
    r.Error(ParamPath(path, "value"),
            "a CNAME RRset holds one name; " + other + " already sets " + set->add.front());
  std::sort(set->add.begin(), set->add.end());
}

std::optional<Rfc2136Spec> ParseRfc2136(const nlohmann::json& params,
                                        std::vector<ParamError>& errors) {
  ParamReader r(&errors);
  if (!r.RequireObject(params, "")) return std::nullopt;
  r.RejectUnknown(params, "", kRfc2136Params);
  Rfc2136Spec s;
  std::string why;
  if (auto server = r.String(params, "", "server", true)) {
    if (auto parsed = ParseDnsServer(*server, &why))
      s.server = *parsed;
    else
      r.Error("server", why);
  }
  if (auto zone = r.String(params, "", "zone", true)) {
    if (auto fq = FullyQualified(*zone))
      s.zone = *fq;
    else
      r.Error("zone", "not a valid DNS name: '" + *zone + "'");
  }
  if (auto name = r.String(params, "", "tsig_key_name", true)) {
    if (!FullyQualified(*name))
      r.Error("tsig_key_name", "not a valid key name: '" + *name + "'");
    else
      s.key.name = *name;
  }
  s.key.algorithm = r.OneOf(params, "", "tsig_algorithm", {"hmac-sha256", "hmac-sha512"}, false)
                        .value_or("hmac-sha256");
  if (auto secret = r.String(params, "", "tsig_secret", true)) {
    if (!IsBase64(*secret))
      r.Error("tsig_secret", "expected the key's secret in base64");  // never echo it
    else
      s.key.secret = *secret;
  }
  if (auto fence = r.String(params, "", "fence_record", false); fence && !s.zone.empty()) {
    auto owner = OwnerName(*fence, s.zone);
    if (!owner)
      r.Error("fence_record", "not a valid DNS name: '" + *fence + "'");
    else if (!InZone(*owner, s.zone))
      r.Error("fence_record", *owner + " is outside zone " + s.zone);
    else
      s.fence_record = *owner;
  }
  if (const nlohmann::json* records = r.Member(params, "", "records", true)) {
    if (!records->is_array() || records->empty()) {
      r.Error("records", "expected a non-empty list of records, got " + DescribeJsonType(*records));
    } else {
      for (size_t i = 0; i < records->size(); ++i)
        ReadRecord((*records)[i], ParamPath("records", i), i, s.zone, r, s.rrsets);
    }
  }
  for (const auto& set : s.rrsets)
    if (!s.fence_record.empty() && set.name == s.fence_record && set.type == DnsType::kTXT)
      r.Error(ParamPath("records", set.first_record),
              "changes the fence record " + s.fence_record + ", which the step itself sets");
  if (!r.ok()) return std::nullopt;
  return s;
}

std::vector<DnsChange> Changes(const std::vector<RRsetChange>& rrsets) {
  std::vector<DnsChange> out;
  for (const auto& s : rrsets) {
    if (s.delete_rrset || s.replace)
      out.push_back({DnsChange::Op::kDeleteRRset, s.name, s.type, 0, ""});
    if (s.delete_rrset) continue;
    for (const auto& v : s.add) out.push_back({DnsChange::Op::kAdd, s.name, s.type, s.ttl, v});
    for (const auto& v : s.remove)
      out.push_back({DnsChange::Op::kDeleteValue, s.name, s.type, 0, v});
  }
  return out;
}

// What is wrong with `now` given what was asked; "" when it is as intended.
std::string Mismatch(const RRsetChange& want, const std::vector<std::string>& now) {
  const std::string what = want.name + " " + DnsTypeName(want.type);
  if (want.delete_rrset) return now.empty() ? "" : what + " still has " + Join(now);
  if (want.replace)
    return now == want.add ? "" : what + " is " + Join(now) + ", expected " + Join(want.add);
  for (const auto& v : want.add)
    if (std::find(now.begin(), now.end(), v) == now.end())
      return what + " is " + Join(now) + ", missing " + v;
  for (const auto& v : want.remove)
    if (std::find(now.begin(), now.end(), v) != now.end()) return what + " still has " + v;
  return "";
}

std::string Describe(const RRsetChange& s) {
  const std::string what = s.name + " " + DnsTypeName(s.type);
  if (s.delete_rrset) return "delete " + what;
  std::string line;
  if (!s.add.empty())
    line = (s.replace ? "replace " : "add ") + what + " " + Join(s.add) + " ttl " +
           std::to_string(s.ttl);
  if (!s.remove.empty())
    line += std::string(line.empty() ? "" : ", ") + "remove " + what + " " + Join(s.remove);
  return line;
}

nlohmann::json RRsetJson(const RRset& r) {
  return {{"name", r.name}, {"type", DnsTypeName(r.type)}, {"ttl", r.ttl}, {"values", r.values}};
}

nlohmann::json RRsetsJson(const std::vector<RRset>& rrsets) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rrsets) out.push_back(RRsetJson(r));
  return out;
}

// The inverse of RRsetJson; nullopt when `j` is not one.
std::optional<RRset> RRsetFromJson(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string() || !j.contains("type") ||
      !j["type"].is_string() || !j.contains("values") || !j["values"].is_array())
    return std::nullopt;
  auto type = ParseDnsType(j["type"].get<std::string>());
  if (!type) return std::nullopt;
  RRset r;
  r.name = j["name"].get<std::string>();
  r.type = *type;
  r.ttl = j.value("ttl", 0u);
  for (const auto& v : j["values"]) {
    if (!v.is_string()) return std::nullopt;
    r.values.push_back(v.get<std::string>());
  }
  return r;
}

std::chrono::milliseconds Left(const ActionContext& ctx, std::chrono::milliseconds cap) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      ctx.deadline - std::chrono::steady_clock::now());
  return std::clamp<std::chrono::milliseconds>(left, 1ms, cap);
}

// A fenced UPDATE: the fence record must be exactly `expected` (empty: absent); `landed` is the
// value it holds once this very change has been applied.
struct Fence {
  std::string name;
  std::vector<std::string> expected;
  std::string landed;
};

// Sends `changes` and checks the result against `wanted`; `detail` is completed and
// returned inside the result.
ActionResult UpdateAndVerify(const Rfc2136Spec& s, const std::vector<DnsChange>& changes,
                             const std::vector<RRsetChange>& wanted,
                             const std::vector<RRset>& before, nlohmann::json detail,
                             const std::string& what, const ActionContext& ctx,
                             const Fence* fence = nullptr) {
  const std::string where = "zone " + s.zone + " at " + s.server.ToString();
  if (ctx.expired())
    return ActionResult::Failed(what + " not sent: the step was cancelled or timed out",
                                DumpJson(detail));
  std::vector<DnsPrerequisite> prerequisites;
  if (fence) prerequisites.push_back({fence->name, DnsType::kTXT, fence->expected});
  DnsUpdateOutcome sent =
      SendDnsUpdate(s.server, s.zone, s.key, changes, Left(ctx, 10s), prerequisites);
  if (!sent.transport.empty()) detail["transport"] = sent.transport;
  if (fence && sent.status == DnsUpdateOutcome::Status::kRejected &&
      (sent.rcode.rfind("NXRRSET", 0) == 0 || sent.rcode.rfind("YXRRSET", 0) == 0)) {
    // The fence did not hold. Either an earlier attempt of this change landed (the record
    // holds its value: verify it), or someone else changed the zone since it was read.
    DnsLookup now = QueryRRset(s.server, fence->name, DnsType::kTXT, Left(ctx, 5s));
    detail["rcode"] = sent.rcode;
    if (!now.ok)
      return ActionResult::Failed(what + " of " + where + " refused (" + sent.rcode +
                                      ") and the fence record could not be read: " + now.error,
                                  DumpJson(detail));
    if (now.rrset.values != std::vector<std::string>{fence->landed}) {
      detail["fence_now"] = now.rrset.values;
      return ActionResult::Failed(
          what + " of " + where + " refused by the server (" + sent.rcode + "): fence record " +
              fence->name + " TXT is " + Join(now.rrset.values) + ", not " + Join(fence->expected) +
              " as read before this step, so another writer changed the zone since (a newer "
              "leader or another failover); nothing was changed",
          DumpJson(detail));
    }
    detail["landed_before"] = true;  // this change was applied by an earlier attempt
    sent.status = DnsUpdateOutcome::Status::kApplied;
    sent.rcode = "NOERROR";
  }
  switch (sent.status) {
    case DnsUpdateOutcome::Status::kNotSent:
      return ActionResult::Failed(what + " of " + where + " not sent: " + sent.error,
                                  DumpJson(detail));
    case DnsUpdateOutcome::Status::kNoAnswer:
      return ActionResult::Unknown(what + " of " + where + " sent, but " + sent.error,
                                   DumpJson(detail));
    case DnsUpdateOutcome::Status::kRejected:
      detail["rcode"] = sent.rcode;
      return ActionResult::Failed(what + " of " + where + " refused: " + sent.rcode + " (key " +
                                      s.key.name + ", " + s.key.algorithm + ")",
                                  DumpJson(detail));
    case DnsUpdateOutcome::Status::kApplied:
      break;
  }
  detail["rcode"] = sent.rcode;
  std::vector<std::string> problems;
  bool changed_any = false;
  for (size_t i = 0; i < wanted.size(); ++i) {
    DnsLookup now = QueryRRset(s.server, wanted[i].name, wanted[i].type, Left(ctx, 5s));
    if (!now.ok)
      return ActionResult::Unknown(
          what + " of " + where + " accepted, but checking it failed: " + now.error,
          DumpJson(detail));
    if (i < before.size() && now.rrset.values != before[i].values) changed_any = true;
    if (std::string m = Mismatch(wanted[i], now.rrset.values); !m.empty()) problems.push_back(m);
  }
  if (problems.empty()) {
    std::string done;
    for (const auto& w : wanted) done += (done.empty() ? "" : "; ") + Describe(w);
    return ActionResult::Succeeded(what + " of " + where + " applied: " + done, DumpJson(detail));
  }
  std::string reason = what + " of " + where + " accepted, but " + problems.front();
  if (problems.size() > 1) reason += " (and " + std::to_string(problems.size() - 1) + " more)";
  if (changed_any) return ActionResult::Unknown(reason, DumpJson(detail));
  return ActionResult::Failed(reason + "; nothing changed", DumpJson(detail));
}

// The RRsets the step names, as the server has them now. Unsigned queries: reading needs no
// key.
Result<std::vector<RRset>> ReadRRsets(const DnsServer& server,
                                      const std::vector<RRsetChange>& rrsets,
                                      const ActionContext& ctx) {
  std::vector<RRset> out;
  for (const auto& r : rrsets) {
    DnsLookup got = QueryRRset(server, r.name, r.type, Left(ctx, 5s));
    if (!got.ok)
      return Status::Unavailable("could not read the current records before updating: " +
                                 got.error);
    out.push_back(got.rrset);
  }
  return out;
}

// The RRsets Capture recorded: {"previous": [RRsetJson...]}.
Result<std::vector<RRset>> CapturedRRsets(const std::string& before_json) {
  auto j = nlohmann::json::parse(before_json, nullptr, false);
  if (!j.is_object() || !j.contains("previous") || !j["previous"].is_array())
    return Status::InvalidArgument("the records captured before the step are malformed: " +
                                   before_json);
  std::vector<RRset> out;
  for (const auto& p : j["previous"]) {
    auto r = RRsetFromJson(p);
    if (!r)
      return Status::InvalidArgument("a record captured before the step is malformed: " + p.dump());
    out.push_back(std::move(*r));
  }
  return out;
}

class DnsRfc2136Action final : public ParsedAction<Rfc2136Spec>, public ActionPreflight {
 public:
  // Readiness: an UPDATE whose only content is a prerequisite, so that the server checks our
  // TSIG key and its permission to update the zone, and changes nothing.
  std::vector<std::string> Preflight(const nlohmann::json& params,
                                     const ActionContext& ctx) const override {
    std::vector<ParamError> errors;
    auto s = Read(params, errors);
    if (!s) return {"dns.rfc2136: " + FirstParamError(errors)};
    const std::string where = "DNS server " + s->server.ToString();
    DnsUpdateOutcome out = SendDnsPrerequisiteOnlyUpdate(s->server, s->zone, s->key, Left(ctx, 5s));
    switch (out.status) {
      case DnsUpdateOutcome::Status::kApplied:
        return {};
      case DnsUpdateOutcome::Status::kRejected:
        if (out.rcode.rfind("NOTAUTH", 0) == 0 && out.rcode.find("TSIG") != std::string::npos)
          return {where + " does not accept TSIG key " + s->key.name + " (" + s->key.algorithm +
                  ") for zone " + s->zone + ": " + out.rcode};
        if (out.rcode.rfind("REFUSED", 0) == 0)
          return {where + " refuses updates of zone " + s->zone + " signed with TSIG key " +
                  s->key.name + ": " + out.rcode};
        return {where + " rejected a prerequisite-only UPDATE of zone " + s->zone + " (TSIG key " +
                s->key.name + "): " + out.rcode};
      case DnsUpdateOutcome::Status::kNoAnswer:
        return {where + " did not answer a prerequisite-only UPDATE of zone " + s->zone + ": " +
                out.error};
      case DnsUpdateOutcome::Status::kNotSent:
        return {where + ": cannot send a prerequisite-only UPDATE of zone " + s->zone + ": " +
                out.error};
    }
    return {};
  }

  std::string_view kind() const override { return "dns.rfc2136"; }
  bool idempotent() const override { return true; }
  bool has_compensation() const override { return true; }

  Result<std::string> Capture(const nlohmann::json& params, const ActionContext& ctx) override {
    std::vector<ParamError> errors;
    auto s = Read(params, errors);
    if (!s) return Status::InvalidArgument(FirstParamError(errors));
    auto before = ReadRRsets(s->server, s->rrsets, ctx);
    if (!before.ok()) return before.status();
    nlohmann::json captured{{"previous", RRsetsJson(*before)}};
    if (!s->fence_record.empty()) {
      auto fence = ReadFence(*s, ctx);
      if (!fence.ok()) return fence.status();
      captured["fence"] = RRsetJson(*fence);
    }
    return DumpJson(captured);
  }

  ActionResult Compensate(const nlohmann::json& params, const nlohmann::json& run_detail,
                          const ActionContext& ctx) override {
    std::vector<ParamError> errors;
    auto s = Read(params, errors);
    if (!s) return ActionResult::Failed(FirstParamError(errors));
    const auto it = run_detail.find("previous");
    if (it == run_detail.end() || !it->is_array())
      return ActionResult::Failed("cannot restore: the run's detail has no previous records");
    std::vector<RRsetChange> restore;
    for (const auto& p : *it) {
      auto previous = RRsetFromJson(p);
      if (!previous)
        return ActionResult::Failed("cannot restore: malformed previous record " + p.dump());
      RRsetChange r;
      r.name = previous->name;
      r.type = previous->type;
      r.ttl = previous->ttl > 0 ? previous->ttl : 60;
      r.add = previous->values;
      std::sort(r.add.begin(), r.add.end());
      // Put back exactly what was there; an RRset that did not exist is deleted.
      r.replace = !r.add.empty();
      r.delete_rrset = r.add.empty();
      r.first_record = restore.size();
      if (!InZone(r.name, s->zone))
        return ActionResult::Failed("cannot restore " + r.name + ": outside zone " + s->zone);
      restore.push_back(r);
    }
    if (restore.empty()) return ActionResult::Succeeded("nothing to restore");
    // What is there now, so that a restore the server accepted but did not fully apply is
    // told apart from one that changed nothing.
    auto current = ReadRRsets(s->server, restore, ctx);
    if (!current.ok()) return ActionResult::Failed(current.status().message());
    std::vector<RRset> before = std::move(*current);
    nlohmann::json detail = {
        {"server", s->server.ToString()}, {"zone", s->zone}, {"restored", *it}};
    const auto fenced = run_detail.find("fence");
    if (s->fence_record.empty() || fenced == run_detail.end() || !fenced->is_object())
      return UpdateAndVerify(*s, Changes(restore), restore, before, std::move(detail),
                             "restoring UPDATE", ctx);
    // Only over the run's own change: the fence must still hold what the run wrote.
    const auto ran = fenced->find("now");
    const auto was = fenced->find("was");
    if (ran == fenced->end() || !ran->is_string() || ran->get<std::string>().empty() ||
        was == fenced->end() || !was->is_array())
      return ActionResult::Failed("cannot restore: the run's detail has no fence values: " +
                                  fenced->dump());
    auto fence_now = ReadFence(*s, ctx);
    if (!fence_now.ok()) return ActionResult::Failed(fence_now.status().message());
    if (nlohmann::json(fence_now->values) == *was)
      return ActionResult::Succeeded("nothing to restore: the fenced UPDATE never landed (" +
                                     s->fence_record + " TXT is still " + Join(fence_now->values) +
                                     ")");
    ActionContext undo = ctx;
    undo.step_id += "/compensate";
    const std::vector<std::string> expected{ran->get<std::string>()};
    return FencedUpdate(*s, std::move(restore), std::move(before), *fence_now, expected, undo,
                        std::move(detail), "fenced restoring UPDATE", ctx);
  }

 protected:
  std::optional<Rfc2136Spec> Read(const nlohmann::json& params,
                                  std::vector<ParamError>& errors) const override {
    return ParseRfc2136(params, errors);
  }

  std::string PlanSpec(const Rfc2136Spec& s) const override {
    std::string changes;
    for (const auto& r : s.rrsets) changes += (changes.empty() ? "" : "; ") + Describe(r);
    const std::string fenced =
        s.fence_record.empty()
            ? ""
            : " only if fence record " + s.fence_record +
                  " TXT is as read before the step, raising its epoch in the same UPDATE,";
    return "RFC 2136 UPDATE of zone " + s.zone + " at " + s.server.ToString() +
           " signed with TSIG key " + s.key.name + " (" + s.key.algorithm + ")" + fenced + ": " +
           changes + "; then query to verify";
  }

  ActionResult RunSpec(const Rfc2136Spec& s, const ActionContext& ctx) override {
    if (ctx.expired()) return ActionResult::Failed("dns.rfc2136 did not start: step expired");
    // The RRsets from before the step, for Compensate: as captured before the first attempt,
    // else as they are now.
    Result<std::vector<RRset>> before = ctx.before_json.empty()
                                            ? ReadRRsets(s.server, s.rrsets, ctx)
                                            : CapturedRRsets(ctx.before_json);
    if (!before.ok()) return ActionResult::Failed(before.status().message());
    nlohmann::json detail = {
        {"server", s.server.ToString()}, {"zone", s.zone}, {"previous", RRsetsJson(*before)}};
    if (s.fence_record.empty())
      return UpdateAndVerify(s, Changes(s.rrsets), s.rrsets, *before, std::move(detail), "UPDATE",
                             ctx);
    // The fence as read before the first attempt, so that every attempt expects the same.
    Result<RRset> fence_before =
        ctx.before_json.empty() ? ReadFence(s, ctx) : CapturedFence(ctx.before_json);
    if (!fence_before.ok()) return ActionResult::Failed(fence_before.status().message());
    return FencedUpdate(s, s.rrsets, std::move(*before), *fence_before, fence_before->values, ctx,
                        std::move(detail), "fenced UPDATE", ctx);
  }

 private:
  // `wanted` plus the fence record raised past `expected`, sent only if the fence record is
  // still `expected`; `fence_now` is the record as read (for telling what changed). `by` names
  // the writer in the record's new value.
  static ActionResult FencedUpdate(const Rfc2136Spec& s, std::vector<RRsetChange> wanted,
                                   std::vector<RRset> before, const RRset& fence_now,
                                   const std::vector<std::string>& expected,
                                   const ActionContext& by, nlohmann::json detail,
                                   const std::string& what, const ActionContext& ctx) {
    const Fence fence{s.fence_record, expected, NextFenceValue(expected, by)};
    wanted.push_back(FenceChange(s, fence.landed));
    before.push_back(fence_now);
    detail["fence"] = {{"name", fence.name}, {"was", fence.expected}, {"now", fence.landed}};
    return UpdateAndVerify(s, Changes(wanted), wanted, before, std::move(detail), what, ctx,
                           &fence);
  }

  // The fence record as one more RRset of the step: replaced by exactly `value`.
  static RRsetChange FenceChange(const Rfc2136Spec& s, const std::string& value) {
    RRsetChange c;
    c.name = s.fence_record;
    c.type = DnsType::kTXT;
    c.replace = true;
    if (!value.empty()) c.add = {value};
    c.ttl = 60;
    c.first_record = s.rrsets.size();
    return c;
  }
  static Result<RRset> ReadFence(const Rfc2136Spec& s, const ActionContext& ctx) {
    auto got = ReadRRsets(s.server, {FenceChange(s, "")}, ctx);
    if (!got.ok()) return got.status();
    return got->front();
  }
  static Result<RRset> CapturedFence(const std::string& before_json) {
    auto j = nlohmann::json::parse(before_json, nullptr, false);
    if (!j.is_object() || !j.contains("fence"))
      return Status::InvalidArgument("no fence record was captured before the step");
    auto r = RRsetFromJson(j["fence"]);
    if (!r) return Status::InvalidArgument("the captured fence record is malformed");
    return *r;
  }
};

}  // namespace

std::unique_ptr<Action> MakeDnsRfc2136Action() { return std::make_unique<DnsRfc2136Action>(); }

}  // namespace icewarden
