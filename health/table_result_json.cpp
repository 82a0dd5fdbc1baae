// ParseTableResult on simdjson: LoadTableResult and CommitTableResponse are the largest bodies
// icewarden reads (a table's whole metadata: every snapshot, both logs), on the hottest paths
// (ownership.transfer loads every table of a scope; the lag monitor loads every table every
// round). nlohmann's DOM parse cost ~90 instructions a byte plus a node per value; simdjson's
// DOM parse is an order of magnitude cheaper (tests/bench/table_parse_bench). The rest of the
// catalog's bodies are small and stay on nlohmann (catalog_json.cpp).
//
// The rules are those of catalog_json.cpp: a missing or null required field, or a field of the
// wrong type, makes the body malformed (kUnavailable, PeerReply::kUnparsed); unknown fields are
// ignored; a null property value is an absent one.
#include <simdjson.h>

#include <string>

#include "health/catalog_json.h"

namespace icewarden {
namespace {

namespace dom = simdjson::dom;

// Thrown only inside this file and always caught by ParseTableResult.
struct ShapeError {
  std::string what;
};

bool IsNull(dom::element e) { return e.type() == dom::element_type::NULL_VALUE; }

// The field, or nullopt when it is absent or null.
std::optional<dom::element> Field(dom::object o, std::string_view key) {
  dom::element e;
  if (o.at_key(key).get(e) != simdjson::SUCCESS || IsNull(e)) return std::nullopt;
  return e;
}

dom::element Required(dom::object o, std::string_view key) {
  auto e = Field(o, key);
  if (!e) throw ShapeError{"missing \"" + std::string(key) + "\""};
  return *e;
}

std::int64_t Int(dom::element e, std::string_view key) {
  std::int64_t v = 0;
  if (e.get_int64().get(v) == simdjson::SUCCESS) return v;
  std::uint64_t u = 0;
  if (e.type() == dom::element_type::UINT64 && e.get_uint64().get(u) == simdjson::SUCCESS)
    return static_cast<std::int64_t>(u);  // as nlohmann's get<int64_t> reads it
  throw ShapeError{"\"" + std::string(key) + "\" is not an integer"};
}

std::string Str(dom::element e, std::string_view key) {
  std::string_view v;
  if (e.get_string().get(v) != simdjson::SUCCESS)
    throw ShapeError{"\"" + std::string(key) + "\" is not a string"};
  return std::string(v);
}

dom::object Object(dom::element e, std::string_view what) {
  dom::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) throw ShapeError{std::string(what)};
  return o;
}

std::optional<std::int64_t> OptionalInt(dom::object o, std::string_view key) {
  auto e = Field(o, key);
  if (!e) return std::nullopt;
  return Int(*e, key);
}

// An array field; absent, null or not an array reads as empty (as catalog_json.cpp did).
std::optional<dom::array> ArrayField(dom::object o, std::string_view key) {
  auto e = Field(o, key);
  dom::array a;
  if (!e || e->get_array().get(a) != simdjson::SUCCESS) return std::nullopt;
  return a;
}

SnapshotInfo ParseSnapshot(dom::element e) {
  dom::object s = Object(e, "a snapshot is not an object");
  SnapshotInfo out;
  out.snapshot_id = Int(Required(s, "snapshot-id"), "snapshot-id");
  out.parent_snapshot_id = OptionalInt(s, "parent-snapshot-id");
  out.sequence_number = OptionalInt(s, "sequence-number");
  out.timestamp_ms = Int(Required(s, "timestamp-ms"), "timestamp-ms");
  if (auto summary = Field(s, "summary"); summary && summary->is_object()) {
    dom::element op;
    if (dom::object(*summary).at_key("operation").get(op) == simdjson::SUCCESS)
      out.operation = Str(op, "operation");
  }
  return out;
}

TableSnapshotView ParseMetadata(dom::object m) {
  TableSnapshotView t;
  t.table_uuid = Str(Required(m, "table-uuid"), "table-uuid");
  t.format_version = static_cast<int>(Int(Required(m, "format-version"), "format-version"));
  t.current_snapshot_id = OptionalInt(m, "current-snapshot-id");
  if (t.current_snapshot_id == -1) t.current_snapshot_id.reset();  // v1 writers use -1
  t.last_sequence_number = OptionalInt(m, "last-sequence-number").value_or(0);
  t.last_updated_ms = OptionalInt(m, "last-updated-ms").value_or(0);
  if (auto p = Field(m, "properties")) {
    for (auto [k, v] : Object(*p, "\"properties\" is not an object")) {
      if (IsNull(v)) continue;
      t.properties[std::string(k)] = Str(v, "properties");
    }
  }
  if (auto a = ArrayField(m, "snapshots")) {
    for (dom::element s : *a) t.snapshots.push_back(ParseSnapshot(s));
  }
  if (auto refs = Field(m, "refs"); refs && refs->is_object()) {
    for (auto [name, ref] : dom::object(*refs)) {
      dom::object r = Object(ref, "a ref is not an object");
      t.refs[std::string(name)] = Int(Required(r, "snapshot-id"), "snapshot-id");
    }
  }
  if (auto a = ArrayField(m, "snapshot-log")) {
    for (dom::element e : *a) {
      dom::object entry = Object(e, "a snapshot-log entry is not an object");
      t.snapshot_log.push_back({Int(Required(entry, "snapshot-id"), "snapshot-id"),
                                Int(Required(entry, "timestamp-ms"), "timestamp-ms")});
    }
  }
  if (auto a = ArrayField(m, "metadata-log")) {
    for (dom::element e : *a) {
      dom::object entry = Object(e, "a metadata-log entry is not an object");
      t.metadata_log.push_back({Str(Required(entry, "metadata-file"), "metadata-file"),
                                Int(Required(entry, "timestamp-ms"), "timestamp-ms")});
    }
  }
  return t;
}

}  // namespace

Result<TableSnapshotView> ParseTableResult(std::string_view body, std::string_view what) {
  // The catalog answered; icewarden could not read it (DESIGN.md rule 7).
  auto malformed = [&](const std::string& why) {
    return Status::Unavailable("catalog returned a malformed " + std::string(what) + ": " + why)
        .WithReply(PeerReply::kUnparsed);
  };
  // One parser per thread: its buffers grow to the largest body seen and are reused, and a
  // parser is not to be shared between threads.
  thread_local dom::parser parser;
  dom::element root;
  if (parser.parse(body.data(), body.size()).get(root) != simdjson::SUCCESS)
    return malformed("not JSON");
  dom::object top;
  if (root.get_object().get(top) != simdjson::SUCCESS) return malformed("not a JSON object");
  try {
    TableSnapshotView t =
        ParseMetadata(Object(Required(top, "metadata"), "\"metadata\" is not an object"));
    if (auto loc = Field(top, "metadata-location")) {
      t.metadata_location = Str(*loc, "metadata-location");
    }
    return t;
  } catch (const ShapeError& e) {
    return malformed(e.what);
  }
}

}  // namespace icewarden
