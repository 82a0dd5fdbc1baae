// TextTable: columns aligned for a terminal, as `kubectl get` prints them.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace icewarden {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> headers) : rows_{std::move(headers)} {}
  void AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::size_t size() const { return rows_.size() - 1; }
  void Print(std::ostream& out) const;

 private:
  std::vector<std::vector<std::string>> rows_;  // rows_[0] is the header
};

}  // namespace icewarden
