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
StoredResponse NoContent();  // 204
StoredResponse NoSuchNamespace(const std::vector<std::string>& ns);
StoredResponse NoSuchTable(const TableIdent& table);

// The request's body as a JSON object; false with a 400 in `res` otherwise.
bool ParseBody(const httplib::Request& req, httplib::Response& res, json* body);
// The namespace levels of path parameter `index` (levels joined by %1F).
std::vector<std::string> NamespaceParam(const httplib::Request& req, int index);

// A TableIdentifier ({"namespace":[levels],"name":"t"}, levels and name non-empty strings);
// false for anything else.
bool ParseIdentifier(const json& identifier, TableIdent* out);
// A RenameTableRequest body (source and destination identifiers, for tables and views alike);
// false with a 400 in `res` naming `what` ("table", "view") otherwise.
bool ParseRename(const httplib::Request& req, httplib::Response& res, const std::string& what,
                 TableIdent* from, TableIdent* to);

// One page of `keys` (sorted) per the spec's PageToken rules: no pageToken means everything in
// one response; otherwise the token is the hex of the last key returned. Returns false with an
// error in `res` when the paging parameters are malformed.
bool Page(const httplib::Request& req, httplib::Response& res, const std::vector<std::string>& keys,
          size_t* begin, size_t* end, json* next_token);
// One page of `names` in `ns` as {"identifiers": [...], "next-page-token"}: ListTablesResponse,
// which listViews answers with too.
void SendIdentifiers(const httplib::Request& req, httplib::Response& res,
                     const std::vector<std::string>& ns, const std::vector<std::string>& names);

// {"config":{},"metadata":TEXT,"metadata-location":LOCATION}: LoadTableResult (or
// LoadViewResult) around metadata already serialized, without a second tree and dump.
std::string LoadTableResultText(const std::string& location, const std::string& metadata_text);

}  // namespace icewarden::lab
