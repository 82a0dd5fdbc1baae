// CatalogApi's drop, rename and register: writes that move a table's pointer as a whole rather
// than commit to it. Each is a data write (refused while the region's writes are paused) and
// remembered per Idempotency-Key like a commit.
#include "examples/lab/catalog_api.h"
#include "examples/lab/catalog_responses.h"
#include "examples/lab/table_metadata.h"

namespace icewarden::lab {
void CatalogApi::DropTable(const httplib::Request& req, httplib::Response& res) {
  TableIdent table{NamespaceParam(req, 1), req.matches[2].str()};
  // purgeRequested: the lab has no data files to delete; a purged drop keeps no metadata, so
  // the table cannot be registered again from its last metadata-location.
  const bool purge = req.get_param_value("purgeRequested") == "true";
  Send(Idempotent(req.get_header_value("Idempotency-Key"), table.Dotted(), true,
                  [&] {
                    if (store_->DropTable(table, std::nullopt, purge, now_ms_()) ==
                        StoreOutcome::kNotFound) {
                      return NoSuchTable(table);
                    }
                    return NoContent();
                  }),
       res);
}

void CatalogApi::RenameTable(const httplib::Request& req, httplib::Response& res) {
  TableIdent from, to;
  if (!ParseRename(req, res, "table", &from, &to)) return;
  Send(Idempotent(req.get_header_value("Idempotency-Key"), {from.Dotted(), to.Dotted()}, true,
                  [&] {
                    switch (store_->RenameTable(from, to, now_ms_())) {
                      case StoreOutcome::kNotFound:
                        return NoSuchTable(from);
                      case StoreOutcome::kNoNamespace:
                        return NoSuchNamespace(to.ns);
                      case StoreOutcome::kAlreadyExists:
                        return ErrorResponse(409, "AlreadyExistsException",
                                             "Table already exists: " + to.Dotted());
                      default:
                        return NoContent();
                    }
                  }),
       res);
}

void CatalogApi::RegisterTable(const httplib::Request& req, httplib::Response& res) {
  json body;
  if (!ParseBody(req, res, &body)) return;
  TableIdent table{NamespaceParam(req, 1), ""};
  if (!body.value("name", json()).is_string() || body["name"].get<std::string>().empty() ||
      !body.value("metadata-location", json()).is_string() ||
      !body.value("overwrite", json(false)).is_boolean()) {
    Send(ErrorResponse(400, "BadRequestException",
                       "register needs a name, a metadata-location and at most a boolean "
                       "overwrite"),
         res);
    return;
  }
  table.name = body["name"].get<std::string>();
  Send(Idempotent(req.get_header_value("Idempotency-Key"), table.Dotted(), true,
                  [&] { return RegisterLocked(table, body); }),
       res);
}

StoredResponse CatalogApi::RegisterLocked(const TableIdent& table, const json& body) {
  if (!store_->NamespaceProperties(table.ns)) return NoSuchNamespace(table.ns);
  const std::string location = body["metadata-location"].get<std::string>();
  // The lab has no object store to read a file from: what it can honestly register is a
  // metadata file it holds itself, one of a table's (its JSON is kept for the newest 300) or
  // the last one of a table dropped here without purgeRequested.
  auto text = store_->ReadableMetadata(location);
  if (!text) {
    return ErrorResponse(400, "BadRequestException",
                         "metadata-location " + location + " is not a metadata file region " +
                             region_ +
                             " holds (the lab registers a metadata file of one of its tables, "
                             "or the last one of a table dropped without purgeRequested)");
  }
  json metadata = json::parse(*text);
  switch (store_->RegisterTable(table, location, metadata, *text, body.value("overwrite", false),
                                now_ms_())) {
    case StoreOutcome::kNoNamespace:
      return NoSuchNamespace(table.ns);
    case StoreOutcome::kAlreadyExists:
      return ErrorResponse(409, "AlreadyExistsException",
                           "Table already exists: " + table.Dotted());
    default:
      return {200, LoadTableResultText(location, *text), MetadataEtag(location, false)};
  }
}

}  // namespace icewarden::lab
