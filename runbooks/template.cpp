#include "runbooks/template.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "runbooks/yaml_reader.h"

namespace icewarden {
namespace {

// A secret is a token, not a document; anything larger is a wrong path.
constexpr size_t kMaxSecretFileBytes = 64 * 1024;
// One resolved string: a template repeated many times must not grow a param without end.
constexpr size_t kMaxResolvedBytes = 1 << 20;

const char kKnownTemplates[] =
    "${failover.id} ${from} ${to} ${scope} ${params.NAME} ${env.NAME} ${file:PATH}";

// A string cut into literal text and ${...} references.
struct Piece {
  bool is_template = false;
  std::string text;  // literal text, or the expression between "${" and "}"
};

// "$${" is a literal "${"; any other '$' is itself. Returns an error for an unterminated
// or empty template.
std::optional<std::string> SplitTemplates(const std::string& s, std::vector<Piece>* pieces) {
  std::string literal;
  size_t i = 0;
  while (i < s.size()) {
    if (s.compare(i, 3, "$${") == 0) {
      literal += "${";
      i += 3;
      continue;
    }
    if (s.compare(i, 2, "${") != 0) {
      literal += s[i++];
      continue;
    }
    size_t close = s.find('}', i + 2);
    if (close == std::string::npos) {
      return "unterminated template '" + s.substr(i, 20) +
             "' (missing '}'; write $${ for a literal ${)";
    }
    std::string expr = s.substr(i + 2, close - i - 2);
    if (expr.empty()) return "empty template ${}; known: " + std::string(kKnownTemplates);
    if (!literal.empty()) pieces->push_back({false, std::move(literal)});
    literal.clear();
    pieces->push_back({true, std::move(expr)});
    i = close + 1;
  }
  if (!literal.empty()) pieces->push_back({false, std::move(literal)});
  return std::nullopt;
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

enum class TemplateKind { kFailoverId, kFrom, kTo, kScope, kParam, kEnv, kFile, kUnknown };

struct Reference {
  TemplateKind kind = TemplateKind::kUnknown;
  std::string name;  // parameter name, env name or file path
};

Reference Classify(const std::string& expr) {
  if (expr == "failover.id") return {TemplateKind::kFailoverId, ""};
  if (expr == "from") return {TemplateKind::kFrom, ""};
  if (expr == "to") return {TemplateKind::kTo, ""};
  if (expr == "scope") return {TemplateKind::kScope, ""};
  if (expr.rfind("params.", 0) == 0) return {TemplateKind::kParam, expr.substr(7)};
  if (expr.rfind("env.", 0) == 0) return {TemplateKind::kEnv, expr.substr(4)};
  if (expr.rfind("file:", 0) == 0) return {TemplateKind::kFile, expr.substr(5)};
  return {TemplateKind::kUnknown, expr};
}

std::string UnknownTemplateMessage(const std::string& expr) {
  std::string message = "unknown template ${" + expr + "}; known: " + kKnownTemplates;
  // "${form}" -> ${from}; "${param.region}" -> ${params.region}.
  std::vector<std::string> candidates = {"failover.id", "from", "to", "scope"};
  size_t sep = expr.find_first_of(".:");
  if (sep != std::string::npos && sep + 1 < expr.size()) {
    std::string rest = expr.substr(sep + 1);
    candidates.push_back("params." + rest);
    candidates.push_back("env." + rest);
    candidates.push_back("file:" + rest);
  }
  if (auto close = ClosestMatch(expr, candidates)) message += "; did you mean ${" + *close + "}?";
  return message;
}

// The problem with one reference, or nullopt when it is fine.
std::optional<std::string> CheckReference(const std::string& expr,
                                          const std::vector<std::string>& declared) {
  Reference ref = Classify(expr);
  switch (ref.kind) {
    case TemplateKind::kUnknown:
      return UnknownTemplateMessage(expr);
    case TemplateKind::kParam: {
      if (std::find(declared.begin(), declared.end(), ref.name) != declared.end()) {
        return std::nullopt;
      }
      std::string message = "${" + expr + "} names no declared parameter; ";
      if (declared.empty()) {
        message += "the runbook declares no parameters";
      } else {
        std::string list;
        for (const auto& d : declared) list += (list.empty() ? "" : ", ") + d;
        message += "declared: " + list;
        if (auto close = ClosestMatch(ref.name, declared)) {
          message += "; did you mean ${params." + *close + "}?";
        }
      }
      return message;
    }
    case TemplateKind::kEnv:
      if (!IsIdentifier(ref.name)) {
        return "${" + expr + "} does not name an environment variable (letters, digits, '_')";
      }
      return std::nullopt;
    case TemplateKind::kFile:
      if (ref.name.empty()) return "${file:} names no file";
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::string ChildPath(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string ShownPath(const std::string& path) {
  return path.empty() ? "params" : "params." + path;
}

void FindProblems(const nlohmann::json& v, const std::string& path,
                  const std::vector<std::string>& declared, std::vector<TemplateProblem>* out) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      FindProblems(it.value(), ChildPath(path, it.key()), declared, out);
    }
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      FindProblems(v[i], path + "[" + std::to_string(i) + "]", declared, out);
    }
  } else if (v.is_string()) {
    std::vector<Piece> pieces;
    if (auto error = SplitTemplates(v.get<std::string>(), &pieces)) {
      out->push_back({path, *error});
      return;
    }
    for (const auto& piece : pieces) {
      if (!piece.is_template) continue;
      if (auto problem = CheckReference(piece.text, declared)) out->push_back({path, *problem});
    }
  }
}

std::string ScalarText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

class Resolver {
 public:
  explicit Resolver(const TemplateBindings& b) : b_(b) {}

