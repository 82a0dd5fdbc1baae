// Reading a runbook file (docs/runbooks.md) into the Runbook model, with every problem
// reported as FILE:LINE:COL: message.
//
// Parsing never stops at the first problem: the YAML is read to the end, then every step's
// params are checked by its action's Validate (errors mapped back to the param's line) and
// every template is checked. A runbook is returned only when there is no error at all;
// nothing half-parsed escapes.
// Thread-safety: pure functions; the registry is only read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "actions/action.h"
#include "runbooks/runbook.h"

namespace icewarden {

struct RunbookError {
  SourcePos pos{};  // line 0: the file as a whole (it could not be read)
  std::string message{};
  // "FILE:LINE:COL: message", or "FILE: message" for line 0.
  std::string ToString() const;
};

struct RunbookLoad {
  std::optional<Runbook> runbook{};    // set exactly when errors is empty
  std::vector<RunbookError> errors{};  // in file order
  bool ok() const { return errors.empty(); }
};

// Reads PATH (at most 1 MiB) and parses it; errors name PATH.
RunbookLoad LoadRunbook(const std::string& path, const ActionRegistry& registry);
// Parses YAML text; errors and Runbook::source_file name `path_for_errors`.
RunbookLoad ParseRunbook(const std::string& yaml_text, const std::string& path_for_errors,
                         const ActionRegistry& registry);

}  // namespace icewarden
