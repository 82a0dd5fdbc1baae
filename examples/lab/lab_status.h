// LabStatus: the result of a lab operation that can fail for a reason a person can act on
// (unknown region, port in use, bad JSON). Errors are values; nothing in the lab throws across
// a file's edge. Immutable; safe to copy between threads.
#pragma once

#include <string>
#include <utility>

namespace icewarden::lab {

class LabStatus {
 public:
  static LabStatus Ok() { return LabStatus(); }
  static LabStatus Error(std::string message) { return LabStatus(std::move(message)); }

  bool ok() const { return !failed_; }
  const std::string& message() const { return message_; }

 private:
  LabStatus() = default;
  explicit LabStatus(std::string message) : failed_(true), message_(std::move(message)) {}

  bool failed_ = false;
  std::string message_;
};

}  // namespace icewarden::lab
