// Webhook deliveries in the SQLite store: the idempotency record of alert webhooks.
#include "state/sqlite_store_internal.h"

namespace icewarden {
namespace {

constexpr const char* kDeliveryColumns =
    "key, source, alert, status, starts_at, effect, region, failover_id, outcome, received_at";

WebhookDelivery ReadDelivery(const SqliteStatement& s) {
  WebhookDelivery d;
  d.key = s.ColumnText(0);
  d.source = s.ColumnText(1);
  d.alert = s.ColumnText(2);
  d.status = s.ColumnText(3);
  d.starts_at = s.ColumnText(4);
  d.effect = s.ColumnText(5);
  d.region = s.ColumnText(6);
  d.failover_id = s.ColumnText(7);
  d.outcome = s.ColumnText(8);
  d.received_at = s.ColumnInt(9);
  return d;
}

}  // namespace

Status SqliteStore::RecordWebhookDelivery(const WebhookDelivery& d, const AuditEvent& why) {
  std::lock_guard lock(mu_);
  if (d.key.empty()) return Status::InvalidArgument("a webhook delivery needs a key");
  if (Status s = ValidateAudit(why); !s.ok()) return s;
  Result<SqliteStatement*> stmt = Statement(
      std::string("INSERT INTO webhook_deliveries (") + kDeliveryColumns +
          ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (key) DO NOTHING",
      "recording a webhook delivery");
  if (!stmt.ok()) return stmt.status();
  SqliteWriteTransaction txn(db_);
  if (Status s = BeginWrite(txn, Durability::kDurable, "record webhook delivery"); !s.ok())
    return s;
  SqliteStatement& s = **stmt;
  s.BindText(1, d.key);
  s.BindText(2, d.source);
  s.BindText(3, d.alert);
  s.BindText(4, d.status);
  s.BindText(5, d.starts_at);
  s.BindText(6, d.effect);
  s.BindText(7, d.region);
  s.BindText(8, d.failover_id);
  s.BindText(9, d.outcome);
  s.BindInt(10, d.received_at != 0 ? d.received_at : clock_->Now());
  if (Status st = s.Run(); !st.ok()) return st;
  // The conflict is the idempotency answer, not an error to log: nothing is written.
  if (db_.changes() == 0) return Status::Conflict("webhook delivery " + d.key + " is recorded");
  if (Status st = InsertAudit(why); !st.ok()) return st;
  return txn.Commit();
}

Result<std::optional<WebhookDelivery>> SqliteStore::GetWebhookDelivery(const std::string& key) {
  std::lock_guard lock(mu_);
  Result<SqliteStatement*> stmt = Statement(
      std::string("SELECT ") + kDeliveryColumns + " FROM webhook_deliveries WHERE key = ?1",
      "reading a webhook delivery");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  (*stmt)->BindText(1, key);
  Result<bool> row = (*stmt)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<WebhookDelivery>();
  return std::optional<WebhookDelivery>(ReadDelivery(**stmt));
}

Result<std::vector<WebhookDelivery>> SqliteStore::ListWebhookDeliveries(const std::string& source,
                                                                        const std::string& alert) {
  std::lock_guard lock(mu_);
  const bool all = source.empty() && alert.empty();
  Result<SqliteStatement*> stmt =
      Statement(std::string("SELECT ") + kDeliveryColumns + " FROM webhook_deliveries" +
                    (all ? "" : " WHERE source = ?1 AND alert = ?2") + " ORDER BY seq",
                "listing webhook deliveries");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset(*stmt);
  if (!all) {
    (*stmt)->BindText(1, source);
    (*stmt)->BindText(2, alert);
  }
  std::vector<WebhookDelivery> out;
  for (;;) {
    Result<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(ReadDelivery(**stmt));
  }
  return out;
}

}  // namespace icewarden
