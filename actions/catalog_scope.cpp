#include "actions/catalog_scope.h"

#include <cctype>
#include <nlohmann/json.hpp>

#include "actions/param_reader.h"
#include "state/state_store.h"
#include "state/table_pattern.h"

namespace icewarden {

namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string JoinLevels(const std::vector<std::string>& levels) {
  std::string out;
  for (const auto& l : levels) out += (out.empty() ? "" : ".") + l;
  return out;
}

}  // namespace

Result<CatalogScope> CatalogScope::Parse(std::string_view text) {
  const std::string kForms =
      "expected \"namespace:PATTERN[,PATTERN]\", \"tables:NS.TABLE[,NS.TABLE]\", "
      "\"owner:REGION\", or \"failover:ID\" (the tables failover ID moved; what failback uses)";
  auto colon = text.find(':');
  if (colon == std::string_view::npos)
    return Status::InvalidArgument("scope '" + std::string(text) + "': " + kForms);
  std::string kind = Trim(text.substr(0, colon));
  CatalogScope scope;
  scope.text = std::string(text);
  if (kind == "namespace") {
    scope.kind = Kind::kNamespace;
  } else if (kind == "tables") {
    scope.kind = Kind::kTables;
  } else if (kind == "owner") {
    scope.kind = Kind::kOwner;
  } else if (kind == "failover") {
    scope.kind = Kind::kFailover;
  } else {
    return Status::InvalidArgument("scope '" + std::string(text) + "': unknown kind '" + kind +
                                   "'; " + kForms);
  }
  std::string_view rest = text.substr(colon + 1);
  while (true) {
    auto comma = rest.find(',');
    std::string item = Trim(rest.substr(0, comma));
    if (item.empty())
      return Status::InvalidArgument("scope '" + std::string(text) + "': empty pattern; " + kForms);
    scope.patterns.push_back(item);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (scope.kind == Kind::kOwner && scope.patterns.size() != 1)
    return Status::InvalidArgument("scope '" + std::string(text) + "': names one region");
  if (scope.kind == Kind::kFailover && scope.patterns.size() != 1)
    return Status::InvalidArgument("scope '" + std::string(text) + "': names one failover id");
  return scope;
}

bool CatalogScope::Matches(const TableIdent& table) const {
  if (kind == Kind::kOwner || kind == Kind::kFailover) return true;
  std::string dotted = table.ToString();
  std::string ns = JoinLevels(table.namespace_levels);
  for (const auto& p : patterns) {
    if (GlobMatch(p, dotted)) return true;
    if (kind == Kind::kNamespace && GlobMatch(p, ns)) return true;
  }
  return false;
}

ScopeOwnershipCursor::ScopeOwnershipCursor(StateStore& store, CatalogScope scope, std::string owner,
                                           std::optional<std::string> failover_id,
                                           std::size_t page_size)
    : store_(store),
      scope_(std::move(scope)),
      owner_(std::move(owner)),
      failover_id_(std::move(failover_id)),
      page_size_(page_size == 0 ? 1000 : page_size) {}

Result<std::vector<Ownership>> ScopeOwnershipCursor::Next(std::size_t max) {
  std::vector<Ownership> out;
  while (out.size() < max) {
    if (buffered_.empty()) {
      if (store_done_) break;
      OwnershipQuery query;
      query.owner = owner_;
      query.after = after_;
      query.limit = page_size_;
      auto page = store_.ListOwnership(query);
      if (!page.ok()) return page.status();
      if (page->size() < page_size_) store_done_ = true;
      if (page->empty()) break;
      after_ = page->back().table;
      for (auto& row : *page) {
        if (!scope_.Matches(row.table)) continue;
        // A failover scope is the rows that failover last moved; a cursor for the rows a
        // failover itself moved (resumed markers, compensation) needs only its own id: each
        // such row was in the scope when it was moved.
        if (failover_id_) {
          if (row.failover_id != *failover_id_) continue;
        } else if (scope_.kind == CatalogScope::Kind::kFailover &&
                   row.failover_id != scope_.patterns.front()) {
          continue;
        }
        buffered_.push_back(std::move(row));
      }
      continue;
    }
    size_t take = std::min(buffered_.size(), max - out.size());
    out.insert(out.end(), std::make_move_iterator(buffered_.begin()),
               std::make_move_iterator(buffered_.begin() + take));
    buffered_.erase(buffered_.begin(), buffered_.begin() + take);
  }
  if (out.empty() && buffered_.empty() && store_done_) exhausted_ = true;
  return out;
}

Result<std::vector<Ownership>> ListScopeOwnership(StateStore& store, const CatalogScope& scope,
                                                  const std::string& owner, std::size_t max_rows) {
  ScopeOwnershipCursor cursor(store, scope, owner);
  std::vector<Ownership> all;
  while (true) {
    auto rows = cursor.Next(1000);
    if (!rows.ok()) return rows.status();
    if (rows->empty()) break;
    all.insert(all.end(), std::make_move_iterator(rows->begin()),
               std::make_move_iterator(rows->end()));
    if (max_rows != 0 && all.size() > max_rows)
      return Status::FailedPrecondition("scope " + scope.text + " has more than " +
                                        std::to_string(max_rows) + " tables owned by " + owner);
  }
  return all;
}

std::optional<std::string> StringParam(const nlohmann::json& params, const std::string& key,
                                       std::vector<ParamError>* errors) {
  if (!params.is_object() || !params.contains(key)) return std::nullopt;
  const auto& v = params[key];
  if (!v.is_string() || v.get<std::string>().empty()) {
    errors->push_back({key, "must be a non-empty string"});
    return std::nullopt;
  }
  return v.get<std::string>();
}

std::optional<bool> BoolParam(const nlohmann::json& params, const std::string& key,
                              std::vector<ParamError>* errors) {
  if (!params.is_object() || !params.contains(key)) return std::nullopt;
  if (!params[key].is_boolean()) {
    errors->push_back({key, "must be true or false"});
    return std::nullopt;
  }
  return params[key].get<bool>();
}

std::optional<long long> IntParam(const nlohmann::json& params, const std::string& key,
                                  long long min, long long max, std::vector<ParamError>* errors) {
  if (!params.is_object() || !params.contains(key)) return std::nullopt;
  const auto& v = params[key];
  std::string range = " between " + std::to_string(min) + " and " + std::to_string(max);
  if (!v.is_number_integer()) {
    errors->push_back({key, "must be an integer" + range});
    return std::nullopt;
  }
  long long n = v.get<long long>();
  if (n < min || n > max) {
    errors->push_back({key, "must be" + range + ", not " + std::to_string(n)});
    return std::nullopt;
  }
  return n;
}

std::optional<std::chrono::milliseconds> DurationParam(const nlohmann::json& params,
                                                       const std::string& key,
                                                       std::vector<ParamError>* errors) {
  if (!params.is_object() || !params.contains(key)) return std::nullopt;
  const auto& v = params[key];
  if (v.is_number_integer() && v.get<long long>() == 0) return std::chrono::milliseconds(0);
  std::optional<std::chrono::milliseconds> d;
  if (v.is_string()) d = ParseParamDuration(v.get<std::string>());
  if (!d) {
    errors->push_back(
        {key, "must be a duration such as \"500ms\", \"30s\", \"5m\" or \"1h30m\", at most " +
                  FormatParamDuration(kMaxParamDuration)});
    return std::nullopt;
  }
  return d;
}

void CheckParamKeys(const nlohmann::json& params, const std::vector<std::string>& known,
                    std::vector<ParamError>* errors) {
  if (params.is_null()) return;
  if (!params.is_object()) {
    errors->push_back({"", "params must be a mapping"});
    return;
  }
  for (const auto& [key, value] : params.items()) {
    bool ok = false;
    for (const auto& k : known) ok = ok || k == key;
    if (ok) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    errors->push_back({key, "unknown param; known: " + list});
  }
}

}  // namespace icewarden
