#include "examples/lab/region_faults.h"

#include <set>

#include "examples/lab/table_metadata.h"

namespace icewarden::lab {
namespace {

// Milliseconds or seconds: a day of milliseconds is more than any fault needs, and the
// fields are ints.
constexpr int64_t kMaxFaultValue = 86'400'000;

}  // namespace

json RegionFaults::ToJson() const {
  return {{"commit_latency_ms", commit_latency_ms},
          {"error_rate", error_rate},
          {"error_status", error_status},
          {"retry_after_s", retry_after_s},
          {"token_lifetime_s", token_lifetime_s},
          {"hang_ms", hang_ms},
          {"error_after_commit", error_after_commit}};
}

bool RegionFaults::Merge(const json& patch, std::string* error) {
  if (!patch.is_object()) {
    *error = "faults must be a JSON object";
    return false;
  }
  RegionFaults next = *this;
  for (const auto& [key, value] : patch.items()) {
    int* field = key == "commit_latency_ms"  ? &next.commit_latency_ms
                 : key == "error_status"     ? &next.error_status
                 : key == "retry_after_s"    ? &next.retry_after_s
                 : key == "token_lifetime_s" ? &next.token_lifetime_s
                 : key == "hang_ms"          ? &next.hang_ms
                                             : nullptr;
    if (key == "error_after_commit") {
      if (!value.is_boolean()) {
        *error = "error_after_commit must be true or false";
        return false;
      }
      next.error_after_commit = value.get<bool>();
    } else if (key == "error_rate") {
      if (!value.is_number() || value.get<double>() < 0.0 || value.get<double>() > 1.0) {
        *error = "error_rate must be a number from 0.0 to 1.0";
        return false;
      }
      next.error_rate = value.get<double>();
    } else if (field == nullptr) {
      *error = "unknown fault: " + key;
      return false;
    } else if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
               value.get<int64_t>() > kMaxFaultValue) {
      *error = key + " must be an integer from 0 to " + std::to_string(kMaxFaultValue);
      return false;
    } else {
      *field = value.get<int>();
    }
  }
  // 401 and 403: a catalog that is alive but refuses icewarden (rule 7 of DESIGN.md).
  static const std::set<int> statuses = {401, 403, 409, 500, 502, 503, 504};
  if (!statuses.count(next.error_status)) {
    *error = "error_status must be one of 401, 403, 409, 500, 502, 503, 504";
    return false;
  }
  *this = next;
  return true;
}

std::string TokenIssuer::Issue(int lifetime_s, int64_t now_ms) {
  std::string token = "lab-" + NewUuid();
  std::lock_guard lock(mutex_);
  // Forget long-expired tokens so a long-running lab does not grow without bound.
  for (auto it = expiry_ms_.begin(); it != expiry_ms_.end();) {
    it = it->second + 3600 * 1000 < now_ms ? expiry_ms_.erase(it) : std::next(it);
  }
  expiry_ms_[token] = now_ms + int64_t{lifetime_s} * 1000;
  return token;
}

bool TokenIssuer::Valid(const std::string& token, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  auto it = expiry_ms_.find(token);
  return it != expiry_ms_.end() && now_ms < it->second;
}

}  // namespace icewarden::lab
