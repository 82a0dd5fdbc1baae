#include "examples/lab/table_ident.h"

namespace icewarden::lab {

std::vector<std::string> SplitNamespace(const std::string& joined, char separator) {
  std::vector<std::string> levels;
  if (joined.empty()) return levels;
  std::string::size_type start = 0;
  while (true) {
    auto end = joined.find(separator, start);
    levels.push_back(joined.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return levels;
}

std::string JoinNamespace(const std::vector<std::string>& levels, char separator) {
  std::string joined;
  for (const auto& level : levels) {
    if (!joined.empty()) joined += separator;
    joined += level;
  }
  return joined;
}

bool ParseDottedTable(const std::string& dotted, TableIdent* out) {
  auto dot = dotted.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == dotted.size()) return false;
  out->ns = SplitNamespace(dotted.substr(0, dot), '.');
  out->name = dotted.substr(dot + 1);
  return true;
}

}  // namespace icewarden::lab
