// RegionFaults: what the admin API injects into one region's catalog, and TokenIssuer: the
// OAuth2 client-credentials tokens a region hands out. Plain values plus one small mutex-guarded
// class; both are safe to use from any thread as documented on each.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace icewarden::lab {

using nlohmann::json;

struct RegionFaults {
  int commit_latency_ms = 0;    // added before every commit (POST .../tables/{table})
  double error_rate = 0.0;      // share of catalog requests answered with error_status
  int error_status = 503;       // 401, 403, 409 (commits only), 500, 502, 503 or 504
  int retry_after_s = 0;        // Retry-After on injected 503s when > 0
  int token_lifetime_s = 3600;  // expires_in of OAuth2 tokens issued from now on
  int hang_ms = 0;              // delay before every response: a black-holed region
  // Injected 500/502/504 hit commits only, after the commit was applied: the answer is lost,
  // the effect is not (a commit whose fate the client must find out by reloading).
  bool error_after_commit = false;

  json ToJson() const;
  // Sets the fields present in `patch`, leaving the others; false with `error` on a bad value.
  bool Merge(const json& patch, std::string* error);
};

// Thread-safe.
class TokenIssuer {
 public:
  // A new random bearer token valid for `lifetime_s` seconds from `now_ms`.
  std::string Issue(int lifetime_s, int64_t now_ms);
  bool Valid(const std::string& token, int64_t now_ms);

 private:
  std::mutex mutex_;
  std::map<std::string, int64_t> expiry_ms_;
};

}  // namespace icewarden::lab
