// docs/openapi.yaml against the router (Api::RouteTable): every route documented with its
// method, nothing documented that the router does not answer, each operation's query
// parameters exactly the route's, `security: []` exactly on the routes that need no token, and
// the documented permission the one the router enforces. The checks are functions returning
// problems, so the last tests can break a copy of the document and see each one caught.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/api/api.h"
#include "orchestrator/api/auth.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_store.h"

namespace icewarden {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::IsSupersetOf;
using ::testing::UnorderedElementsAre;

const char* const kDocPath = ICEWARDEN_SOURCE_DIR "/docs/openapi.yaml";
const std::vector<std::string> kHttpMethods = {"get",   "put",  "post",    "delete",
                                               "patch", "head", "options", "trace"};

YAML::Node LoadDoc() { return YAML::LoadFile(kDocPath); }

// "/api/v1/failovers/{failover_id}/approve" -> "/api/v1/failovers/{id}/approve": the router
// names no variable.
std::string Normalized(const std::string& path) {
  static const std::regex kVariable(R"(\{[^}/]*\})");
  return std::regex_replace(path, kVariable, "{id}");
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string Join(const std::set<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return "{" + out + "}";
}

// A local reference ("#/components/parameters/Region") resolved, undefined when it does not
// resolve; other nodes as they are.
YAML::Node Resolve(const YAML::Node& doc, const YAML::Node& node) {
  if (!node.IsMap() || !node["$ref"]) return node;
  const std::string ref = node["$ref"].as<std::string>();
  if (ref.rfind("#/", 0) != 0) return YAML::Node(YAML::NodeType::Undefined);
  // reset(), not =: assigning one YAML::Node to another writes through to the document.
  YAML::Node at = doc;
  std::size_t from = 2;
  while (from <= ref.size()) {
    const std::size_t slash = std::min(ref.find('/', from), ref.size());
    const YAML::Node& here = at;
    const YAML::Node next = here[ref.substr(from, slash - from)];
    if (!here.IsMap() || !next) return YAML::Node(YAML::NodeType::Undefined);
    at.reset(next);
    from = slash + 1;
  }
  return at;
}

struct Operation {
  std::string method;  // "GET"
  std::string path;    // as documented
  YAML::Node node;
  YAML::Node path_item;
  std::string Name() const { return method + " " + path; }
};

// Keyed by "GET /api/v1/failovers/{id}".
std::map<std::string, Operation> Operations(const YAML::Node& doc) {
  std::map<std::string, Operation> out;
  for (const auto& path : doc["paths"]) {
    const std::string p = path.first.as<std::string>();
    for (const std::string& m : kHttpMethods) {
      if (!path.second[m]) continue;
      Operation op{Upper(m), p, path.second[m], path.second};
      out.emplace(op.method + " " + Normalized(p), op);
    }
  }
  return out;
}

// The parameters of an operation with its path item's, references resolved.
std::vector<YAML::Node> Parameters(const YAML::Node& doc, const Operation& op) {
  std::vector<YAML::Node> out;
  for (const YAML::Node& list : {op.path_item["parameters"], op.node["parameters"]}) {
    if (!list) continue;
    for (const auto& p : list) out.push_back(Resolve(doc, p));
  }
  return out;
}

std::set<std::string> ParameterNames(const YAML::Node& doc, const Operation& op,
                                     const std::string& in) {
  std::set<std::string> out;
  for (const YAML::Node& p : Parameters(doc, op))
    if (p["in"] && p["in"].as<std::string>() == in) out.insert(p["name"].as<std::string>());
  return out;
}

std::string RouteKey(const ApiRouteInfo& r) {
  return std::string(r.method) + " " + std::string(r.pattern);
}

// ---- The checks: each returns one sentence per problem, naming the route ----

std::vector<std::string> RouteSetProblems(const YAML::Node& doc,
                                          const std::vector<ApiRouteInfo>& routes) {
  std::vector<std::string> out;
  const auto ops = Operations(doc);
  std::set<std::string> known;
  for (const ApiRouteInfo& r : routes) {
    known.insert(RouteKey(r));
    if (!ops.count(RouteKey(r)))
      out.push_back("the router answers " + RouteKey(r) +
                    " but docs/openapi.yaml does not list it");
  }
  for (const auto& [key, op] : ops)
    if (!known.count(key))
      out.push_back("docs/openapi.yaml lists " + op.Name() + " but the router has no such route");
  return out;
}

std::vector<std::string> QueryProblems(const YAML::Node& doc,
                                       const std::vector<ApiRouteInfo>& routes) {
  std::vector<std::string> out;
  const auto ops = Operations(doc);
  for (const ApiRouteInfo& r : routes) {
    auto it = ops.find(RouteKey(r));
    if (it == ops.end()) continue;
    const std::set<std::string> documented = ParameterNames(doc, it->second, "query");
    const std::set<std::string> accepted(r.query_params.begin(), r.query_params.end());
    if (documented != accepted)
      out.push_back(RouteKey(r) + ": the router accepts the query parameters " + Join(accepted) +
                    ", the document lists " + Join(documented));
  }
  return out;
}

// needs_token: the operation inherits the document's bearer security. Otherwise it says so
// with `security: []`, or, for a handler that checks its own credentials
// (x-icewarden-authenticated-by: handler), lists the schemes it takes.
std::vector<std::string> SecurityProblems(const YAML::Node& doc,
                                          const std::vector<ApiRouteInfo>& routes) {
  std::vector<std::string> out;
  const YAML::Node root = doc["security"];
  if (!root || !root.IsSequence() || root.size() != 1 || !root[0]["bearerAuth"])
    out.push_back("the document's security must be [{bearerAuth: []}]");
  const auto ops = Operations(doc);
  for (const ApiRouteInfo& r : routes) {
    auto it = ops.find(RouteKey(r));
    if (it == ops.end()) continue;
    const YAML::Node& op = it->second.node;
    const YAML::Node security = op["security"];
    const bool by_handler = op["x-icewarden-authenticated-by"] &&
                            op["x-icewarden-authenticated-by"].as<std::string>() == "handler";
    if (r.needs_token) {
      if (security)
        out.push_back(RouteKey(r) +
                      " needs a token: it must inherit the document's bearer security, not "
                      "have security of its own");
      if (by_handler)
        out.push_back(RouteKey(r) + " is authenticated by the router, not by its handler");
      if (!op["x-icewarden-permission"])
        out.push_back(RouteKey(r) + " needs a token but names no x-icewarden-permission");
      continue;
    }
    if (op["x-icewarden-permission"] || op["x-icewarden-roles"])
      out.push_back(RouteKey(r) +
                    " needs no token: it has no x-icewarden-permission or x-icewarden-roles");
    if (!security || !security.IsSequence()) {
      out.push_back(RouteKey(r) + " needs no token: it must say security: []");
    } else if (by_handler ? security.size() == 0 : security.size() != 0) {
      out.push_back(RouteKey(r) + (by_handler ? " checks its own credentials: its security must "
                                                "list the schemes it takes"
                                              : " needs no token: its security must be []"));
    }
  }
  return out;
}

// The permission names a role holds; admin holds every one.
std::set<std::string> PermissionsOf(Role role) {
  const auto names = PermissionNamesOf(role);
  return {names.begin(), names.end()};
}

std::vector<std::string> PermissionProblems(const YAML::Node& doc,
                                            const std::vector<ApiRouteInfo>& routes) {
  std::vector<std::string> out;
  const auto ops = Operations(doc);
  const std::set<std::string> all = PermissionsOf(Role::kAdmin);
  for (const ApiRouteInfo& r : routes) {
    auto it = ops.find(RouteKey(r));
    if (it == ops.end() || !r.needs_token) continue;
    const YAML::Node& op = it->second.node;
    if (!op["x-icewarden-permission"]) continue;  // SecurityProblems says so
    const std::string permission = op["x-icewarden-permission"].as<std::string>();
    if (!all.count(permission)) {
      out.push_back(RouteKey(r) + ": x-icewarden-permission '" + permission +
                    "' is not a permission; they are " + Join(all));
      continue;
    }
    std::set<std::string> holders;
    for (Role role : {Role::kViewer, Role::kOperator, Role::kApprover, Role::kAdmin})
      if (PermissionsOf(role).count(permission)) holders.insert(RoleName(role));
    std::set<std::string> documented;
    if (op["x-icewarden-roles"])
      for (const auto& role : op["x-icewarden-roles"]) documented.insert(role.as<std::string>());
    if (documented != holders)
      out.push_back(RouteKey(r) + ": " + permission + " is held by " + Join(holders) +
                    ", x-icewarden-roles says " + Join(documented));
  }
  return out;
}

// Shape: OpenAPI 3.0, every operation with a summary, a unique operationId and responses (400
// among them: every route refuses a query parameter it does not take; 401 and 403 where a
// token is needed), every path variable declared, and every local $ref resolving.
void CollectRefs(const YAML::Node& node, std::vector<std::string>* refs) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      if (kv.first.as<std::string>() == "$ref" && kv.second.IsScalar())
        refs->push_back(kv.second.as<std::string>());
      else
        CollectRefs(kv.second, refs);
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) CollectRefs(item, refs);
  }
}

