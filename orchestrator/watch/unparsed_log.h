// Rule 7 of DESIGN.md: an answer icewarden cannot parse is icewarden's problem to report,
// not evidence about the catalog (which answered). Each one is counted in the LiveView
// (icewarden_catalog_responses_unparsed_total); it is logged, bounded and redacted by the
// catalog client, only when it differs from the last one logged for its region and kind, so
// the same bad answer every probe interval does not flood the log.
// Thread-safety: none; the watch's thread calls it.
#pragma once

#include <map>
#include <string>
#include <utility>

namespace icewarden {

class LiveView;
struct UnparsedAnswer;

class UnparsedAnswerLog {
 public:
  explicit UnparsedAnswerLog(LiveView& live) : live_(live) {}

  void Record(const std::string& region, const UnparsedAnswer& answer);

 private:
  LiveView& live_;
  std::map<std::pair<std::string, std::string>, std::string> last_logged_;  // (region, kind)
};

}  // namespace icewarden