  void Walk(const nlohmann::json& in, const std::string& path, nlohmann::json* value,
            nlohmann::json* masked) {
    if (in.is_object()) {
      *value = nlohmann::json::object();
      *masked = nlohmann::json::object();
      for (auto it = in.begin(); it != in.end(); ++it) {
        Walk(it.value(), ChildPath(path, it.key()), &(*value)[it.key()], &(*masked)[it.key()]);
      }
    } else if (in.is_array()) {
      *value = nlohmann::json::array();
      *masked = nlohmann::json::array();
      for (size_t i = 0; i < in.size(); ++i) {
        value->push_back(nullptr);
        masked->push_back(nullptr);
        Walk(in[i], path + "[" + std::to_string(i) + "]", &value->back(), &masked->back());
      }
    } else if (in.is_string()) {
      ResolveString(in.get<std::string>(), path, value, masked);
    } else {
      *value = in;
      *masked = in;
    }
  }

  const std::vector<std::string>& errors() const { return errors_; }

 private:
  void ResolveString(const std::string& s, const std::string& path, nlohmann::json* value,
                     nlohmann::json* masked) {
    std::vector<Piece> pieces;
    if (auto error = SplitTemplates(s, &pieces)) {
      errors_.push_back(ShownPath(path) + ": " + *error);
      return;
    }
    // "${params.port}" alone keeps the parameter's JSON type.
    if (pieces.size() == 1 && pieces[0].is_template) {
      Reference ref = Classify(pieces[0].text);
      if (ref.kind == TemplateKind::kParam) {
        auto it = b_.params.find(ref.name);
        if (it != b_.params.end() && !it->second.is_string()) {
          *value = it->second;
          *masked = it->second;
          return;
        }
      }
    }
    std::string plain, shown;
    for (const auto& piece : pieces) {
      if (!piece.is_template) {
        plain += piece.text;
        shown += piece.text;
        continue;
      }
      bool secret = false;
      auto text = Lookup(piece.text, path, &secret);
      if (!text) continue;
      plain += *text;
      shown += secret ? "***" : *text;
    }
    if (plain.size() > kMaxResolvedBytes) {
      errors_.push_back(ShownPath(path) + ": resolves to more than 1 MiB");
      return;
    }
    *value = plain;
    *masked = shown;
  }

