// CatalogApi's views: list, create, load (and HEAD), replace (a CommitViewRequest), drop and
// rename, per the spec's ViewMetadata and LoadViewResult. Each view is its current metadata
// file (view_metadata.h builds and changes it). View writes are data writes: refused while the
// region's writes are paused, remembered per Idempotency-Key.
#include "examples/lab/catalog_api.h"
#include "examples/lab/catalog_responses.h"
#include "examples/lab/view_metadata.h"

namespace icewarden::lab {
namespace {

StoredResponse NoSuchView(const TableIdent& view) {
  return ErrorResponse(404, "NoSuchViewException", "View does not exist: " + view.Dotted());
}

// Views and tables share the stripes' names: "view " keeps a view's lock apart from a table's.
std::string ViewResource(const TableIdent& view) { return "view " + view.Dotted(); }

}  // namespace

void CatalogApi::ListViews(const httplib::Request& req, httplib::Response& res) {
  auto ns = NamespaceParam(req, 1);
  if (!store_->NamespaceProperties(ns)) {
    Send(NoSuchNamespace(ns), res);
    return;
  }
  SendIdentifiers(req, res, ns, store_->ViewNames(ns));
}

void CatalogApi::CreateView(const httplib::Request& req, httplib::Response& res) {
  json body;
  if (!ParseBody(req, res, &body)) return;
  auto ns = NamespaceParam(req, 1);
  std::string name = body.value("name", json()).is_string() ? body["name"].get<std::string>() : "";
  Send(Idempotent(req.get_header_value("Idempotency-Key"), ViewResource({ns, name}), true,
                  [&] { return CreateViewLocked(ns, body); }),
       res);
}

StoredResponse CatalogApi::CreateViewLocked(const std::vector<std::string>& ns, const json& body) {
  std::string location =
      base_location_ + "/" + JoinNamespace(ns, '/') + "/" + body.value("name", std::string());
  const int64_t now = now_ms_();
  auto created = NewViewMetadata(body, location, now);
  if (!created.error.empty()) return ErrorResponse(400, "BadRequestException", created.error);
  TableIdent view{ns, body["name"].get<std::string>()};
  std::string metadata_location = NextMetadataLocation(created.metadata, "");
  std::string text = created.metadata.dump();
  switch (store_->CreateView(view, metadata_location, text, now)) {
    case StoreOutcome::kNoNamespace:
      return NoSuchNamespace(ns);
    case StoreOutcome::kAlreadyExists:
      return ErrorResponse(409, "AlreadyExistsException",
                           "View or table already exists: " + view.Dotted());
    default:
      return {200, LoadTableResultText(metadata_location, text), ""};
  }
}

void CatalogApi::LoadView(const httplib::Request& req, httplib::Response& res) {
  TableIdent view{NamespaceParam(req, 1), req.matches[2].str()};
  auto loaded = store_->LoadView(view);
  if (!loaded) {
    Send(NoSuchView(view), res);
    return;
  }
  if (req.method == "HEAD") {
    res.status = 204;
    return;
  }
  Send({200, LoadTableResultText(loaded->location, loaded->text), ""}, res);
}

void CatalogApi::ReplaceView(const httplib::Request& req, httplib::Response& res) {
  json body;
  if (!ParseBody(req, res, &body)) return;
  TableIdent view{NamespaceParam(req, 1), req.matches[2].str()};
  Send(Idempotent(req.get_header_value("Idempotency-Key"), ViewResource(view), true,
                  [&] { return ReplaceViewLocked(view, body); }),
       res);
}

StoredResponse CatalogApi::ReplaceViewLocked(const TableIdent& view, const json& request) {
  auto loaded = store_->LoadView(view);
  if (!loaded) return NoSuchView(view);
  const int64_t now = now_ms_();
  auto applied = ApplyViewCommit(json::parse(loaded->text), request, now);
  switch (applied.verdict) {
    case CommitVerdict::kBadRequest:
      return ErrorResponse(400, "BadRequestException", applied.message);
    case CommitVerdict::kConflict:
      return ErrorResponse(409, "CommitFailedException", applied.message);
    case CommitVerdict::kUnchanged:
      return {200, LoadTableResultText(loaded->location, loaded->text), ""};
    default:
      break;
  }
  std::string location = NextMetadataLocation(applied.metadata, loaded->location);
  std::string text = applied.metadata.dump();
  switch (store_->SwapView(view, loaded->location, location, text, now)) {
    case StoreOutcome::kNotFound:
      return NoSuchView(view);
    case StoreOutcome::kConflict:
      return ErrorResponse(409, "CommitFailedException",
                           "View " + view.Dotted() + " was changed concurrently");
    default:
      return {200, LoadTableResultText(location, text), ""};
  }
}

void CatalogApi::DropView(const httplib::Request& req, httplib::Response& res) {
  TableIdent view{NamespaceParam(req, 1), req.matches[2].str()};
  Send(
      Idempotent(req.get_header_value("Idempotency-Key"), ViewResource(view), true,
                 [&]() -> StoredResponse {
                   if (store_->DropView(view, std::nullopt, now_ms_()) == StoreOutcome::kNotFound) {
                     return NoSuchView(view);
                   }
                   return NoContent();
                 }),
      res);
}

void CatalogApi::RenameView(const httplib::Request& req, httplib::Response& res) {
  TableIdent from, to;
  if (!ParseRename(req, res, "view", &from, &to)) return;
  Send(Idempotent(req.get_header_value("Idempotency-Key"), {ViewResource(from), ViewResource(to)},
                  true,
                  [&]() -> StoredResponse {
                    switch (store_->RenameView(from, to, now_ms_())) {
                      case StoreOutcome::kNotFound:
                        return NoSuchView(from);
                      case StoreOutcome::kNoNamespace:
                        return NoSuchNamespace(to.ns);
                      case StoreOutcome::kAlreadyExists:
                        return ErrorResponse(409, "AlreadyExistsException",
                                             "View or table already exists: " + to.Dotted());
                      default:
                        return NoContent();
                    }
                  }),
       res);
}

}  // namespace icewarden::lab
