// RegionCatalogs: how the gateway reaches each region's catalog. One io_context and thread per
// region runs a CatalogClient that reads the region's GET /v1/config with icewarden's own
// credentials for that region, to learn the region's prefix and base URI (a `uri` override
// moves it, as for Nessie). Engines' requests are sent with the engines' own headers,
// credentials included; nothing here adds icewarden's.
//
// Send runs the exchange on the calling thread (a gateway server thread) and returns when it
// ends: it takes one of the region's lanes (an io_context and a Beast transport with the
// region's TLS options and its own pool of kept-alive connections, health/beast_transport.h)
// and runs it itself, so a forward costs no hand-off between threads.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "health/http_transport.h"
#include "state/status.h"

namespace icewarden {

struct Config;

class RegionCatalogs {
 public:
  // Starts a thread per region in `regions` (names from config.regions). Reads no config yet.
  RegionCatalogs(const Config& config, const std::vector<std::string>& regions);
  ~RegionCatalogs();
  RegionCatalogs(const RegionCatalogs&) = delete;
  RegionCatalogs& operator=(const RegionCatalogs&) = delete;

  // Reads each region's GET /v1/config now (on failure it is read again on first use).
  // Returns one line per region that could not be read.
  std::vector<std::string> ReadConfigs();

  // Sends request.url, a path under the region's "/v1/{prefix}" ("/namespaces/a/tables/t?x")
  // to the region's catalog. kUnavailable when the region's config cannot be read (nothing
  // was sent) or the exchange failed (HttpTransport's errors, RequestMayHaveBeenDelivered).
  Result<HttpResponse> Send(const std::string& region, HttpRequest request,
                            std::chrono::milliseconds deadline);
  // Sends request.url, a path from the catalog's root ("/v1/config?warehouse=w"), to the
  // region's configured catalog_uri.
  Result<HttpResponse> SendToRoot(const std::string& region, HttpRequest request,
                                  std::chrono::milliseconds deadline);

  // The warehouse configured for the region (sent on GET /v1/config), empty when none.
  std::string Warehouse(const std::string& region) const;

 private:
  struct Region;
  Result<HttpResponse> Exchange(Region& region, HttpRequest request,
                                std::chrono::milliseconds deadline);
  Status EnsureConfig(Region& region);
  Result<Region*> Find(const std::string& region);
  std::map<std::string, std::unique_ptr<Region>> regions_;
};

}  // namespace icewarden
