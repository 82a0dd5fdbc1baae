// CatalogApi's POST /v1/{prefix}/transactions/commit: a CommitTransactionRequest applied as
// one. Every table's requirements are checked against its current metadata first; only when
// all hold are the tables' new metadata files swapped in, in one store transaction that fails
// as a whole if any pointer moved meanwhile. A failed requirement is a 409
// CommitFailedException and nothing changes. Replication then carries each table's new file
// like any commit's.
#include <set>

#include "examples/lab/catalog_api.h"
#include "examples/lab/catalog_responses.h"
#include "examples/lab/table_metadata.h"

namespace icewarden::lab {

void CatalogApi::CommitTransaction(const httplib::Request& req, httplib::Response& res) {
  json body;
  if (!ParseBody(req, res, &body)) return;
  const json changes = body.value("table-changes", json());
  if (!changes.is_array() || changes.empty()) {
    Send(ErrorResponse(400, "BadRequestException", "table-changes must be a non-empty list"), res);
    return;
  }
  std::vector<TableIdent> tables;
  std::vector<std::string> resources;
  std::set<std::string> named;
  bool data_write = false;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    TableIdent table;
    if (!changes[i].is_object() ||
        !ParseIdentifier(changes[i].value("identifier", json()), &table)) {
      Send(ErrorResponse(
               400, "BadRequestException",
               "table-changes[" + std::to_string(i) + "] must name its table in identifier"),
           res);
      return;
    }
    // By set, not by a scan of those before: a body of 8 MiB may name many thousand tables.
    if (!named.insert(table.Dotted()).second) {
      Send(ErrorResponse(400, "BadRequestException",
                         "table " + table.Dotted() + " appears twice in table-changes"),
           res);
      return;
    }
    tables.push_back(table);
    resources.push_back(table.Dotted());
    // Property-only changes pass the write fence, as a single commit of them does.
    data_write = data_write || !ChangesOnlyProperties(changes[i]);
  }
  Send(Idempotent(req.get_header_value("Idempotency-Key"), resources, data_write,
                  [&] { return TransactionLocked(tables, changes); }),
       res);
}

StoredResponse CatalogApi::TransactionLocked(const std::vector<TableIdent>& tables,
                                             const json& changes) {
  const int64_t now = now_ms_();
  std::vector<TableSwap> swaps;
  std::vector<std::string> superseded;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const TableIdent& table = tables[i];
    auto current = store_->CurrentLocation(table);
    auto loaded = current ? Metadata(table, *current) : std::nullopt;
    if (!loaded) {
      return NoSuchTable(table);
    }
    auto applied = ApplyCommit(Parsed(*loaded), loaded->location, changes[i], now);
    if (applied.verdict == CommitVerdict::kBadRequest) {
      return ErrorResponse(400, "BadRequestException", table.Dotted() + ": " + applied.message);
    }
    if (applied.verdict == CommitVerdict::kConflict) {
      return ErrorResponse(409, "CommitFailedException",
                           table.Dotted() + ": " + applied.message + " (nothing was committed)");
    }
    if (applied.verdict == CommitVerdict::kUnchanged) continue;
    std::string location = NextMetadataLocation(applied.metadata, loaded->location);
    std::string text = applied.metadata.dump();
    swaps.push_back({table, loaded->location, std::move(location), std::move(applied.metadata),
                     std::move(text)});
    superseded.push_back(loaded->location);
  }
  if (!swaps.empty()) {
    std::size_t failed = 0;
    switch (store_->SwapTables(swaps, now, &failed)) {
      case StoreOutcome::kNotFound:
        return NoSuchTable(swaps[failed].table);
      case StoreOutcome::kConflict:
        return ErrorResponse(409, "CommitFailedException",
                             "Table " + swaps[failed].table.Dotted() +
                                 " was changed concurrently (nothing was committed)");
      default:
        break;
    }
  }
  for (std::size_t i = 0; i < swaps.size(); ++i) {
    cache_.Put({swaps[i].location, std::make_shared<const json>(std::move(swaps[i].metadata)),
                std::make_shared<const std::string>(std::move(swaps[i].text)), nullptr});
    cache_.Erase(superseded[i]);
  }
  return NoContent();
}

}  // namespace icewarden::lab
