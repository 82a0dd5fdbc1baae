// Builders for StateStore records, shared by the store contract tests (tests/etcd/) and the
// SQLite store's own tests (tests/unit/state/).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "state/state_store.h"

namespace icewarden::testing {

inline TableIdent T(std::string_view dotted) { return *TableIdent::Parse(dotted); }

inline AuditEvent Why(std::string action, std::string target) {
  AuditEvent e;
  e.actor = "alice";
  e.source = "cli";
  e.action = std::move(action);
  e.target = std::move(target);
  e.reason = "test";
  return e;
}

inline OwnershipChange Change(std::string_view table, Epoch expected, std::string owner,
                              std::string failover_id = "") {
  return OwnershipChange{T(table), expected, std::move(owner), std::move(failover_id)};
}

// Builders instead of designated initializers: GCC 12's -Wmissing-field-initializers warns on
// designated initializers that leave members without default member initializers.
inline Region NamedRegion(std::string name, std::string reason = "") {
  Region r;
  r.name = std::move(name);
  r.reason = std::move(reason);
  return r;
}

inline StepRecord Step(std::string failover_id, std::string step_id) {
  StepRecord s;
  s.failover_id = std::move(failover_id);
  s.step_id = std::move(step_id);
  return s;
}

inline AuditQuery AuditQueryAll() {
  AuditQuery q;
  q.limit = 0;
  return q;
}

inline OwnershipQuery AllOwnership() {
  OwnershipQuery q;
  q.limit = 0;
  return q;
}

inline Failover SampleFailover(std::string id) {
  Failover f;
  f.id = std::move(id);
  f.kind = FailoverKind::kSwitchover;
  f.scope = "namespace:eu.*";
  f.from = "us-east-1";
  f.to = "eu-west-1";
  f.runbook = "switchover.yaml";
  f.proposed_by = "bob";
  f.reason = "maintenance window";
  f.created_at = 1000;
  return f;
}

// The row of `table`, failing the test when there is none.
inline Ownership MustGetOwnership(StateStore& store, std::string_view table) {
  Result<std::optional<Ownership>> o = store.GetOwnership(T(table));
  EXPECT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_TRUE(o.ok() && o->has_value()) << table << " has no owner";
  return o.ok() && o->has_value() ? **o : Ownership{};
}

inline std::vector<AuditEvent> WholeAudit(StateStore& store) {
  Result<std::vector<AuditEvent>> events = store.ListAudit(AuditQueryAll());
  EXPECT_TRUE(events.ok()) << events.status().ToString();
  return events.ok() ? *events : std::vector<AuditEvent>{};
}

}  // namespace icewarden::testing
