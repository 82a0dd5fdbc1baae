// Status and Result: expected failures as values.
//
// Network errors, disk errors, bad input and compare-and-set conflicts are returned, never
// thrown across a module edge. The message is written for the person who has to act on it.
// Thread-safety: plain values; copy freely.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace icewarden {

enum class StatusCode {
  kOk,
  kInvalidArgument,     // the caller's input is wrong; retrying the same input will not help
  kNotFound,            // the named thing does not exist
  kConflict,            // a compare-and-set lost: someone else changed it first
  kFailedPrecondition,  // the system is not in a state where this is allowed (illegal transition)
  kPermissionDenied,    // authenticated, but not allowed
  kUnauthenticated,     // no valid credentials
  kUnavailable,         // a dependency did not answer; retrying later may help
  kIOError,             // disk or database failure
  kInternal,            // a bug: an invariant did not hold
};

const char* StatusCodeName(StatusCode code);

// What the remote side of a failed exchange did, for the callers that must tell silence
// from an answer (DESIGN.md rule 7: only silence is evidence). Transports set it; code
// that rewraps a Status keeps it through WithMessage(). A Status that lost it reads as
// kUnknown, which is never taken for silence: losing the tag can block evidence, never
// invent it.
enum class PeerReply : unsigned char {
  kUnknown,   // not about a remote exchange, or not known: the peer may have answered
  kSilent,    // nothing came back: refused, timed out, unresolvable, reset before any byte
  kAnswered,  // something came back: any HTTP status, a partial or broken response
  kUnparsed,  // an answer icewarden could not parse: not HTTP, or a body unlike the spec's
};
const char* PeerReplyName(PeerReply reply);

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status Conflict(std::string m) { return {StatusCode::kConflict, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }
  static Status Unauthenticated(std::string m) {
    return {StatusCode::kUnauthenticated, std::move(m)};
  }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status IOError(std::string m) { return {StatusCode::kIOError, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  PeerReply reply() const { return reply_; }
  // The same code and reply with another message: how a layer adds context.
  Status WithMessage(std::string message) const {
    Status s(code_, std::move(message));
    s.reply_ = reply_;
    return s;
  }
  Status WithReply(PeerReply reply) const {
    Status s = *this;
    s.reply_ = reply;
    return s;
  }
  // "conflict: epoch of db.orders is 4, expected 3"
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  PeerReply reply_ = PeerReply::kUnknown;
};

// A value or the Status that explains why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace icewarden
