#include "examples/lab/catalog_responses.h"

#include "examples/lab/catalog_api.h"  // SetErrorResponse

#include <algorithm>
#include <charconv>
#include <optional>

namespace icewarden::lab {
namespace {

constexpr int kDefaultPageSize = 100;

std::string Hex(const std::string& text) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// nullopt unless `text` is pairs of hex digits.
std::optional<std::string> Unhex(const std::string& text) {
  if (text.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < text.size(); i += 2) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text.data() + i, text.data() + i + 2, value, 16);
    if (ec != std::errc() || end != text.data() + i + 2) return std::nullopt;
    out += static_cast<char>(value);
  }
  return out;
}

// A whole string of digits; nullopt for anything else ("10abc", "", "-1").
std::optional<int> WholeInt(const std::string& text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

StoredResponse ErrorResponse(int code, const std::string& type, const std::string& message) {
  json body = {{"error", {{"message", message}, {"type", type}, {"code", code}}}};
  return {code, body.dump(), ""};
}

StoredResponse JsonResponse(const json& body, const std::string& etag) {
  return {200, body.dump(), etag};
}

void Send(const StoredResponse& stored, httplib::Response& res) {
  res.status = stored.status;
  if (!stored.etag.empty()) res.set_header("ETag", stored.etag);
  if (!stored.body.empty()) res.set_content(stored.body, "application/json");
}

// One page of `keys` (sorted) per the spec's PageToken rules: no pageToken means everything in
// one response; otherwise the token is the hex of the last key returned. Returns false with an
// error in `res` when the paging parameters are malformed.
bool Page(const httplib::Request& req, httplib::Response& res, const std::vector<std::string>& keys,
          size_t* begin, size_t* end, json* next_token) {
  *begin = 0;
  *end = keys.size();
  *next_token = nullptr;
  if (!req.has_param("pageToken")) return true;
  std::optional<int> size = kDefaultPageSize;
  if (req.has_param("pageSize")) size = WholeInt(req.get_param_value("pageSize"));
  std::optional<std::string> after = Unhex(req.get_param_value("pageToken"));
  if (after && !after->empty())
    *begin = std::upper_bound(keys.begin(), keys.end(), *after) - keys.begin();
  if (!size || *size < 1 || !after) {
    SetErrorResponse(res, 400, "BadRequestException", "pageSize and pageToken must be valid");
    return false;
  }
  *end = std::min(keys.size(), *begin + static_cast<size_t>(*size));
  if (*end < keys.size()) *next_token = Hex(keys[*end - 1]);
  return true;
}

std::vector<std::string> NamespaceParam(const httplib::Request& req, int index) {
  return SplitNamespace(req.matches[index].str(), kNamespaceSeparator);
}

StoredResponse NoContent() { return {204, "", ""}; }

StoredResponse NoSuchNamespace(const std::vector<std::string>& ns) {
  return ErrorResponse(404, "NoSuchNamespaceException",
                       "Namespace does not exist: " + JoinNamespace(ns, '.'));
}

StoredResponse NoSuchTable(const TableIdent& table) {
  return ErrorResponse(404, "NoSuchTableException", "Table does not exist: " + table.Dotted());
}

bool ParseRename(const httplib::Request& req, httplib::Response& res, const std::string& what,
                 TableIdent* from, TableIdent* to) {
  json body;
  if (!ParseBody(req, res, &body)) return false;
  if (!ParseIdentifier(body.value("source", json()), from) ||
      !ParseIdentifier(body.value("destination", json()), to)) {
    Send(ErrorResponse(400, "BadRequestException",
                       "source and destination must be " + what + " identifiers"),
         res);
    return false;
  }
  return true;
}

void SendIdentifiers(const httplib::Request& req, httplib::Response& res,
                     const std::vector<std::string>& ns, const std::vector<std::string>& names) {
  size_t begin, end;
  json next;
  if (!Page(req, res, names, &begin, &end, &next)) return;
  json identifiers = json::array();
  for (size_t i = begin; i < end; ++i) {
    identifiers.push_back({{"namespace", ns}, {"name", names[i]}});
  }
  Send(JsonResponse({{"identifiers", identifiers}, {"next-page-token", next}}), res);
}

bool ParseBody(const httplib::Request& req, httplib::Response& res, json* body) {
  *body = json::parse(req.body, nullptr, false);
  if (body->is_discarded() || !body->is_object()) {
    SetErrorResponse(res, 400, "BadRequestException", "request body must be a JSON object");
    return false;
  }
  return true;
}

// {"config":{},"metadata":TEXT,"metadata-location":LOCATION}: LoadTableResult around metadata
// already serialized (as nlohmann orders the keys), without a second tree and dump.
bool ParseIdentifier(const json& identifier, TableIdent* out) {
  if (!identifier.is_object() || !identifier.value("namespace", json()).is_array() ||
      !identifier.value("name", json()).is_string()) {
    return false;
  }
  TableIdent ident;
  for (const auto& level : identifier["namespace"]) {
    if (!level.is_string() || level.get<std::string>().empty()) return false;
    ident.ns.push_back(level.get<std::string>());
  }
  ident.name = identifier["name"].get<std::string>();
  if (ident.ns.empty() || ident.name.empty()) return false;
  *out = std::move(ident);
  return true;
}

std::string LoadTableResultText(const std::string& location, const std::string& metadata_text) {
  return "{\"config\":{},\"metadata\":" + metadata_text +
         ",\"metadata-location\":" + json(location).dump() + "}";
}

void SetErrorResponse(httplib::Response& res, int code, const std::string& type,
                      const std::string& message) {
  Send(ErrorResponse(code, type, message), res);
}

}  // namespace icewarden::lab
