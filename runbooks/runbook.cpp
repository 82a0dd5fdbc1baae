#include "runbooks/runbook.h"

namespace icewarden {

std::string SourcePos::ToString() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

const char* OnFailureName(OnFailure f) {
  switch (f) {
    case OnFailure::kAbort:
      return "abort";
    case OnFailure::kContinue:
      return "continue";
    case OnFailure::kCompensate:
      return "compensate";
  }
  return "abort";
}

const char* RunbookSectionName(RunbookSection s) {
  switch (s) {
    case RunbookSection::kFence:
      return "fence";
    case RunbookSection::kPromote:
      return "promote";
    case RunbookSection::kVerify:
      return "verify";
    case RunbookSection::kCompensate:
      return "compensate";
  }
  return "fence";
}

const std::vector<RunbookStep>& Runbook::Section(RunbookSection s) const {
  switch (s) {
    case RunbookSection::kFence:
      return fence;
    case RunbookSection::kPromote:
      return promote;
    case RunbookSection::kVerify:
      return verify;
    case RunbookSection::kCompensate:
      return compensate;
  }
  return fence;
}

}  // namespace icewarden
