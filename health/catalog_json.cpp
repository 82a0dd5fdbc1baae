#include "health/catalog_json.h"

#include <nlohmann/json.hpp>

#include "health/idempotency_in_progress.h"
#include "state/json_text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <type_traits>

namespace icewarden {
namespace {

using nlohmann::json;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// Thrown only inside this file and always caught by Guard().
struct ShapeError {
  std::string what;
};

const json& Required(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) throw ShapeError{std::string("missing \"") + key + "\""};
  return *it;
}

std::int64_t Int(const json& v, const char* key) {
  if (!v.is_number_integer()) throw ShapeError{std::string("\"") + key + "\" is not an integer"};
  return v.get<std::int64_t>();
}

std::string Str(const json& v, const char* key) {
  if (!v.is_string()) throw ShapeError{std::string("\"") + key + "\" is not a string"};
  return v.get<std::string>();
}

std::optional<std::int64_t> OptionalInt(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return Int(*it, key);
}

std::map<std::string, std::string> StringMap(const json& j, const char* key) {
  std::map<std::string, std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_object()) throw ShapeError{std::string("\"") + key + "\" is not an object"};
  for (const auto& [k, v] : it->items()) {
    // A null value is an absent one: catalogs write {"defaults": {"warehouse": null}}, and
    // rejecting the whole config for it made a live region look unreachable.
    if (v.is_null()) continue;
    out[k] = Str(v, key);
  }
  return out;
}

Namespace ParseNamespace(const json& v) {
  if (!v.is_array()) throw ShapeError{"a namespace is not an array of strings"};
  Namespace ns;
  for (const auto& level : v) ns.push_back(Str(level, "namespace"));
  return ns;
}

std::optional<std::string> PageToken(const json& j) {
  auto it = j.find("next-page-token");
  if (it == j.end() || it->is_null()) return std::nullopt;
  return Str(*it, "next-page-token");
}

template <class F>
auto Guard(std::string_view body, std::string_view what, F&& parse)
    -> Result<std::invoke_result_t<F, const json&>> {
  // The catalog answered; icewarden could not read it (DESIGN.md rule 7).
  auto malformed = [&](const std::string& why) {
    return Status::Unavailable("catalog returned a malformed " + std::string(what) + ": " + why)
        .WithReply(PeerReply::kUnparsed);
  };
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return malformed("not JSON");
  if (!j.is_object()) return malformed("not a JSON object");
  try {
    return parse(j);
  } catch (const ShapeError& e) {
    return malformed(e.what);
  } catch (const json::exception& e) {
    return malformed(e.what());
  }
}

}  // namespace

bool CatalogConfig::Advertises(std::string_view endpoint) const {
  if (!endpoints) return true;
  return std::find(endpoints->begin(), endpoints->end(), endpoint) != endpoints->end();
}

Result<CatalogConfig> ParseCatalogConfig(std::string_view body,
                                         const std::map<std::string, std::string>& client) {
  return Guard(body, "CatalogConfig", [&](const json& j) {
    CatalogConfig c;
    c.properties = StringMap(j, "defaults");
    for (const auto& [k, v] : client) c.properties[k] = v;
    for (const auto& [k, v] : StringMap(j, "overrides")) c.properties[k] = v;
    if (auto it = c.properties.find("prefix"); it != c.properties.end()) c.prefix = it->second;
    while (!c.prefix.empty() && c.prefix.back() == '/') c.prefix.pop_back();
    while (!c.prefix.empty() && c.prefix.front() == '/') c.prefix.erase(0, 1);
    if (auto it = c.properties.find("oauth2-server-uri"); it != c.properties.end()) {
      c.oauth2_server_uri = it->second;
    }
    if (auto it = j.find("endpoints"); it != j.end() && !it->is_null()) {
      if (!it->is_array()) throw ShapeError{"\"endpoints\" is not an array"};
      // An empty list means what a missing one does, the spec's default endpoints, as the
      // Java reference client reads it; "nothing advertised" made discovery find no table.
      if (!it->empty()) {
        c.endpoints.emplace();
        for (const auto& e : *it) c.endpoints->push_back(Str(e, "endpoints"));
      }
    }
    if (auto it = j.find("idempotency-key-lifetime"); it != j.end() && !it->is_null()) {
      c.supports_idempotency_keys = true;
      c.idempotency_key_lifetime = ParseIsoDuration(Str(*it, "idempotency-key-lifetime"));
    }
    return c;
  });
}

Result<NamespacePage> ParseListNamespacesResponse(std::string_view body) {
  return Guard(body, "ListNamespacesResponse", [](const json& j) {
    NamespacePage page;
    if (auto it = j.find("namespaces"); it != j.end() && !it->is_null()) {
      if (!it->is_array()) throw ShapeError{"\"namespaces\" is not an array"};
      for (const auto& ns : *it) page.namespaces.push_back(ParseNamespace(ns));
    }
    page.next_page_token = PageToken(j);
    return page;
  });
}

