#include "orchestrator/gateway/catalog_route.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

namespace icewarden {
namespace {

using json = nlohmann::json;

RouteError Bad(std::string message) { return {400, "BadRequestException", std::move(message), ""}; }
RouteError NoRoute(std::string message) {
  return {404, "NoSuchRouteException", std::move(message), ""};
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A decoded name part must not be able to mean another path at the catalog: no separators,
// no dot segments, nothing a person cannot see.
std::optional<std::string> NameProblem(const std::string& decoded, bool allow_unit_separator) {
  if (decoded.empty()) return "is empty";
  if (decoded == "." || decoded == "..") return "is a dot segment ('" + decoded + "')";
  for (unsigned char c : decoded) {
    if (c == '/' || c == '\\') return "holds a path separator";
    if (c == 0x1F && allow_unit_separator) continue;
    if (c < 0x20 || c == 0x7F) return "holds a control character";
  }
  return std::nullopt;
}

struct Segments {
  std::vector<std::string> raw;      // as sent
  std::vector<std::string> decoded;  // percent-decoded
};

std::variant<Segments, RouteError> SplitPath(std::string_view path) {
  Segments out;
  std::size_t at = 0;
  while (at <= path.size()) {
    std::size_t slash = path.find('/', at);
    if (slash == std::string_view::npos) slash = path.size();
    std::string raw(path.substr(at, slash - at));
    auto decoded = PercentDecode(raw);
    if (!decoded) return Bad("path segment '" + raw + "' has a '%' not followed by two hex digits");
    out.raw.push_back(std::move(raw));
    out.decoded.push_back(std::move(*decoded));
    at = slash + 1;
  }
  return out;
}

std::vector<std::string> SplitLevels(const std::string& decoded, std::string_view separator) {
  std::vector<std::string> levels;
  if (separator.empty()) return {decoded};
  std::size_t at = 0;
  while (true) {
    std::size_t next = decoded.find(separator, at);
    if (next == std::string::npos) {
      levels.push_back(decoded.substr(at));
      return levels;
    }
    levels.push_back(decoded.substr(at, next - at));
    at = next + separator.size();
  }
}

std::variant<std::vector<std::string>, RouteError> NamespaceOf(const std::string& decoded,
                                                               std::string_view separator) {
  auto levels = SplitLevels(decoded, separator);
  for (const auto& level : levels) {
    if (auto problem = NameProblem(level, false)) {
      return Bad("namespace '" + decoded + "': a level " + *problem);
    }
  }
  return levels;
}

std::optional<RouteError> CheckName(const std::string& what, const std::string& name) {
  if (auto problem = NameProblem(name, false)) return Bad(what + " '" + name + "' " + *problem);
  return std::nullopt;
}

// A TableIdentifier object of the spec: {"namespace": [levels], "name": "t"}.
std::variant<TableIdent, RouteError> IdentifierOf(const json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("namespace") || !j.contains("name") ||
      !j["namespace"].is_array() || !j["name"].is_string()) {
    return Bad(where + " must be a table identifier {\"namespace\": [...], \"name\": \"...\"}");
  }
  TableIdent table;
  for (const auto& level : j["namespace"]) {
    if (!level.is_string()) return Bad(where + ".namespace must be a list of strings");
    table.namespace_levels.push_back(level.get<std::string>());
    if (auto e = CheckName(where + ".namespace level", table.namespace_levels.back())) return *e;
  }
  if (table.namespace_levels.empty()) return Bad(where + ".namespace must not be empty");
  table.name = j["name"].get<std::string>();
  if (auto e = CheckName(where + ".name", table.name)) return *e;
  return table;
}

std::variant<json, RouteError> BodyObject(std::string_view body, const std::string& operation) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return Bad(operation + ": the request body is not valid JSON");
  if (!j.is_object()) return Bad(operation + ": the request body must be a JSON object");
  return j;
}

void AddTable(CatalogRoute& route, TableIdent table) {
  if (std::find(route.tables.begin(), route.tables.end(), table) == route.tables.end()) {
    route.tables.push_back(std::move(table));
  }
}

RouteError WrongMethod(std::string_view method, const std::string& path_name,
                       const std::string& allow) {
  return {405, "MethodNotAllowedException",
          std::string(method) + " is not a method of " + path_name + "; it has " + allow, allow};
}

}  // namespace

