#include "orchestrator/cli/text_table.h"

#include <algorithm>

namespace icewarden {
namespace {

// Columns line up on a terminal by characters, not bytes: "≤" is three bytes in UTF-8.
std::size_t DisplayWidth(const std::string& s) {
  return std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; });
}

}  // namespace

void TextTable::Print(std::ostream& out) const {
  std::vector<std::size_t> width;
  for (const auto& row : rows_)
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], DisplayWidth(row[i]));
    }
  for (const auto& row : rows_) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(width[i] - DisplayWidth(row[i]) + 2, ' ');
    }
    out << line << '\n';
  }
}

}  // namespace icewarden
