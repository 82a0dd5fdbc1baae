#include "examples/lab/catalog_api.h"

#include <algorithm>
#include <optional>

#include "examples/lab/catalog_responses.h"
#include "examples/lab/metadata_text.h"
#include "examples/lab/table_metadata.h"

namespace icewarden::lab {
namespace {

constexpr int64_t kIdempotencyLifetimeMs = 30 * 60 * 1000;  // advertised as PT30M

json LoadTableResult(const std::string& location, const json& metadata) {
  return {{"metadata-location", location}, {"metadata", metadata}, {"config", json::object()}};
}

// The CommitTableResponse: {"metadata":TEXT,"metadata-location":LOCATION}.
std::string CommitResponseText(const std::string& location, const std::string& metadata_text) {
  return "{\"metadata\":" + metadata_text + ",\"metadata-location\":" + json(location).dump() + "}";
}

constexpr std::size_t kCachedMetadataFiles = 4096;

}  // namespace

CatalogApi::CatalogApi(std::string region, std::string warehouse, std::string base_location,
                       CatalogStore* store, NowMs now_ms)
    : region_(std::move(region)),
      warehouse_(std::move(warehouse)),
      base_location_(std::move(base_location)),
      store_(store),
      now_ms_(std::move(now_ms)),
      cache_(kCachedMetadataFiles) {}

std::optional<CachedMetadata> CatalogApi::Metadata(const TableIdent& table,
                                                   const std::string& location) {
  if (auto hit = cache_.Find(location)) return hit;
  auto loaded = store_->LoadTableText(table);
  if (!loaded) return std::nullopt;
  // The pointer may have moved since `location` was read: this is the newer file, as a load
  // a moment later would have returned.
  CachedMetadata entry{std::move(loaded->location), nullptr,
                       std::make_shared<const std::string>(std::move(loaded->text)), nullptr};
  cache_.Put(entry);
  return entry;
}

const json& CatalogApi::Parsed(CachedMetadata& entry) {
  if (!entry.metadata) {
    // Outside every lock: parsing is the expensive part.
    entry.metadata = std::make_shared<const json>(json::parse(*entry.text));
    cache_.Put(entry);
  }
  return *entry.metadata;
}

std::vector<std::string> CatalogApi::Endpoints() {
  return {"GET /v1/{prefix}/namespaces",
          "POST /v1/{prefix}/namespaces",
          "GET /v1/{prefix}/namespaces/{namespace}",
          "HEAD /v1/{prefix}/namespaces/{namespace}",
          "GET /v1/{prefix}/namespaces/{namespace}/tables",
          "POST /v1/{prefix}/namespaces/{namespace}/tables",
          "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "POST /v1/{prefix}/namespaces/{namespace}/register",
          "POST /v1/{prefix}/tables/rename",
          "POST /v1/{prefix}/transactions/commit",
          "GET /v1/{prefix}/namespaces/{namespace}/views",
          "POST /v1/{prefix}/namespaces/{namespace}/views",
          "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
          "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
          "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
          "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
          "POST /v1/{prefix}/views/rename"};
}

std::vector<CatalogApi::Route> CatalogApi::Routes() {
  std::string base = "/v1/" + warehouse_;
  auto bind = [this](void (CatalogApi::*method)(const httplib::Request&, httplib::Response&)) {
    return [this, method](const httplib::Request& req, httplib::Response& res) {
      (this->*method)(req, res);
    };
  };
  return {
      {"GET", "/v1/config", bind(&CatalogApi::Config)},
      {"GET", base + "/namespaces", bind(&CatalogApi::ListNamespaces)},
      {"POST", base + "/namespaces", bind(&CatalogApi::CreateNamespace)},
      {"GET", base + "/namespaces/([^/]+)", bind(&CatalogApi::LoadNamespace)},
      {"GET", base + "/namespaces/([^/]+)/tables", bind(&CatalogApi::ListTables)},
      {"POST", base + "/namespaces/([^/]+)/tables", bind(&CatalogApi::CreateTable)},
      {"GET", base + "/namespaces/([^/]+)/tables/([^/]+)", bind(&CatalogApi::LoadTable)},
      {"POST", base + "/namespaces/([^/]+)/tables/([^/]+)", bind(&CatalogApi::CommitTable), true},
      {"DELETE", base + "/namespaces/([^/]+)/tables/([^/]+)", bind(&CatalogApi::DropTable)},
      {"POST", base + "/namespaces/([^/]+)/register", bind(&CatalogApi::RegisterTable)},
      {"POST", base + "/tables/rename", bind(&CatalogApi::RenameTable)},
      // A transaction is a commit: commit latency and injected 409s apply to it.
      {"POST", base + "/transactions/commit", bind(&CatalogApi::CommitTransaction), true},
      {"GET", base + "/namespaces/([^/]+)/views", bind(&CatalogApi::ListViews)},
      {"POST", base + "/namespaces/([^/]+)/views", bind(&CatalogApi::CreateView)},
      {"GET", base + "/namespaces/([^/]+)/views/([^/]+)", bind(&CatalogApi::LoadView)},
      {"POST", base + "/namespaces/([^/]+)/views/([^/]+)", bind(&CatalogApi::ReplaceView)},
      {"DELETE", base + "/namespaces/([^/]+)/views/([^/]+)", bind(&CatalogApi::DropView)},
      {"POST", base + "/views/rename", bind(&CatalogApi::RenameView)},
  };
}

void CatalogApi::Config(const httplib::Request& req, httplib::Response& res) {
  if (req.has_param("warehouse") && req.get_param_value("warehouse") != warehouse_) {
    SetErrorResponse(res, 404, "NoSuchWarehouseException",
                     "Warehouse " + req.get_param_value("warehouse") + " does not exist");
    return;
  }
  json config = {{"defaults", json::object()},
                 {"overrides", {{"prefix", warehouse_}}},
                 {"endpoints", Endpoints()},
                 {"idempotency-key-lifetime", "PT30M"}};
  Send(JsonResponse(config), res);
}

void CatalogApi::ListNamespaces(const httplib::Request& req, httplib::Response& res) {
  std::vector<std::string> parent =
      SplitNamespace(req.get_param_value("parent"), kNamespaceSeparator);
  if (!parent.empty() && !store_->NamespaceProperties(parent)) {
    Send(NoSuchNamespace(parent), res);
    return;
  }
  auto children = store_->ChildNamespaces(parent);
  std::vector<std::string> keys;
  for (const auto& child : children) keys.push_back(JoinNamespace(child, kNamespaceSeparator));
  size_t begin, end;
  json next;
  if (!Page(req, res, keys, &begin, &end, &next)) return;
  json namespaces = json::array();
  for (size_t i = begin; i < end; ++i) namespaces.push_back(children[i]);
  Send(JsonResponse({{"namespaces", namespaces}, {"next-page-token", next}}), res);
}

void CatalogApi::CreateNamespace(const httplib::Request& req, httplib::Response& res) {
  json body;
  if (!ParseBody(req, res, &body)) return;
  std::string resource = body.contains("namespace") ? body["namespace"].dump() : "";
  Send(Idempotent(req.get_header_value("Idempotency-Key"), "namespace " + resource, false,
                  [&] { return CreateNamespaceLocked(body); }),
       res);
}

StoredResponse CatalogApi::CreateNamespaceLocked(const json& body) {
  if (!body.contains("namespace") || !body["namespace"].is_array() || body["namespace"].empty()) {
    return ErrorResponse(400, "BadRequestException", "namespace must be a non-empty array");
  }
  std::vector<std::string> levels;
  for (const auto& level : body["namespace"]) {
    if (!level.is_string() || level.get<std::string>().empty()) {
      return ErrorResponse(400, "BadRequestException", "namespace levels must be strings");
    }
    levels.push_back(level.get<std::string>());
  }
  json properties = body.value("properties", json::object());
  if (!properties.is_object()) {
    return ErrorResponse(400, "BadRequestException", "properties must be an object");
  }
  switch (store_->CreateNamespace(levels, properties)) {
    case StoreOutcome::kAlreadyExists:
      return ErrorResponse(409, "AlreadyExistsException",
                           "Namespace already exists: " + JoinNamespace(levels, '.'));
    case StoreOutcome::kNotFound:
      return ErrorResponse(404, "NoSuchNamespaceException",
                           "Parent namespace does not exist: " + JoinNamespace(levels, '.'));
    default:
      return JsonResponse({{"namespace", levels}, {"properties", properties}});
  }
}

void CatalogApi::LoadNamespace(const httplib::Request& req, httplib::Response& res) {
  auto levels = NamespaceParam(req, 1);
  auto properties = store_->NamespaceProperties(levels);
  if (!properties) {
    Send(NoSuchNamespace(levels), res);
    return;
  }
  if (req.method == "HEAD") {
    res.status = 204;
    return;
  }
  Send(JsonResponse({{"namespace", levels}, {"properties", *properties}}), res);
}

void CatalogApi::ListTables(const httplib::Request& req, httplib::Response& res) {
  auto ns = NamespaceParam(req, 1);
  if (!store_->NamespaceProperties(ns)) {
    Send(NoSuchNamespace(ns), res);
    return;
  }
  SendIdentifiers(req, res, ns, store_->TableNames(ns));
}

void CatalogApi::CreateTable(const httplib::Request& req, httplib::Response& res) {
  json body;
  if (!ParseBody(req, res, &body)) return;
  auto ns = NamespaceParam(req, 1);
  std::string name = body.contains("name") && body["name"].is_string() ? body["name"] : "";
  Send(Idempotent(req.get_header_value("Idempotency-Key"), TableIdent{ns, name}.Dotted(), true,
                  [&] { return CreateTableLocked(ns, body); }),
       res);
}

StoredResponse CatalogApi::CreateTableLocked(const std::vector<std::string>& ns, const json& body) {
  std::string location =
      base_location_ + "/" + JoinNamespace(ns, '/') + "/" + body.value("name", std::string());
  auto created = NewTableMetadata(body, location, now_ms_());
  if (!created.error.empty()) {
    int code = body.value("stage-create", false) ? 406 : 400;
    return ErrorResponse(
        code, code == 406 ? "UnsupportedOperationException" : "BadRequestException", created.error);
  }
  TableIdent table{ns, body["name"].get<std::string>()};
  std::string metadata_location = NextMetadataLocation(created.metadata, "");
  switch (store_->CreateTable(table, metadata_location, created.metadata, now_ms_())) {
    case StoreOutcome::kNotFound:
      return NoSuchNamespace(ns);
    case StoreOutcome::kAlreadyExists:
      return ErrorResponse(409, "AlreadyExistsException",
                           "Table already exists: " + table.Dotted());
    default:
      return JsonResponse(LoadTableResult(metadata_location, created.metadata),
                          MetadataEtag(metadata_location, false));
  }
}

void CatalogApi::LoadTable(const httplib::Request& req, httplib::Response& res) {
  TableIdent table{NamespaceParam(req, 1), req.matches[2].str()};
  std::string mode = req.has_param("snapshots") ? req.get_param_value("snapshots") : "all";
  if (mode != "all" && mode != "refs") {
    SetErrorResponse(res, 400, "BadRequestException", "snapshots must be all or refs");
    return;
  }
  auto location = store_->CurrentLocation(table);
  if (!location) {
    Send(NoSuchTable(table), res);
    return;
  }
  if (req.method == "HEAD") {
    res.status = 204;
    return;
  }
  bool refs_only = mode == "refs";
  std::string etag = MetadataEtag(*location, refs_only);
  std::string if_none_match = req.get_header_value("If-None-Match");
  if (!if_none_match.empty() &&
      (if_none_match == "*" || if_none_match.find(etag) != std::string::npos)) {
    res.status = 304;
    res.set_header("ETag", etag);
    return;
  }
  auto loaded = Metadata(table, *location);
  if (!loaded) {  // dropped in between
    Send(NoSuchTable(table), res);
    return;
  }
  if (loaded->location != *location) etag = MetadataEtag(loaded->location, refs_only);
  if (refs_only && !loaded->refs_text) {
    // Most tables reference every snapshot they keep (or have none): the same text, which is
    // known without parsing the whole metadata.
    bool whole;
    if (loaded->metadata) {
      whole = AllSnapshotsReferenced(*loaded->metadata);
    } else if (auto members = TopLevelMembers(*loaded->text)) {
      whole = AllSnapshotsReferencedIn(*members);
    } else {
      whole = AllSnapshotsReferenced(Parsed(*loaded));
    }
    loaded->refs_text =
        whole ? loaded->text
              : std::make_shared<const std::string>(MetadataForLoad(Parsed(*loaded), true).dump());
    cache_.Put(*loaded);
  }
  Send({200, LoadTableResultText(loaded->location, refs_only ? *loaded->refs_text : *loaded->text),
        etag},
       res);
}

void CatalogApi::CommitTable(const httplib::Request& req, httplib::Response& res) {
  json body;
  if (!ParseBody(req, res, &body)) return;
  TableIdent table{NamespaceParam(req, 1), req.matches[2].str()};
  Send(Commit(table, body, req.get_header_value("Idempotency-Key")), res);
}

StoredResponse CatalogApi::Commit(const TableIdent& table, const json& request,
                                  const std::string& idempotency_key) {
  // A property-only commit adds no data: the orchestrator writes its ownership claim
  // (icewarden.owner, icewarden.epoch) through a region it has fenced.
  return Idempotent(idempotency_key, table.Dotted(), !ChangesOnlyProperties(request),
                    [&] { return CommitLocked(table, request); });
}

StoredResponse CatalogApi::CommitLocked(const TableIdent& table, const json& request) {
  auto current = store_->CurrentLocation(table);
  auto loaded = current ? Metadata(table, *current) : std::nullopt;
  if (!loaded) {
    bool staged = false;
    if (request.contains("requirements") && request["requirements"].is_array()) {
      for (const auto& requirement : request["requirements"]) {
        if (requirement.is_object() && requirement.value("type", "") == "assert-create") {
          staged = true;
        }
      }
    }
    if (staged) {
      return ErrorResponse(406, "UnsupportedOperationException",
                           "staged create transactions are not supported by the lab");
    }
    return NoSuchTable(table);
  }
  const int64_t now = now_ms_();
  if (ChangesOnlyProperties(request)) return CommitProperties(table, request, *loaded, now);
  const json& metadata = Parsed(*loaded);
  auto applied = ApplyCommit(metadata, loaded->location, request, now);
  if (applied.verdict != CommitVerdict::kApplied) return NotApplied(applied, *loaded);
  std::string location = NextMetadataLocation(applied.metadata, loaded->location);
  auto text = std::make_shared<const std::string>(applied.metadata.dump());
  auto swapped = store_->SwapTable(table, loaded->location, location, applied.metadata, *text, now);
  if (swapped != StoreOutcome::kOk) return NotSwapped(swapped, table);
  StoredResponse response{200, CommitResponseText(location, *text), MetadataEtag(location, false)};
  cache_.Put({location, std::make_shared<const json>(std::move(applied.metadata)), std::move(text),
              nullptr});
  cache_.Erase(loaded->location);  // superseded
  return response;
}

StoredResponse CatalogApi::CommitProperties(const TableIdent& table, const json& request,
                                            CachedMetadata& loaded, int64_t now) {
  // From the text's members when it has the lab's compact form (always, unless a file was
  // written otherwise): only the small ones are parsed, the rest is copied as it is.
  auto members = TopLevelMembers(*loaded.text);
  json small;
  if (members && !loaded.metadata) small = ParseSmallMembers(*members);
  const json& metadata = small.is_object() ? small : Parsed(loaded);
  auto applied = ApplyPropertyCommit(metadata, loaded.location, request, now);
  if (applied.outcome.verdict != CommitVerdict::kApplied) {
    return NotApplied(applied.outcome, loaded);
  }
  // Properties do not move the table's location: the next file goes where ApplyCommit's would.
  std::string location = NextMetadataLocation(metadata, loaded.location);
  auto text =
      std::make_shared<const std::string>(members ? SpliceMembers(*members, applied.changes)
                                                  : DumpWithChanges(metadata, applied.changes));
  const json properties = applied.changes.value("properties", json::object());
  auto swapped = store_->SwapTable(table, loaded.location, location, *text, properties,
                                   metadata.value("current-snapshot-id", int64_t{-1}), now);
  if (swapped != StoreOutcome::kOk) return NotSwapped(swapped, table);
  StoredResponse response{200, CommitResponseText(location, *text), MetadataEtag(location, false)};
  // The new file is kept as text, parsed only if a later commit needs it. Snapshots and refs are
  // unchanged, so whether a refs load is the whole text is too (when it was known).
  std::shared_ptr<const std::string> refs_text;
  if (loaded.refs_text && loaded.refs_text == loaded.text) refs_text = text;
  cache_.Put({location, nullptr, std::move(text), std::move(refs_text)});
  cache_.Erase(loaded.location);  // superseded
  return response;
}

StoredResponse CatalogApi::NotApplied(const CommitApplication& applied,
                                      const CachedMetadata& loaded) {
  switch (applied.verdict) {
    case CommitVerdict::kBadRequest:
      return ErrorResponse(400, "BadRequestException", applied.message);
    case CommitVerdict::kConflict:
      return ErrorResponse(409, "CommitFailedException", applied.message);
    default:  // kUnchanged
      return {200, CommitResponseText(loaded.location, *loaded.text),
              MetadataEtag(loaded.location, false)};
  }
}

StoredResponse CatalogApi::NotSwapped(StoreOutcome swapped, const TableIdent& table) {
  if (swapped == StoreOutcome::kNotFound) {
    return NoSuchTable(table);
  }
  return ErrorResponse(409, "CommitFailedException",
                       "Table " + table.Dotted() + " was changed concurrently");
}

StoredResponse CatalogApi::Idempotent(const std::string& key, const std::string& resource,
                                      bool data_write,
                                      const std::function<StoredResponse()>& apply) {
  return Idempotent(key, std::vector<std::string>{resource}, data_write, apply);
}

StoredResponse CatalogApi::Idempotent(const std::string& key,
                                      const std::vector<std::string>& resources, bool data_write,
                                      const std::function<StoredResponse()>& apply) {
  std::vector<std::size_t> stripes;
  for (const auto& resource : resources) {
    stripes.push_back(std::hash<std::string>{}(resource) % mutation_stripes_.size());
  }
  std::sort(stripes.begin(), stripes.end());
  stripes.erase(std::unique(stripes.begin(), stripes.end()), stripes.end());
  std::vector<std::unique_lock<std::mutex>> locks;
  for (std::size_t stripe : stripes) locks.emplace_back(mutation_stripes_[stripe]);
  int64_t now = now_ms_();
  if (!key.empty()) {
    if (auto stored = store_->FindResponse(key, now - kIdempotencyLifetimeMs)) return *stored;
  }
  std::optional<WriteFence::Pass> pass;
  if (data_write && !pass.emplace(fence_).admitted()) {
    return ErrorResponse(403, "ForbiddenException",
                         "writes to region " + region_ +
                             " are paused by the lab's write fence (POST /lab/regions/" + region_ +
                             "/writes {\"paused\":false} resumes them)");
  }
  StoredResponse response = apply();
  if (!key.empty() && response.status < 500) store_->RememberResponse(key, response, now);
  return response;
}

}  // namespace icewarden::lab
