#include "state/etcd_records.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "state/json_text.h"

// std::optional as null or the value (nlohmann 3.11 has no built-in mapping).
namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v) {
      j = *v;
    } else {
      j = nullptr;
    }
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null()) {
      v.reset();
    } else {
      v = j.get<T>();
    }
  }
};
}  // namespace nlohmann

namespace icewarden {
namespace {

using nlohmann::json;

// An enum as its name; a name this build does not know throws, and Decode reports it.
template <typename E, typename Parse>
void FromName(const json& j, E& e, Parse parse) {
  const std::string name = j.get<std::string>();
  std::optional<E> parsed = parse(name);
  if (!parsed) throw std::invalid_argument("unknown name '" + name + "'");
  e = *parsed;
}

}  // namespace

void to_json(json& j, RegionHealth e) { j = RegionHealthName(e); }
void from_json(const json& j, RegionHealth& e) { FromName(j, e, ParseRegionHealth); }
void to_json(json& j, FailoverPhase e) { j = FailoverPhaseName(e); }
void from_json(const json& j, FailoverPhase& e) { FromName(j, e, ParseFailoverPhase); }
void to_json(json& j, FailoverKind e) { j = FailoverKindName(e); }
void from_json(const json& j, FailoverKind& e) { FromName(j, e, ParseFailoverKind); }
void to_json(json& j, FencingKind e) { j = FencingKindName(e); }
void from_json(const json& j, FencingKind& e) { FromName(j, e, ParseFencingKind); }
void to_json(json& j, StepState e) { j = StepStateName(e); }
void from_json(const json& j, StepState& e) { FromName(j, e, ParseStepState); }
void to_json(json& j, DrillPhase e) { j = DrillPhaseName(e); }
void from_json(const json& j, DrillPhase& e) { FromName(j, e, ParseDrillPhase); }

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Region, name, health, fenced, maintenance,
                                                consecutive_failures, consecutive_successes, reason,
                                                since)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Approval, by, reason, at, plan_hash, expires_at)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FencingConfirmation, kind, by, reason, at,
                                                evidence_json)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FailoverPlanRef, route, runbook_hash, plan_hash,
                                                params_json)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FailoverAck, by, comment, at)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Failover, id, kind, scope, from, to, runbook, phase,
                                                proposed_by, reason, approvals, fencing,
                                                accept_data_loss, last_reason, plan, promotion_hold,
                                                guard_checks_json, detected_at, rpo_json, ack,
                                                created_at, updated_at, version)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StepRecord, failover_id, step_id, section, action,
                                                state, attempt, reason, result_json, started_at,
                                                finished_at)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AuditEvent, seq, at, actor, source, action, target,
                                                reason, detail_json, prev_sha256, sha256)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(WebhookDelivery, key, source, alert, status,
                                                starts_at, effect, region, failover_id, outcome,
                                                received_at)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DrillRun, id, drill, mode, phase, trigger,
                                                scheduled_for, verdict, verdict_reason,
                                                failing_step, failover_id, failback_id, scope, from,
                                                to, result_json, started_at, finished_at, version)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DrillStep, run_id, step_id, ordinal, section,
                                                action, state, attempts, error, params_json,
                                                before_json, detail_json, cleanup, cleanup_reason,
                                                started_at, finished_at)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DrillNote, run_id, by, text, at)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Pause, scope, by, reason, since, expected_end)

namespace etcd_records {
namespace {

template <typename T>
std::string EncodeAny(const T& v) {
  return DumpJson(json(v));
}

template <typename T>
Status DecodeAny(std::string_view key, std::string_view value, T& out) {
  try {
    out = json::parse(value).get<T>();
    return Status::Ok();
  } catch (const std::exception& e) {
    // A key is a path of printable names except the ownership keys' separators.
    std::string shown(key);
    for (char& c : shown)
      if (static_cast<unsigned char>(c) < 0x20) c = '.';
    return Status::Internal("etcd key " + shown + " holds a value this build cannot read (" +
                            e.what() + ")");
  }
}

struct OwnershipValue {
  std::string owner{};
  Epoch epoch = 0;
  UnixMillis updated_at = 0;
  std::string failover_id{};
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(OwnershipValue, owner, epoch, updated_at,
                                                failover_id)

}  // namespace

std::string Encode(const Region& r) { return EncodeAny(r); }
std::string Encode(const Failover& f) { return EncodeAny(f); }
std::string Encode(const StepRecord& s) { return EncodeAny(s); }
std::string Encode(const AuditEvent& e) { return EncodeAny(e); }
std::string Encode(const WebhookDelivery& d) { return EncodeAny(d); }
std::string Encode(const DrillRun& r) { return EncodeAny(r); }
std::string Encode(const DrillStep& s) { return EncodeAny(s); }
std::string Encode(const DrillNote& n) { return EncodeAny(n); }
std::string Encode(const Pause& p) { return EncodeAny(p); }
std::string EncodeOwnership(const Ownership& o) {
  return EncodeAny(OwnershipValue{o.owner, o.epoch, o.updated_at, o.failover_id});
}

Status Decode(std::string_view k, std::string_view v, Region& out) { return DecodeAny(k, v, out); }
Status Decode(std::string_view k, std::string_view v, Failover& out) {
  return DecodeAny(k, v, out);
}
Status Decode(std::string_view k, std::string_view v, StepRecord& out) {
  return DecodeAny(k, v, out);
}
Status Decode(std::string_view k, std::string_view v, AuditEvent& out) {
  return DecodeAny(k, v, out);
}
Status Decode(std::string_view k, std::string_view v, WebhookDelivery& out) {
  return DecodeAny(k, v, out);
}
Status Decode(std::string_view k, std::string_view v, DrillRun& out) {
  return DecodeAny(k, v, out);
}
Status Decode(std::string_view k, std::string_view v, DrillStep& out) {
  return DecodeAny(k, v, out);
}
Status Decode(std::string_view k, std::string_view v, DrillNote& out) {
  return DecodeAny(k, v, out);
}
Status Decode(std::string_view k, std::string_view v, Pause& out) { return DecodeAny(k, v, out); }
Status DecodeOwnership(std::string_view k, std::string_view v, Ownership& out) {
  OwnershipValue o;
  if (Status s = DecodeAny(k, v, o); !s.ok()) return s;
  out.owner = std::move(o.owner);
  out.epoch = o.epoch;
  out.updated_at = o.updated_at;
  out.failover_id = std::move(o.failover_id);
  return Status::Ok();
}

}  // namespace etcd_records
}  // namespace icewarden
