#include "examples/lab/lab_seed.h"

#include <cstdio>

#include "examples/lab/table_metadata.h"

namespace icewarden::lab {
namespace {

json Field(int id, const char* name, const char* type, bool required) {
  return {{"id", id}, {"name", name}, {"type", type}, {"required", required}};
}

// A CreateTableRequest shaped for the table's kind (orders, customers or events).
json CreateRequest(const std::string& name) {
  json request = {{"name", name}, {"properties", {{"write.format.default", "parquet"}}}};
  if (name.find("customer") != std::string::npos) {
    request["schema"] = {{"type", "struct"},
                         {"fields",
                          {Field(1, "id", "long", true), Field(2, "name", "string", false),
                           Field(3, "email", "string", false), Field(4, "country", "string", false),
                           Field(5, "updated_at", "timestamptz", false)}},
                         {"identifier-field-ids", {1}}};
    request["write-order"] = {{"fields",
                               {{{"source-id", 1},
                                 {"transform", "identity"},
                                 {"direction", "asc"},
                                 {"null-order", "nulls-first"}}}}};
  } else if (name.find("order") != std::string::npos) {
    request["schema"] = {
        {"type", "struct"},
        {"fields",
         {Field(1, "id", "long", true), Field(2, "customer_id", "long", false),
          Field(3, "amount", "decimal(12,2)", false), Field(4, "status", "string", false),
          Field(5, "created_at", "timestamptz", false)}}};
    request["partition-spec"] = {
        {"fields", {{{"source-id", 5}, {"transform", "day"}, {"name", "created_at_day"}}}}};
  } else {
    request["schema"] = {
        {"type", "struct"},
        {"fields",
         {Field(1, "event_id", "string", true), Field(2, "user_id", "long", false),
          Field(3, "event_type", "string", false), Field(4, "ts", "timestamptz", false),
          Field(5, "payload", "string", false)}}};
    request["partition-spec"] = {
        {"fields", {{{"source-id", 4}, {"transform", "hour"}, {"name", "ts_hour"}}}}};
  }
  return request;
}

const std::vector<std::vector<std::string>>& SeedNamespaces() {
  static const std::vector<std::vector<std::string>> namespaces = {
      {"clickstream"}, {"eu"}, {"sales"}, {"sales", "archive"}};
  return namespaces;
}

}  // namespace

std::vector<TableIdent> WorkloadTables() {
  return {{{"sales"}, "orders"}, {{"sales"}, "customers"}, {{"clickstream"}, "events"},
          {{"eu"}, "orders"},    {{"eu"}, "customers"},    {{"sales", "archive"}, "orders_2024"}};
}

void SeedRegions(const std::vector<LabRegion*>& regions, Ownership& ownership,
                 const std::string& base_location, int extra_tables, int64_t now_ms) {
  for (auto* region : regions) {
    for (const auto& ns : SeedNamespaces()) {
      region->store->CreateNamespace(ns, {{"owner", "icewarden-lab"}});
    }
  }
  std::vector<TableIdent> tables = WorkloadTables();
  const std::vector<std::string> spread = {"sales", "clickstream", "eu"};
  for (int i = 0; i < extra_tables; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "seed_%05d", i);
    tables.push_back({{spread[i % spread.size()]}, name});
  }
  for (const auto& table : tables) {
    bool anywhere = false;
    for (auto* region : regions) anywhere = anywhere || region->store->LoadTable(table).has_value();
    if (anywhere) continue;
    std::string owner = ownership.Resolve(table, {}).owner;
    for (auto* region : regions) {
      if (region->name != owner) continue;
      std::string location = base_location + "/" + JoinNamespace(table.ns, '/') + "/" + table.name;
      auto created = NewTableMetadata(CreateRequest(table.name), location, now_ms);
      region->store->CreateTable(table, NextMetadataLocation(created.metadata, ""),
                                 created.metadata, now_ms);
    }
  }
}

}  // namespace icewarden::lab
