// How the records of types.h and drill_store.h are kept as etcd values (etcd_store.h): one
// JSON document per key, with every field by name, so that `etcdctl get` shows what the store
// holds and a field added later reads as its default from older values. Enum values are
// their names, as everywhere else.
//
// A value this build cannot read (damaged, or written by a newer build with other enum names)
// is kInternal naming the key, as the SQLite store reports a row it does not understand.
// Thread-safety: stateless functions.
#pragma once

#include <string>
#include <string_view>

#include "state/drill_store.h"
#include "state/pause_store.h"
#include "state/status.h"
#include "state/types.h"

namespace icewarden::etcd_records {

std::string Encode(const Region& r);
std::string Encode(const Failover& f);
std::string Encode(const StepRecord& s);
std::string Encode(const AuditEvent& e);
std::string Encode(const WebhookDelivery& d);
std::string Encode(const DrillRun& r);
std::string Encode(const DrillStep& s);
std::string Encode(const DrillNote& n);
std::string Encode(const Pause& p);
// Everything but the table, which is the key.
std::string EncodeOwnership(const Ownership& o);

// Each fills `out` from the value of `key`.
Status Decode(std::string_view key, std::string_view value, Region& out);
Status Decode(std::string_view key, std::string_view value, Failover& out);
Status Decode(std::string_view key, std::string_view value, StepRecord& out);
Status Decode(std::string_view key, std::string_view value, AuditEvent& out);
Status Decode(std::string_view key, std::string_view value, WebhookDelivery& out);
Status Decode(std::string_view key, std::string_view value, DrillRun& out);
Status Decode(std::string_view key, std::string_view value, DrillStep& out);
Status Decode(std::string_view key, std::string_view value, DrillNote& out);
Status Decode(std::string_view key, std::string_view value, Pause& out);
// The owner, epoch, updated_at and failover id; the caller sets the table.
Status DecodeOwnership(std::string_view key, std::string_view value, Ownership& out);

}  // namespace icewarden::etcd_records
