// TableIdent: a table's namespace levels and name, and the two ways the lab spells them: the
// storage key (levels joined by the 0x1F unit separator, as the REST spec joins them in URLs)
// and the dotted name people read ("sales.archive.orders_2024"). Plain value; thread-compatible.
#pragma once

#include <string>
#include <vector>

namespace icewarden::lab {

// The REST spec's namespace separator, url-encoded as %1F.
inline constexpr char kNamespaceSeparator = '\x1f';

std::vector<std::string> SplitNamespace(const std::string& joined, char separator);
std::string JoinNamespace(const std::vector<std::string>& levels, char separator);

struct TableIdent {
  std::vector<std::string> ns;
  std::string name;

  std::string NamespaceKey() const { return JoinNamespace(ns, kNamespaceSeparator); }
  std::string Dotted() const { return JoinNamespace(ns, '.') + "." + name; }
  bool operator<(const TableIdent& other) const {
    return NamespaceKey() != other.NamespaceKey() ? NamespaceKey() < other.NamespaceKey()
                                                  : name < other.name;
  }
  bool operator==(const TableIdent& other) const = default;
};

// "sales.archive.orders_2024" -> {{"sales","archive"},"orders_2024"}; the last dot splits the
// name from the namespace. Returns false when there is no dot.
bool ParseDottedTable(const std::string& dotted, TableIdent* out);

}  // namespace icewarden::lab
