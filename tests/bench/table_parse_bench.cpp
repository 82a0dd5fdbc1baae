// ParseTableResult (simdjson, health/table_result_json.cpp) next to nlohmann's DOM parse of the
// same body, which the previous ParseTableResult paid before reading a single field (so the
// ratio is a lower bound of the gain). Bodies: the lab's LoadTableResult of an empty table
// (~1 KB, what ownership.transfer loads 10,000 times), and one with 100 and 10,000 snapshots
// (what the lag monitor loads with snapshots=all for a busy table).
//
//   ./build/tests/bench/table_parse_bench
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include <string>

#include "health/catalog_json.h"

namespace icewarden {
namespace {

using nlohmann::json;

std::string TableResult(int snapshots) {
  json m = {
      {"format-version", 2},
      {"table-uuid", "e324cacb-8c9f-4d06-8a2f-5ed9c16278af"},
      {"location", "s3://icewarden-lab/warehouse/sales/seed_00003"},
      {"last-sequence-number", snapshots},
      {"last-updated-ms", 1796124300698},
      {"last-column-id", 5},
      {"current-schema-id", 0},
      {"schemas",
       {{{"type", "struct"},
         {"schema-id", 0},
         {"fields",
          {{{"id", 1}, {"name", "event_id"}, {"required", true}, {"type", "string"}},
           {{"id", 2}, {"name", "user_id"}, {"required", false}, {"type", "long"}},
           {{"id", 3}, {"name", "event_type"}, {"required", false}, {"type", "string"}},
           {{"id", 4}, {"name", "ts"}, {"required", false}, {"type", "timestamptz"}},
           {{"id", 5}, {"name", "payload"}, {"required", false}, {"type", "string"}}}}}}},
      {"default-spec-id", 0},
      {"partition-specs",
       {{{"spec-id", 0},
         {"fields",
          {{{"name", "ts_hour"}, {"transform", "hour"}, {"source-id", 4}, {"field-id", 1000}}}}}}},
      {"last-partition-id", 1000},
      {"default-sort-order-id", 0},
      {"sort-orders", {{{"order-id", 0}, {"fields", json::array()}}}},
      {"properties",
       {{"write.format.default", "parquet"},
        {"icewarden.owner", "us-east-1"},
        {"icewarden.epoch", "3"}}},
      {"metadata-log", json::array()}};
  json snaps = json::array(), log = json::array();
  for (int i = 1; i <= snapshots; ++i) {
    json s = {{"snapshot-id", 4000000000000000000 + i},
              {"sequence-number", i},
              {"timestamp-ms", 1796124300698 + i},
              {"manifest-list", "s3://icewarden-lab/warehouse/sales/seed_00003/metadata/snap-" +
                                    std::to_string(i) + ".avro"},
              {"summary", {{"operation", "append"}, {"added-records", "100"}}},
              {"schema-id", 0}};
    if (i > 1) s["parent-snapshot-id"] = 4000000000000000000 + i - 1;
    snaps.push_back(s);
    log.push_back({{"snapshot-id", 4000000000000000000 + i}, {"timestamp-ms", 1796124300698 + i}});
  }
  m["snapshots"] = snaps;
  m["snapshot-log"] = log;
  m["current-snapshot-id"] = snapshots ? 4000000000000000000 + snapshots : -1;
  m["refs"] =
      snapshots
          ? json{{"main", {{"snapshot-id", 4000000000000000000 + snapshots}, {"type", "branch"}}}}
          : json::object();
  return json{{"metadata-location",
               "s3://icewarden-lab/warehouse/sales/seed_00003/metadata/"
               "00001-92c8d491-9f8f-458c-aee5-7828e9a05605.metadata.json"},
              {"metadata", m},
              {"config", json::object()}}
      .dump();
}

void BM_ParseTableResult(benchmark::State& state) {
  const std::string body = TableResult(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto r = ParseTableResult(body, "LoadTableResult");
    if (!r.ok()) state.SkipWithError("parse failed");
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
  state.counters["body_bytes"] = static_cast<double>(body.size());
}

void BM_NlohmannDomParseOnly(benchmark::State& state) {
  const std::string body = TableResult(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    json j = json::parse(body);
    benchmark::DoNotOptimize(j);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
  state.counters["body_bytes"] = static_cast<double>(body.size());
}

BENCHMARK(BM_ParseTableResult)->Arg(0)->Arg(100)->Arg(10000);
BENCHMARK(BM_NlohmannDomParseOnly)->Arg(0)->Arg(100)->Arg(10000);

}  // namespace
}  // namespace icewarden

BENCHMARK_MAIN();
