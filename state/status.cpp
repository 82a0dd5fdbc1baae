#include "state/status.h"

namespace icewarden {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid_argument";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kConflict:
      return "conflict";
    case StatusCode::kFailedPrecondition:
      return "failed_precondition";
    case StatusCode::kPermissionDenied:
      return "permission_denied";
    case StatusCode::kUnauthenticated:
      return "unauthenticated";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kIOError:
      return "io_error";
    case StatusCode::kInternal:
      return "internal";
  }
  return "unknown";
}

const char* PeerReplyName(PeerReply reply) {
  switch (reply) {
    case PeerReply::kUnknown:
      return "unknown";
    case PeerReply::kSilent:
      return "silent";
    case PeerReply::kAnswered:
      return "answered";
    case PeerReply::kUnparsed:
      return "unparsed";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace icewarden