Result<TablePage> ParseListTablesResponse(std::string_view body) {
  return Guard(body, "ListTablesResponse", [](const json& j) {
    TablePage page;
    if (auto it = j.find("identifiers"); it != j.end() && !it->is_null()) {
      if (!it->is_array()) throw ShapeError{"\"identifiers\" is not an array"};
      for (const auto& id : *it) {
        page.identifiers.push_back(
            {ParseNamespace(Required(id, "namespace")), Str(Required(id, "name"), "name")});
      }
    }
    page.next_page_token = PageToken(j);
    return page;
  });
}

namespace {

// A JSON string literal appended to `out`. Written by hand (not through a json value): a
// commit request is built for every table ownership.transfer moves, and nlohmann's tree for
// these few fields cost more than the rest of the request. Non-ASCII text goes through
// DumpJson, which replaces invalid UTF-8 instead of throwing.
void AppendString(std::string& out, std::string_view s) {
  for (unsigned char c : s) {
    if (c >= 0x80) {
      out += DumpJson(json(std::string(s)));
      return;
    }
  }
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

template <class Range, class Each>
void AppendList(std::string& out, char open, const Range& items, Each&& each) {
  out += open;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += ',';
    first = false;
    each(item);
  }
  out += open == '[' ? ']' : '}';
}

}  // namespace

// Keys in the order nlohmann wrote them (sorted), so the bytes did not change.
std::string CommitTableRequestJson(const TableCommit& commit) {
  std::string out;
  out.reserve(256);
  out += "{\"identifier\":{\"name\":";
  AppendString(out, commit.table.name);
  out += ",\"namespace\":";
  AppendList(out, '[', commit.table.namespace_levels,
             [&](const std::string& level) { AppendString(out, level); });
  out += "},\"requirements\":";
  AppendList(out, '[', commit.requirements, [&](const TableRequirement& r) {
    std::visit(Overloaded{
                   [&](const AssertTableUuid& a) {
                     out += "{\"type\":\"assert-table-uuid\",\"uuid\":";
                     AppendString(out, a.uuid);
                     out += '}';
                   },
                   [&](const AssertRefSnapshotId& a) {
                     out += "{\"ref\":";
                     AppendString(out, a.ref);
                     out += ",\"snapshot-id\":";
                     out += a.snapshot_id ? std::to_string(*a.snapshot_id) : "null";
                     out += ",\"type\":\"assert-ref-snapshot-id\"}";
                   },
               },
               r);
  });
  out += ",\"updates\":";
  AppendList(out, '[', commit.updates, [&](const TableUpdate& u) {
    std::visit(Overloaded{
                   [&](const SetPropertiesUpdate& s) {
                     out += "{\"action\":\"set-properties\",\"updates\":";
                     AppendList(out, '{', s.updates, [&](const auto& kv) {
                       AppendString(out, kv.first);
                       out += ':';
                       AppendString(out, kv.second);
                     });
                     out += '}';
                   },
                   [&](const RemovePropertiesUpdate& r) {
                     out += "{\"action\":\"remove-properties\",\"removals\":";
                     AppendList(out, '[', r.removals,
                                [&](const std::string& key) { AppendString(out, key); });
                     out += '}';
                   },
               },
               u);
  });
  out += '}';
  return out;
}

std::optional<IcebergError> ParseIcebergError(std::string_view body) {
  // The spec's IcebergErrorResponse holds an ErrorModel object. {"error": "invalid_client"}
  // is an OAuth2 error (RFC 6749 5.2), which ParseOAuthError reads with its description.
  json peek = json::parse(body, nullptr, false);
  if (peek.is_discarded() || !peek.is_object() || !peek.contains("error") ||
      !peek["error"].is_object())
    return std::nullopt;
  auto r = Guard(body, "IcebergErrorResponse", [](const json& j) {
    const json& e = Required(j, "error");
    IcebergError out;
    out.message = e.is_object() && e.contains("message") ? Str(e["message"], "message") : "";
    out.type = e.is_object() && e.contains("type") ? Str(e["type"], "type") : "";
    out.code = e.is_object() && e.contains("code") ? static_cast<int>(Int(e["code"], "code")) : 0;
    return out;
  });
  if (!r.ok()) return std::nullopt;
  return std::move(r).value();
}

Result<OAuthToken> ParseOAuthTokenResponse(std::string_view body) {
  return Guard(body, "OAuthTokenResponse", [](const json& j) {
    OAuthToken t;
    t.access_token = Str(Required(j, "access_token"), "access_token");
    if (auto s = OptionalInt(j, "expires_in"); s && *s > 0) t.expires_in = std::chrono::seconds(*s);
    return t;
  });
}