const char* RouteKindName(RouteKind kind) {
  switch (kind) {
    case RouteKind::kConfig:
      return "config";
    case RouteKind::kOAuthTokens:
      return "oauth_tokens";
    case RouteKind::kRead:
      return "read";
    case RouteKind::kTableLoad:
      return "table_load";
    case RouteKind::kNamespaceWrite:
      return "namespace_write";
    case RouteKind::kTableCreate:
      return "table_create";
    case RouteKind::kTableCommit:
      return "table_commit";
    case RouteKind::kTableDrop:
      return "table_drop";
    case RouteKind::kTableRename:
      return "table_rename";
    case RouteKind::kTransaction:
      return "transaction";
  }
  return "unknown";
}

bool IsWrite(RouteKind kind) { return kind == RouteKind::kNamespaceWrite || IsTableWrite(kind); }

bool IsTableWrite(RouteKind kind) {
  switch (kind) {
    case RouteKind::kTableCreate:
    case RouteKind::kTableCommit:
    case RouteKind::kTableDrop:
    case RouteKind::kTableRename:
    case RouteKind::kTransaction:
      return true;
    default:
      return false;
  }
}

std::optional<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int hi = HexValue(text[i + 1]);
    const int lo = HexValue(text[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

std::variant<CatalogRoute, RouteError> ClassifyRequest(const RouteRequest& request,
                                                       std::string_view prefix,
                                                       std::string_view separator) {
  const std::string_view target = request.target;
  const std::size_t q = target.find('?');
  const std::string_view path = target.substr(0, q);
  CatalogRoute route;
  if (q != std::string_view::npos) route.query = std::string(target.substr(q));
  const std::string_view m = request.method;

  if (path == "/v1/config") {
    if (m != "GET") return WrongMethod(m, "/v1/config", "GET");
    route.kind = RouteKind::kConfig;
    route.operation = "getConfig";
    return route;
  }
  if (path == "/v1/oauth/tokens") {
    if (m != "POST") return WrongMethod(m, "/v1/oauth/tokens", "POST");
    route.kind = RouteKind::kOAuthTokens;
    route.operation = "getToken";
    return route;
  }
  if (path.substr(0, 4) != "/v1/") {
    return NoRoute("no Iceberg REST route at '" + std::string(path) + "': paths start with /v1/");
  }
  auto split = SplitPath(path.substr(4));
  if (auto* e = std::get_if<RouteError>(&split)) return *e;
  Segments seg = std::get<Segments>(std::move(split));
  if (seg.raw.front() != prefix) {
    return RouteError{404, "NoSuchWarehouseException",
                      "this gateway serves the catalog prefix '" + std::string(prefix) +
                          "', not '" + seg.decoded.front() +
                          "': get the prefix from GET /v1/config",
                      ""};
  }
  route.rest = std::string(path.substr(4 + seg.raw.front().size()));
  std::vector<std::string> s(seg.decoded.begin() + 1, seg.decoded.end());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (s[i].empty()) return Bad("the path has an empty segment: '" + std::string(path) + "'");
  }

  auto read = [&](std::string operation) -> std::variant<CatalogRoute, RouteError> {
    route.kind = RouteKind::kRead;
    route.operation = std::move(operation);
    return route;
  };

  // /v1/{prefix}/tables/rename, /views/rename, /transactions/commit
  if (n == 2 && (s[0] == "tables" || s[0] == "views") && s[1] == "rename") {
    if (m != "POST") return WrongMethod(m, "/v1/{prefix}/" + s[0] + "/rename", "POST");
    auto body = BodyObject(request.body, "rename");
    if (auto* e = std::get_if<RouteError>(&body)) return *e;
    const json& j = std::get<json>(body);
    auto source = IdentifierOf(j.value("source", json()), "source");
    if (auto* e = std::get_if<RouteError>(&source)) return *e;
    auto destination = IdentifierOf(j.value("destination", json()), "destination");
    if (auto* e = std::get_if<RouteError>(&destination)) return *e;
    if (s[0] == "views") {
      route.kind = RouteKind::kNamespaceWrite;
      route.operation = "renameView";
      route.namespace_levels = std::get<TableIdent>(source).namespace_levels;
      return route;
    }
    route.kind = RouteKind::kTableRename;
    route.operation = "renameTable";
    AddTable(route, std::get<TableIdent>(std::move(source)));
    AddTable(route, std::get<TableIdent>(std::move(destination)));
    return route;
  }
  if (n == 2 && s[0] == "transactions" && s[1] == "commit") {
    if (m != "POST") return WrongMethod(m, "/v1/{prefix}/transactions/commit", "POST");
    auto body = BodyObject(request.body, "commitTransaction");
    if (auto* e = std::get_if<RouteError>(&body)) return *e;
    const json& j = std::get<json>(body);
    if (!j.contains("table-changes") || !j["table-changes"].is_array() ||
        j["table-changes"].empty()) {
      return Bad("commitTransaction: 'table-changes' must be a non-empty list");
    }
    std::size_t i = 0;
    for (const auto& change : j["table-changes"]) {
      const std::string where = "table-changes[" + std::to_string(i++) + "]";
      if (!change.is_object() || !change.contains("identifier")) {
        return Bad("commitTransaction: " + where + " must name its table in 'identifier'");
      }
      auto table = IdentifierOf(change["identifier"], where + ".identifier");
      if (auto* e = std::get_if<RouteError>(&table)) return *e;
      AddTable(route, std::get<TableIdent>(std::move(table)));
    }
    route.kind = RouteKind::kTransaction;
    route.operation = "commitTransaction";
    return route;
  }
  if (n == 0 || s[0] != "namespaces") {
    return NoRoute("no Iceberg REST route at '" + std::string(path) + "'");
  }
  if (n == 1) {
    if (m == "GET") return read("listNamespaces");
    if (m != "POST") return WrongMethod(m, "/v1/{prefix}/namespaces", "GET, POST");
    auto body = BodyObject(request.body, "createNamespace");
    if (auto* e = std::get_if<RouteError>(&body)) return *e;
    const json& j = std::get<json>(body);
    if (!j.contains("namespace") || !j["namespace"].is_array() || j["namespace"].empty()) {
      return Bad("createNamespace: 'namespace' must be a non-empty list of strings");
    }
    for (const auto& level : j["namespace"]) {
      if (!level.is_string()) return Bad("createNamespace: 'namespace' must be a list of strings");
      route.namespace_levels.push_back(level.get<std::string>());
      if (auto e = CheckName("namespace level", route.namespace_levels.back())) return *e;
    }
    route.kind = RouteKind::kNamespaceWrite;
    route.operation = "createNamespace";
    return route;
  }
  auto ns = NamespaceOf(s[1], separator);
  if (auto* e = std::get_if<RouteError>(&ns)) return *e;
  route.namespace_levels = std::get<std::vector<std::string>>(std::move(ns));
  auto table_at = [&](std::size_t i) -> std::variant<TableIdent, RouteError> {
    if (auto e = CheckName("table", s[i])) return *e;
    return TableIdent{route.namespace_levels, s[i]};
  };

  if (n == 2) {
    if (m == "GET") return read("loadNamespaceMetadata");
    if (m == "HEAD") return read("namespaceExists");
    if (m != "DELETE")
      return WrongMethod(m, "/v1/{prefix}/namespaces/{namespace}", "GET, HEAD, DELETE");
    route.kind = RouteKind::kNamespaceWrite;
    route.operation = "dropNamespace";
    return route;
  }
  if (n == 3 && s[2] == "properties") {
    if (m != "POST")
      return WrongMethod(m, "/v1/{prefix}/namespaces/{namespace}/properties", "POST");
    route.kind = RouteKind::kNamespaceWrite;
    route.operation = "updateProperties";
    return route;
  }
  if (n == 3 && (s[2] == "tables" || s[2] == "register")) {
    if (s[2] == "tables" && m == "GET") return read("listTables");
    if (m != "POST") {
      return WrongMethod(m, "/v1/{prefix}/namespaces/{namespace}/" + s[2],
                         s[2] == "tables" ? "GET, POST" : "POST");
    }
    const std::string operation = s[2] == "tables" ? "createTable" : "registerTable";
    auto body = BodyObject(request.body, operation);
    if (auto* e = std::get_if<RouteError>(&body)) return *e;
    const json& j = std::get<json>(body);
    if (!j.contains("name") || !j["name"].is_string()) {
      return Bad(operation + ": 'name' must be the new table's name");
    }
    const std::string name = j["name"].get<std::string>();
    if (auto e = CheckName("table", name)) return *e;
    route.kind = RouteKind::kTableCreate;
    route.operation = operation;
    AddTable(route, TableIdent{route.namespace_levels, name});
    return route;
  }
  if (n == 3 && s[2] == "views") {
    if (m == "GET") return read("listViews");
    if (m != "POST")
      return WrongMethod(m, "/v1/{prefix}/namespaces/{namespace}/views", "GET, POST");
    route.kind = RouteKind::kNamespaceWrite;
    route.operation = "createView";
    return route;
  }
  if (n == 4 && s[2] == "views") {
    if (auto e = CheckName("view", s[3])) return *e;
    if (m == "GET") return read("loadView");
    if (m == "HEAD") return read("viewExists");
    if (m != "POST" && m != "DELETE") {
      return WrongMethod(m, "/v1/{prefix}/namespaces/{namespace}/views/{view}",
                         "GET, HEAD, POST, DELETE");
    }
    route.kind = RouteKind::kNamespaceWrite;
    route.operation = m == "POST" ? "replaceView" : "dropView";
    return route;
  }
  if (n >= 4 && s[2] == "tables") {
    auto table = table_at(3);
    if (auto* e = std::get_if<RouteError>(&table)) return *e;
    if (n == 4) {
      if (m == "GET") {
        route.kind = RouteKind::kTableLoad;
        route.operation = "loadTable";
        AddTable(route, std::get<TableIdent>(std::move(table)));
        return route;
      }
      if (m == "HEAD") return read("tableExists");
      if (m != "POST" && m != "DELETE") {
        return WrongMethod(m, "/v1/{prefix}/namespaces/{namespace}/tables/{table}",
                           "GET, HEAD, POST, DELETE");
      }
      route.kind = m == "POST" ? RouteKind::kTableCommit : RouteKind::kTableDrop;
      route.operation = m == "POST" ? "updateTable" : "dropTable";
      AddTable(route, std::get<TableIdent>(std::move(table)));
      return route;
    }
    const std::string& sub = s[4];
    if (n == 5 && sub == "credentials") {
      if (m != "GET") return WrongMethod(m, ".../tables/{table}/credentials", "GET");
      return read("loadCredentials");
    }
    if (n == 5 && (sub == "metrics" || sub == "plan" || sub == "tasks")) {
      if (m != "POST") return WrongMethod(m, ".../tables/{table}/" + sub, "POST");
      return read(sub == "metrics" ? "reportMetrics"
                  : sub == "plan"  ? "planTableScan"
                                   : "fetchScanTasks");
    }
    if (n == 6 && sub == "plan") {
      if (auto e = CheckName("plan id", s[5])) return *e;
      if (m == "GET") return read("fetchPlanningResult");
      if (m == "DELETE") return read("cancelPlanning");
      return WrongMethod(m, ".../tables/{table}/plan/{plan-id}", "GET, DELETE");
    }
  }
  return NoRoute("no Iceberg REST route at '" + std::string(path) + "'");
}

}  // namespace icewarden