  std::optional<std::string> Lookup(const std::string& expr, const std::string& path,
                                    bool* secret) {
    Reference ref = Classify(expr);
    auto fail = [&](const std::string& message) -> std::optional<std::string> {
      errors_.push_back(ShownPath(path) + ": " + message);
      return std::nullopt;
    };
    switch (ref.kind) {
      case TemplateKind::kFailoverId:
        return b_.failover_id;
      case TemplateKind::kFrom:
        return b_.from;
      case TemplateKind::kTo:
        return b_.to;
      case TemplateKind::kScope:
        return b_.scope;
      case TemplateKind::kParam: {
        auto it = b_.params.find(ref.name);
        if (it == b_.params.end()) {
          return fail("${" + expr + "}: parameter '" + ref.name +
                      "' was not given and has no default");
        }
        return ScalarText(it->second);
      }
      case TemplateKind::kEnv: {
        if (!IsIdentifier(ref.name)) return fail(*CheckReference(expr, {}));
        std::optional<std::string> v;
        if (b_.env) v = b_.env(ref.name);
        if (!v || v->empty()) return fail("${" + expr + "}: environment variable is not set");
        *secret = true;
        return v;
      }
      case TemplateKind::kFile: {
        if (ref.name.empty()) return fail("${file:} names no file");
        auto v = ReadSecretFile(ref.name);
        if (!v.ok()) return fail("${" + expr + "}: " + v.status().message());
        *secret = true;
        return v.value();
      }
      case TemplateKind::kUnknown:
        break;
    }
    return fail(UnknownTemplateMessage(expr));
  }

  // Each file is read once per resolution, however often its template appears.
  Result<std::string> ReadSecretFile(const std::string& name) {
    auto cached = files_.find(name);
    if (cached == files_.end()) cached = files_.emplace(name, ReadSecretFileNow(name)).first;
    return cached->second;
  }

  Result<std::string> ReadSecretFileNow(const std::string& name) const {
    std::filesystem::path p(name);
    if (p.is_relative() && !b_.base_dir.empty()) p = std::filesystem::path(b_.base_dir) / p;
    std::error_code ec;
    const auto type = std::filesystem::status(p, ec).type();
    if (type != std::filesystem::file_type::not_found && !ec &&
        type != std::filesystem::file_type::regular) {
      // A FIFO or a device would block the executor, or never end.
      return Status::InvalidArgument(p.string() + " is not a regular file");
    }
    std::ifstream in(p, std::ios::binary);
    if (!in) return Status::NotFound("cannot read " + p.string() + ": " + std::strerror(errno));
    std::string content(kMaxSecretFileBytes + 1, '\0');
    in.read(content.data(), static_cast<std::streamsize>(content.size()));
    content.resize(static_cast<size_t>(in.gcount()));
    if (content.size() > kMaxSecretFileBytes) {
      return Status::InvalidArgument(p.string() + " is larger than 64 KiB; a secret file holds " +
                                     "one token");
    }
    // Editors end files with a newline that is not part of the secret.
    while (!content.empty() && (content.back() == '\n' || content.back() == '\r')) {
      content.pop_back();
    }
    if (content.empty()) return Status::InvalidArgument(p.string() + " is empty");
    return content;
  }

  const TemplateBindings& b_;
  std::vector<std::string> errors_;
  std::map<std::string, Result<std::string>> files_;
};

}  // namespace

std::vector<TemplateProblem> FindTemplateProblems(
    const nlohmann::json& params, const std::vector<std::string>& declared_parameters) {
  std::vector<TemplateProblem> out;
  FindProblems(params, "", declared_parameters, &out);
  return out;
}

std::vector<std::string> CheckTemplates(const nlohmann::json& params,
                                        const std::vector<std::string>& declared_parameters) {
  std::vector<std::string> out;
  for (const auto& p : FindTemplateProblems(params, declared_parameters)) {
    out.push_back(ShownPath(p.path) + ": " + p.message);
  }
  return out;
}

std::optional<std::string> WholeParameterTemplate(const std::string& s) {
  std::vector<Piece> pieces;
  if (SplitTemplates(s, &pieces) || pieces.size() != 1 || !pieces[0].is_template) {
    return std::nullopt;
  }
  Reference ref = Classify(pieces[0].text);
  if (ref.kind != TemplateKind::kParam) return std::nullopt;
  return ref.name;
}

Result<ResolvedParams> ResolveTemplates(const nlohmann::json& params,
                                        const TemplateBindings& bindings) {
  Resolver resolver(bindings);
  ResolvedParams out;
  resolver.Walk(params, "", &out.value, &out.masked);
  if (!resolver.errors().empty()) {
    std::string message;
    for (const auto& e : resolver.errors()) message += (message.empty() ? "" : "; ") + e;
    return Status::InvalidArgument(message);
  }
  return out;
}

}  // namespace icewarden
