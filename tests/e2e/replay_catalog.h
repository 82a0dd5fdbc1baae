// A replay catalog: an Iceberg REST catalog stand-in on 127.0.0.1 that answers with the
// payloads one implementation recorded or used as fixtures (tests/compat/corpus/<flavour>/),
// so the real daemon's probes, health tracking, discovery and lag run against that
// implementation's flavour of the spec (issue 11, item 1).
//
// What a flavour serves, chosen from its folder by file name (sorted), byte for byte:
//   GET  .../v1/config                       the first config payload under which every call
//                                            below is allowed (no `endpoints`, or all of them);
//   GET  .../namespaces                      the first non-empty namespaces payload without a
//                                            next-page-token; `?parent=` gets {"namespaces": []};
//   GET  .../namespaces/{ns}/tables          the first non-empty tables payload without a token;
//   GET  .../namespaces/{ns}/tables/{table}  the first load payload, else the first metadata
//                                            payload wrapped as {"metadata-location", "metadata"}.
// A kind the implementation's folder lacks is filled, and the fill is named in `fills`:
// config and listings with the spec's minimal shapes, loads with the Java reference's
// TableMetadataV2ValidMinimal. Paths are matched by their tail, so any prefix works.
// Thread-safety: Start/Stop from the test thread; the server runs on its own thread.
#pragma once

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace icewarden::testing {

struct ReplayFlavour {
  std::string name;  // the corpus folder: "nessie"
  std::string config, namespaces, tables, load;
  std::vector<std::string> sources;  // "config: nessie/config__....json", "load: filled ..."
  std::string table;                 // the first listed table, "ns.name", for the probe
};

namespace replay_detail {

inline std::string Read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::filesystem::path> OfKind(const std::filesystem::path& dir,
                                                 const std::string& kind) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind(kind + "__", 0) == 0) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

inline bool NoPageToken(const nlohmann::json& j) {
  auto it = j.find("next-page-token");
  return it == j.end() || it->is_null();
}

// The config's endpoints allow every GET the probes, discovery and lag make.
inline bool AllowsReads(const nlohmann::json& j) {
  auto it = j.find("endpoints");
  if (it == j.end() || it->is_null() || it->empty()) return true;
  for (const char* e :
       {"GET /v1/{prefix}/namespaces", "GET /v1/{prefix}/namespaces/{namespace}/tables",
        "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"})
    if (std::find(it->begin(), it->end(), e) == it->end()) return false;
  return true;
}

}  // namespace replay_detail

// The flavour of corpus folder `dir` (e.g. SourceDir()/tests/compat/corpus/nessie).
inline ReplayFlavour LoadFlavour(const std::filesystem::path& dir) {
  using namespace replay_detail;
  using nlohmann::json;
  ReplayFlavour f;
  f.name = dir.filename().string();
  auto pick = [&](const std::string& kind, auto&& usable, std::string* out) {
    for (const auto& p : OfKind(dir, kind)) {
      std::string body = Read(p);
      json j = json::parse(body, nullptr, false);
      if (j.is_discarded() || !usable(j)) continue;
      *out = body;
      f.sources.push_back(kind + ": " + f.name + "/" + p.filename().string());
      return true;
    }
    return false;
  };
  if (!pick("config", AllowsReads, &f.config)) {
    f.config = R"({"defaults": {}, "overrides": {}})";
    f.sources.push_back("config: filled, the spec's minimal ConfigResponse");
  }
  auto listed = [](const char* field) {
    return [field](const json& j) {
      return j.contains(field) && j[field].is_array() && !j[field].empty() && NoPageToken(j);
    };
  };
  if (!pick("namespaces", listed("namespaces"), &f.namespaces)) {
    f.namespaces = R"({"namespaces": [["replay"]]})";
    f.sources.push_back("namespaces: filled");
  }
  if (!pick("tables", listed("identifiers"), &f.tables)) {
    f.tables = R"({"identifiers": [{"namespace": ["replay"], "name": "t"}]})";
    f.sources.push_back("tables: filled");
  }
  auto any = [](const json&) { return true; };
  std::string metadata;
  if (!pick("load", any, &f.load)) {
    std::filesystem::path from;
    auto own = OfKind(dir, "metadata");
    if (!own.empty()) {
      from = own.front();
      f.sources.push_back("load: " + f.name + "/" + from.filename().string() + ", wrapped");
    } else {
      from =
          dir.parent_path() / "apache-iceberg-java" / "metadata__TableMetadataV2ValidMinimal.json";
      f.sources.push_back(
          "load: filled, apache-iceberg-java's TableMetadataV2ValidMinimal, wrapped");
    }
    // The metadata's bytes go in unchanged; only the envelope is ours.
    f.load = R"({"metadata-location": "s3://replay/metadata/00001.metadata.json", "metadata": )" +
             Read(from) + "}";
  }
  const json first = json::parse(f.tables)["identifiers"][0];
  for (const auto& level : first["namespace"]) f.table += level.get<std::string>() + ".";
  f.table += first["name"].get<std::string>();
  return f;
}

class ReplayCatalog {
 public:
  explicit ReplayCatalog(ReplayFlavour flavour) : flavour_(std::move(flavour)) {}
  ~ReplayCatalog() { Stop(); }

  // Returns the base URL, "http://127.0.0.1:PORT/catalog" (a path, as real deployments have).
  std::string Start() {
    auto reply = [](httplib::Response& res, const std::string& body) {
      res.set_content(body, "application/json");
    };
    server_.Get("/catalog/v1/config",
                [this, reply](const httplib::Request&, httplib::Response& res) {
                  ++configs_;
                  reply(res, flavour_.config);
                });
    server_.Get(R"(/catalog/v1/(.*/)?namespaces)", [this, reply](const httplib::Request& req,
                                                                 httplib::Response& res) {
      ++lists_;
      reply(res, req.has_param("parent") ? R"({"namespaces": []})" : flavour_.namespaces);
    });
    server_.Get(R"(/catalog/v1/(.*/)?namespaces/[^/]+/tables)",
                [this, reply](const httplib::Request&, httplib::Response& res) {
                  ++lists_;
                  reply(res, flavour_.tables);
                });
    server_.Get(R"(/catalog/v1/(.*/)?namespaces/[^/]+/tables/[^/]+)",
                [this, reply](const httplib::Request&, httplib::Response& res) {
                  ++loads_;
                  reply(res, flavour_.load);
                });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    return "http://127.0.0.1:" + std::to_string(port_) + "/catalog";
  }

  void Stop() {
    if (!thread_.joinable()) return;
    server_.stop();
    thread_.join();
  }

  int configs() const { return configs_; }
  int lists() const { return lists_; }
  int loads() const { return loads_; }

 private:
  ReplayFlavour flavour_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> configs_{0}, lists_{0}, loads_{0};
};

}  // namespace icewarden::testing