std::vector<std::string> ShapeProblems(const YAML::Node& doc,
                                       const std::vector<ApiRouteInfo>& routes) {
  std::vector<std::string> out;
  if (!doc["openapi"] || doc["openapi"].as<std::string>().rfind("3.0.", 0) != 0)
    out.push_back("openapi must be 3.0.x");
  if (!doc["info"] || !doc["info"]["title"] || !doc["info"]["version"])
    out.push_back("info needs a title and a version");
  const YAML::Node bearer = doc["components"]["securitySchemes"]["bearerAuth"];
  if (!bearer || bearer["type"].as<std::string>("") != "http" ||
      bearer["scheme"].as<std::string>("") != "bearer")
    out.push_back("components.securitySchemes.bearerAuth must be an http bearer scheme");
  std::map<std::string, bool> needs_token;
  for (const ApiRouteInfo& r : routes) needs_token[RouteKey(r)] = r.needs_token;
  std::set<std::string> ids;
  static const std::regex kVariable(R"(\{([^}/]*)\})");
  for (const auto& [key, op] : Operations(doc)) {
    const YAML::Node& n = op.node;
    if (!n["summary"]) out.push_back(op.Name() + " has no summary");
    if (!n["operationId"]) {
      out.push_back(op.Name() + " has no operationId");
    } else if (!ids.insert(n["operationId"].as<std::string>()).second) {
      out.push_back(op.Name() + ": operationId " + n["operationId"].as<std::string>() +
                    " is used twice");
    }
    const YAML::Node responses = n["responses"];
    if (!responses || !responses.IsMap() || responses.size() == 0) {
      out.push_back(op.Name() + " has no responses");
      continue;
    }
    std::vector<std::string> codes;
    for (const auto& r : responses) {
      codes.push_back(r.first.as<std::string>());
      const YAML::Node resolved = Resolve(doc, r.second);
      if (!resolved["description"])
        out.push_back(op.Name() + ": response " + codes.back() + " has no description");
    }
    auto has = [&](const char* code) {
      return std::find(codes.begin(), codes.end(), code) != codes.end();
    };
    if (!std::any_of(codes.begin(), codes.end(), [](const std::string& c) { return c[0] == '2'; }))
      out.push_back(op.Name() + " documents no 2xx response");
    if (!has("400")) out.push_back(op.Name() + " does not document 400");
    if (needs_token[key] && (!has("401") || !has("403")))
      out.push_back(op.Name() + " needs a token but does not document 401 and 403");
    std::set<std::string> in_path;
    for (std::sregex_iterator m(op.path.begin(), op.path.end(), kVariable), end; m != end; ++m)
      in_path.insert((*m)[1]);
    std::set<std::string> declared;
    for (const YAML::Node& p : Parameters(doc, op)) {
      if (!p || !p["name"] || !p["in"]) {
        out.push_back(op.Name() + " has a parameter without a name or in");
        continue;
      }
      if (p["in"].as<std::string>() != "path") continue;
      declared.insert(p["name"].as<std::string>());
      if (!p["required"] || !p["required"].as<bool>())
        out.push_back(op.Name() + ": path parameter " + p["name"].as<std::string>() +
                      " must be required");
    }
    if (declared != in_path)
      out.push_back(op.Name() + ": the path's variables are " + Join(in_path) +
                    ", its path parameters " + Join(declared));
  }
  std::vector<std::string> refs;
  CollectRefs(doc, &refs);
  for (const std::string& ref : refs) {
    YAML::Node holder;
    holder["$ref"] = ref;
    if (!Resolve(doc, holder)) out.push_back("$ref " + ref + " does not resolve");
  }
  return out;
}

