// The `gateways:` section: catalog gateways (orchestrator/gateway/), each an Iceberg REST
// endpoint that forwards reads to its region and commits to each table's owner.
//
//   gateways:
//     - name: gw-us-east-1
//       listen: 127.0.0.1:18281
//       region: us-east-1                        # reads go here first
//       forward_to: [us-east-1, eu-central-1]    # default: every region
//       prefix: lab                              # default: the region's warehouse
//       tls: {cert_file: gw.pem, key_file: gw.key, ca_file: ca.pem}   # optional (server_tls.cpp)
//
// Everything a gateway needs to reach a catalog (URI, warehouse, credentials, TLS) is the
// region's own entry under `regions:`; engines' credentials are passed through.

#include <algorithm>
#include <cctype>

#include "orchestrator/config/schema.h"

namespace icewarden {
namespace {

using namespace std::chrono_literals;

// A prefix is one path segment the gateway puts after /v1/: no '/', nothing that a URL would
// have to escape, so that what engines send back is what was configured.
bool IsPlainSegment(const std::string& s) {
  return !s.empty() && s != "." && s != ".." &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) {
           return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
         });
}

}  // namespace

std::vector<GatewayConfig> ReadGateways(const YamlValue& value,
                                        const std::vector<RegionConfig>& regions,
                                        const ConfigSources& sources) {
  std::vector<GatewayConfig> gateways;
  std::vector<std::string> names;
  std::vector<std::string> listens;
  auto items = value.List();
  if (!items) return gateways;
  for (const auto& item : *items) {
    auto map =
        item.Map({"name", "listen", "region", "forward_to", "prefix", "advertise", "tls", "threads",
                  "max_body_bytes", "queue_per_table", "forward_timeout", "store_poll"});
    if (!map) continue;
    GatewayConfig gateway;
    gateway.line = static_cast<int>(item.mark().line) + 1;
    gateway.column = static_cast<int>(item.mark().column) + 1;
    ReadNamed(*map, &gateway.name, &names, "gateway");
    if (auto v = map->Get("listen")) {
      if (auto s = v->String()) {
        CheckListen(*v, *s);
        // Two gateways on one fixed address cannot both start; port 0 is always free.
        if (s->size() < 2 || s->substr(s->size() - 2) != ":0") {
          if (std::find(listens.begin(), listens.end(), *s) != listens.end()) {
            v->Error("another gateway listens on '" + *s + "' already");
          }
          listens.push_back(*s);
        }
        gateway.listen = *s;
      }
    }
    if (auto v = map->Require("region")) {
      if (auto s = v->String()) {
        CheckRegionName(*v, *s, regions);
        gateway.region = *s;
      }
    }
    if (auto v = map->Get("forward_to")) {
      if (auto list = v->List()) {
        if (list->empty())
          v->Error("must name at least one region (leave it out for every region)");
        for (const auto& entry : *list) {
          auto s = entry.String();
          if (!s) continue;
          CheckRegionName(entry, *s, regions);
          if (std::find(gateway.forward_to.begin(), gateway.forward_to.end(), *s) !=
              gateway.forward_to.end()) {
            entry.Error("region '" + *s + "' is listed twice");
          }
          gateway.forward_to.push_back(*s);
        }
        if (!gateway.region.empty() && !list->empty() &&
            std::find(gateway.forward_to.begin(), gateway.forward_to.end(), gateway.region) ==
                gateway.forward_to.end()) {
          v->Error("must include the gateway's own region '" + gateway.region +
                   "', where its reads go");
        }
      }
    } else {
      for (const auto& r : regions) gateway.forward_to.push_back(r.name);
    }
    if (auto v = map->Get("prefix")) {
      if (auto s = v->String()) {
        if (!IsPlainSegment(*s)) {
          v->Error("must be one URL path segment of letters, digits, '-', '_', '.' or '~', got " +
                   v->Describe());
        }
        gateway.prefix = *s;
      }
    }
    if (gateway.prefix.empty()) {
      for (const auto& r : regions) {
        if (r.name == gateway.region && IsPlainSegment(r.warehouse)) gateway.prefix = r.warehouse;
      }
      if (gateway.prefix.empty()) gateway.prefix = "icewarden";
    }
    if (auto v = map->Get("advertise")) {
      if (auto s = v->String()) {
        if (!IsHttpUrl(*s)) v->Error("must be an http:// or https:// URL, got " + v->Describe());
        gateway.advertise = *s;
        while (!gateway.advertise.empty() && gateway.advertise.back() == '/') {
          gateway.advertise.pop_back();
        }
      }
    }
    if (auto v = map->Get("tls")) {
      gateway.tls = ReadServerTls(*v, sources);
      // Engines told http:// would speak plain HTTP to a TLS listener and fail on every call.
      if (gateway.tls.enabled() && gateway.advertise.rfind("http://", 0) == 0) {
        map->Get("advertise")
            ->Error(
                "the gateway serves TLS, so engines must be sent to an "
                "https:// URL; write advertise: https://...");
      }
    }
    ReadWithin(*map, "threads", &gateway.threads, 2, 1024);
    int body_bytes = 0;
    if (ReadWithin(*map, "max_body_bytes", &body_bytes, 1024, 256 << 20)) {
      gateway.max_body_bytes = static_cast<std::size_t>(body_bytes);
    }
    ReadWithin(*map, "queue_per_table", &gateway.queue_per_table, 1, 1024);
    ReadWithin(*map, "forward_timeout", &gateway.forward_timeout, 100ms, 10min);
    // Up to a minute: on etcd the watch reports changes and the poll only spaces the reads made
    // before the watch is up; on SQLite a long poll is slow to close a scope (docs/gateway.md).
    ReadWithin(*map, "store_poll", &gateway.store_poll, 5ms, 60s);
    gateways.push_back(std::move(gateway));
  }
  return gateways;
}

bool ListensOnEphemeralPort(const GatewayConfig& gateway) {
  const std::string& l = gateway.listen;
  return l.size() >= 2 && l.compare(l.size() - 2, 2, ":0") == 0;
}

void CheckGatewayClosedEvidence(const YamlValue& item, const std::vector<GatewayConfig>& gateways) {
  if (gateways.empty()) {
    item.Error(
        "gateway_closed is evidence only where catalog gateways stand in front of the catalogs: "
        "add them under gateways: (docs/gateway.md), or drop gateway_closed");
    return;
  }
  // The orchestrator must be able to ask every gateway, or no closure can ever be confirmed.
  for (const GatewayConfig& g : gateways) {
    if (ListensOnEphemeralPort(g) && g.advertise.empty()) {
      item.Error("gateway_closed needs every gateway to confirm its closure, and gateway '" +
                 g.name + "' (line " + std::to_string(g.line) +
                 ") listens on a port chosen at start without advertise:, so it cannot be asked; "
                 "give it a fixed port or advertise");
    }
  }
}

}  // namespace icewarden
