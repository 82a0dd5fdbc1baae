// The pieces of an Iceberg REST answer that the lab's catalog handlers share (catalog_api.cpp,
// catalog_table_moves.cpp, catalog_transactions.cpp, view_api.cpp): the spec's error model,
// JSON bodies, request bodies, namespace path parameters and the spec's paging.
// Thread-safety: pure functions.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "examples/lab/catalog_store.h"

namespace icewarden::lab {

// {"error":{"message","type","code"}} with status `code`.
StoredResponse ErrorResponse(int code, const std::string& type, const std::string& message);
StoredResponse JsonResponse(const json& body, const std::string& etag = "");
void Send(const StoredResponse& stored, httplib::Response& res);

// The request's body as a JSON object; false with a 400 in `res` otherwise.
bool ParseBody(const httplib::Request& req, httplib::Response& res, json* body);
// The namespace levels of path parameter `index` (levels joined by %1F).
std::vector<std::string> NamespaceParam(const httplib::Request& req, int index);

// A TableIdentifier ({"namespace":[levels],"name":"t"}, levels and name non-empty strings);
// false for anything else.
bool ParseIdentifier(const json& identifier, TableIdent* out);

// One page of `keys` (sorted) per the spec's PageToken rules: no pageToken means everything in
// one response; otherwise the token is the hex of the last key returned. Returns false with an
// error in `res` when the paging parameters are malformed.
bool Page(const httplib::Request& req, httplib::Response& res, const std::vector<std::string>& keys,
          size_t* begin, size_t* end, json* next_token);

// {"config":{},"metadata":TEXT,"metadata-location":LOCATION}: LoadTableResult (or
// LoadViewResult) around metadata already serialized, without a second tree and dump.
std::string LoadTableResultText(const std::string& location, const std::string& metadata_text);

}  // namespace icewarden::lab