std::vector<std::string> AllProblems(const YAML::Node& doc) {
  const auto routes = Api::RouteTable();
  std::vector<std::string> out;
  for (auto check :
       {RouteSetProblems, QueryProblems, SecurityProblems, PermissionProblems, ShapeProblems}) {
    auto found = check(doc, routes);
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

// ---- The document as it is ----

TEST(OpenApiDocTest, RouterTableIsWhatTheDocumentIsCheckedAgainst) {
  // An empty table would make every comparison below pass.
  const auto routes = Api::RouteTable();
  EXPECT_GT(routes.size(), 30u);
  std::set<std::string> keys;
  for (const ApiRouteInfo& r : routes) EXPECT_TRUE(keys.insert(RouteKey(r)).second) << RouteKey(r);
}

TEST(OpenApiDocTest, EveryRouteIsDocumentedAndNothingElse) {
  EXPECT_THAT(RouteSetProblems(LoadDoc(), Api::RouteTable()), IsEmpty());
}

TEST(OpenApiDocTest, QueryParametersAreExactlyTheOnesEachRouteAccepts) {
  EXPECT_THAT(QueryProblems(LoadDoc(), Api::RouteTable()), IsEmpty());
}

TEST(OpenApiDocTest, SecurityIsEmptyExactlyWhereNoTokenIsNeeded) {
  EXPECT_THAT(SecurityProblems(LoadDoc(), Api::RouteTable()), IsEmpty());
}

TEST(OpenApiDocTest, PermissionsAndRolesAreAuthCppNames) {
  EXPECT_THAT(PermissionProblems(LoadDoc(), Api::RouteTable()), IsEmpty());
}

TEST(OpenApiDocTest, IsWellFormedOpenApi30) {
  EXPECT_THAT(ShapeProblems(LoadDoc(), Api::RouteTable()), IsEmpty());
}

// The documented permission is the one the router enforces: every role the document says
// lacks it gets the router's 403 naming it, and every role it lists gets past the router.
// Without services the handlers answer 503 or read the empty store, so nothing runs.
TEST(OpenApiDocTest, RouterEnforcesTheDocumentedPermission) {
  testing::FakeClock clock;
  testing::FakeStore store(clock);
  ApiConfig config;
  const std::map<Role, std::string> secrets = {{Role::kViewer, "viewer-secret"},
                                               {Role::kOperator, "operator-secret"},
                                               {Role::kApprover, "approver-secret"},
                                               {Role::kAdmin, "admin-secret"}};
  for (const auto& [role, secret] : secrets)
    config.tokens.push_back(ApiToken{RoleName(role), role, Secret(secret)});
  Api api(config, store, clock, {});
  const YAML::Node doc = LoadDoc();
  const auto ops = Operations(doc);
  for (const ApiRouteInfo& r : Api::RouteTable()) {
    auto it = ops.find(RouteKey(r));
    if (!r.needs_token || it == ops.end() || !it->second.node["x-icewarden-permission"]) continue;
    const std::string permission = it->second.node["x-icewarden-permission"].as<std::string>();
    std::set<std::string> roles;
    const YAML::Node& op = it->second.node;
    for (const auto& role : op["x-icewarden-roles"]) roles.insert(role.as<std::string>());
    ApiRequest req;
    req.method = std::string(r.method);
    req.target = std::regex_replace(std::string(r.pattern), std::regex(R"(\{id\})"), "x");
    req.remote = "127.0.0.1:5555";
    EXPECT_EQ(api.Handle(req).status, 401) << RouteKey(r) << " without a token";
    for (const auto& [role, secret] : secrets) {
      req.headers["authorization"] = "Bearer " + secret;
      const ApiResponse res = api.Handle(req);
      const bool denied = res.status == 403 && res.body.find("may not ") != std::string::npos;
      if (roles.count(RoleName(role))) {
        EXPECT_FALSE(denied) << RouteKey(r) << " as " << RoleName(role) << ": " << res.body;
      } else {
        EXPECT_TRUE(denied) << RouteKey(r) << " as " << RoleName(role) << ": " << res.status << " "
                            << res.body;
        EXPECT_THAT(res.body, HasSubstr("may not " + permission + ";")) << RouteKey(r);
      }
    }
  }
}

// ---- A broken copy of the document is caught, naming the route ----

TEST(OpenApiDocTest, ChecksCatchAMissingAnExtraAndAWrongMethodRoute) {
  YAML::Node doc = LoadDoc();
  ASSERT_TRUE(doc["paths"].remove("/api/v1/lag"));
  doc["paths"]["/api/v1/nothing"]["get"] = YAML::Clone(doc["paths"]["/healthz"]["get"]);
  doc["paths"]["/api/v1/pauses/resume"]["put"] =
      YAML::Clone(doc["paths"]["/api/v1/pauses/resume"]["post"]);
  ASSERT_TRUE(doc["paths"]["/api/v1/pauses/resume"].remove("post"));
  const auto problems = RouteSetProblems(doc, Api::RouteTable());
  EXPECT_THAT(problems, UnorderedElementsAre(HasSubstr("answers GET /api/v1/lag but"),
                                             HasSubstr("answers POST /api/v1/pauses/resume but"),
                                             HasSubstr("lists GET /api/v1/nothing but"),
                                             HasSubstr("lists PUT /api/v1/pauses/resume but")));
}

TEST(OpenApiDocTest, ChecksCatchAMissingOrExtraQueryParameter) {
  YAML::Node doc = LoadDoc();
  YAML::Node audit = doc["paths"]["/api/v1/audit"]["get"]["parameters"];
  YAML::Node kept;
  for (const auto& p : audit)
    if (p["name"].as<std::string>() != "actor") kept.push_back(p);
  doc["paths"]["/api/v1/audit"]["get"]["parameters"] = kept;
  YAML::Node extra;
  extra["name"] = "verbose";
  extra["in"] = "query";
  doc["paths"]["/healthz"]["get"]["parameters"].push_back(extra);
  EXPECT_THAT(QueryProblems(doc, Api::RouteTable()),
              UnorderedElementsAre(HasSubstr("GET /api/v1/audit: the router accepts"),
                                   HasSubstr("GET /healthz: the router accepts")));
}

TEST(OpenApiDocTest, ChecksCatchWrongSecurityAndPermissions) {
  YAML::Node doc = LoadDoc();
  ASSERT_TRUE(doc["paths"]["/metrics"]["get"].remove("security"));
  doc["paths"]["/api/v1/regions"]["get"]["security"] = YAML::Load("[]");
  doc["paths"]["/api/v1/audit"]["get"]["x-icewarden-roles"] =
      YAML::Load("[viewer, operator, approver, admin]");
  doc["paths"]["/api/v1/lag"]["get"]["x-icewarden-permission"] = "read_lag";
  const auto routes = Api::RouteTable();
  EXPECT_THAT(SecurityProblems(doc, routes),
              UnorderedElementsAre(HasSubstr("GET /metrics needs no token"),
                                   HasSubstr("GET /api/v1/regions needs a token")));
  EXPECT_THAT(PermissionProblems(doc, routes),
              UnorderedElementsAre(HasSubstr("GET /api/v1/audit: read_audit is held by"),
                                   HasSubstr("GET /api/v1/lag: x-icewarden-permission")));
}

TEST(OpenApiDocTest, ChecksCatchABrokenShape) {
  YAML::Node doc = LoadDoc();
  doc["openapi"] = "3.1.0";
  ASSERT_TRUE(doc["paths"]["/readyz"]["get"].remove("responses"));
  ASSERT_TRUE(doc["paths"]["/api/v1/drills/{drill}/runs"].remove("parameters"));
  doc["paths"]["/api/v1/session"]["get"]["responses"]["200"]["$ref"] = "#/components/nothing";
  EXPECT_THAT(
      ShapeProblems(doc, Api::RouteTable()),
      IsSupersetOf({HasSubstr("openapi must be 3.0.x"), HasSubstr("GET /readyz has no responses"),
                    HasSubstr("POST /api/v1/drills/{drill}/runs: the path's"),
                    HasSubstr("$ref #/components/nothing does not resolve")}));
  EXPECT_FALSE(AllProblems(doc).empty());
}

}  // namespace
}  // namespace icewarden
