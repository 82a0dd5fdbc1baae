// What a failover's journaled fence steps are evidence of, checked where the fencing
// confirmation is recorded (FailoverRunner::Apply), whoever claims it: the executor names a
// kind, and this decides from the journal whether the steps bear it out.
//
//   steps_and_quiet_window  a fence.catalog_quiet step succeeded (it saw no new commit on the
//                           old owner for its window)
//   gateway_closed          every fence step succeeded, and a gateway.fence step's answers
//                           show every gateway in the config confirmed the closure (closed, no
//                           write to the old owner in flight). A fence step that failed, a
//                           quiet window that saw a commit above all, says writers reach the
//                           old owner some other way, and then the closure proves nothing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "state/types.h"

namespace icewarden {

struct FenceEvidence {
  std::optional<std::string> evidence_json;  // set when the steps bear the kind out
  std::string why;                           // otherwise: what is missing, for the refusal
};

// `gateways`: the names of every gateway in the config. Kinds other than the two above are
// not fence-step evidence (no evidence_json, and a why that says so).
FenceEvidence FenceStepsEvidence(const Failover& failover, const std::vector<StepRecord>& journal,
                                 FencingKind kind, const std::vector<std::string>& gateways);

}  // namespace icewarden
