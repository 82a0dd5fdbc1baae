#include "orchestrator/watch/unparsed_log.h"

#include <spdlog/spdlog.h>

#include "health/catalog_client.h"
#include "orchestrator/watch/live_view.h"

namespace icewarden {

void UnparsedAnswerLog::Record(const std::string& region, const UnparsedAnswer& a) {
  live_.CountUnparsed(region, a.kind);
  std::string& last = last_logged_[{region, a.kind}];
  const std::string seen = a.error + "\n" + a.excerpt;
  if (seen == last) return;
  last = seen;
  if (a.kind == "http") {
    spdlog::warn("{}: the catalog answered with bytes that are not HTTP: {}", region, a.error);
    return;
  }
  spdlog::warn(
      "{}: the catalog answered HTTP {} with a {} body icewarden cannot parse: {}; first {} "
      "bytes, credentials redacted: {}",
      region, a.http_status, a.kind, a.error, kUnparsedExcerptBytes, a.excerpt);
}

}  // namespace icewarden