std::optional<std::string> ParseOAuthError(std::string_view body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("error") || !j["error"].is_string()) {
    return std::nullopt;
  }
  std::string out = j["error"].get<std::string>();
  if (j.contains("error_description") && j["error_description"].is_string()) {
    out += ": " + j["error_description"].get<std::string>();
  }
  return out;
}

namespace {

bool IsTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
         c == '~' || c == '+' || c == '/' || c == '=';
}

bool IsSensitiveName(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view word : {"token", "secret", "password", "credential", "key"})
    if (lower.find(word) != std::string::npos) return true;
  return false;
}

// Replaces text[from, to) with "***" and returns the index just after it.
std::size_t Mask(std::string& text, std::size_t from, std::size_t to) {
  text.replace(from, to - from, "***");
  return from + 3;
}

// "name": "value" and name=value where the name is sensitive.
void MaskNamedValues(std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '"') {
      const std::size_t close = text.find('"', i + 1);
      if (close == std::string::npos) return;
      std::size_t j = close + 1;
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j < text.size() && text[j] == ':' && IsSensitiveName(text.substr(i + 1, close - i - 1))) {
        ++j;
        while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
        if (j < text.size() && text[j] == '"') {
          std::size_t end = j + 1;
          while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
          i = Mask(text, j + 1, std::min(end, text.size()));
          continue;
        }
      }
      i = close;
    } else if (text[i] == '=' && i > 0) {
      std::size_t start = i;
      while (start > 0 && (std::isalnum(static_cast<unsigned char>(text[start - 1])) ||
                           text[start - 1] == '_' || text[start - 1] == '-'))
        --start;
      if (!IsSensitiveName(text.substr(start, i - start))) continue;
      std::size_t end = i + 1;
      while (end < text.size() && IsTokenChar(text[end]) && text[end] != '&') ++end;
      if (end > i + 1) i = Mask(text, i + 1, end) - 1;
    }
  }
}

// "Bearer abc", "Basic abc" and anything shaped like a JWT ("eyJ...").
void MaskTokens(std::string& text) {
  for (std::string_view scheme : {"Bearer ", "bearer ", "Basic ", "basic "}) {
    for (std::size_t at = text.find(scheme); at != std::string::npos;
         at = text.find(scheme, at + 1)) {
      std::size_t from = at + scheme.size(), end = from;
      while (end < text.size() && IsTokenChar(text[end])) ++end;
      if (end > from) Mask(text, from, end);
    }
  }
  for (std::size_t at = text.find("eyJ"); at != std::string::npos; at = text.find("eyJ", at + 1)) {
    std::size_t end = at;
    while (end < text.size() && IsTokenChar(text[end])) ++end;
    Mask(text, at, end);
  }
}

}  // namespace

std::string RedactedExcerpt(std::string_view body, std::size_t limit) {
  // A secret longer than this margin past the limit is cut, not masked; none is that long.
  constexpr std::size_t kMargin = 4096;
  std::string text(body.substr(0, limit + kMargin));
  MaskNamedValues(text);
  MaskTokens(text);
  if (text.size() > limit) text.resize(limit);
  for (char& c : text)
    if (!std::isprint(static_cast<unsigned char>(c))) c = ' ';
  return text;
}

std::optional<std::chrono::milliseconds> ParseIsoDuration(std::string_view text) {
  if (text.empty() || (text[0] != 'P' && text[0] != 'p')) return std::nullopt;
  double total_ms = 0;
  bool in_time = false;
  bool any = false;
  size_t i = 1;
  while (i < text.size()) {
    char c = text[i];
    if (c == 'T' || c == 't') {
      in_time = true;
      ++i;
      continue;
    }
    size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) ||
                               text[i] == '.' || text[i] == ',')) {
      ++i;
    }
    if (start == i || i == text.size()) return std::nullopt;
    std::string number(text.substr(start, i - start));
    std::replace(number.begin(), number.end(), ',', '.');
    double value = 0;
    try {
      value = std::stod(number);
    } catch (...) {
      return std::nullopt;
    }
    char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(text[i++])));
    double unit_ms = 0;
    if (!in_time && unit == 'W')
      unit_ms = 7 * 86400e3;
    else if (!in_time && unit == 'D')
      unit_ms = 86400e3;
    else if (in_time && unit == 'H')
      unit_ms = 3600e3;
    else if (in_time && unit == 'M')
      unit_ms = 60e3;
    else if (in_time && unit == 'S')
      unit_ms = 1e3;
    else
      return std::nullopt;  // years and months (or a misplaced unit)
    total_ms += value * unit_ms;
    any = true;
  }
  if (!any) return std::nullopt;
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(total_ms)));
}

bool IsRequestInProgress(const HttpResponse& response) {
  if (response.status != 409) return false;
  auto e = ParseIcebergError(response.body);
  return e && (e->type == "RequestInProgress" || e->type == "request_in_progress");
}

}  // namespace icewarden
