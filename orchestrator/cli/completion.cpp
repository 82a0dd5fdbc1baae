#include "orchestrator/cli/completion.h"

#include <CLI/CLI.hpp>
#include <sstream>
#include <vector>

#include "orchestrator/build_info.h"

namespace icewarden {
namespace {

// One command of the tree: its path below the program ("" for the program, "failover approve")
// and the words that may follow it.
struct CommandWords {
  std::string path;
  std::vector<std::string> subcommands;
  std::vector<std::string> options;        // every spelling: "-o", "--output"
  std::vector<std::string> value_options;  // those that take a value
  std::vector<std::string> positionals;    // names of positional arguments ("file", "id")
  // For options checked by CLI::IsMember: the option's spellings and its choices.
  std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> choices;
};

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out.append(out.empty() ? "" : " ").append(w);
  return out;
}

// CLI11 spells an IsMember check into the option's type name as ":{a,b,c}"; the choices are
// read back from there, where `--help` shows them.
std::vector<std::string> Choices(const CLI::Option& opt) {
  const std::string type = opt.get_type_name();
  const auto open = type.find(":{");
  if (open == std::string::npos) return {};
  const auto close = type.find('}', open);
  if (close == std::string::npos) return {};
  std::vector<std::string> out;
  std::stringstream list(type.substr(open + 2, close - open - 2));
  for (std::string item; std::getline(list, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

void Collect(const CLI::App& app, const std::string& path, std::vector<CommandWords>* out) {
  CommandWords words;
  words.path = path;
  // Subcommands without a group are hidden from help; option groups have no name.
  auto subs = app.get_subcommands(
      [](const CLI::App* s) { return !s->get_name().empty() && !s->get_group().empty(); });
  for (const CLI::App* sub : subs) words.subcommands.push_back(sub->get_name());
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_lnames().empty() && opt->get_snames().empty()) {
      if (opt->get_positional()) words.positionals.push_back(opt->get_name());
      continue;
    }
    if (opt->get_group().empty()) continue;
    std::vector<std::string> spellings;
    for (const std::string& s : opt->get_snames()) spellings.push_back("-" + s);
    for (const std::string& l : opt->get_lnames()) spellings.push_back("--" + l);
    words.options.insert(words.options.end(), spellings.begin(), spellings.end());
    if (opt->get_type_size_max() > 0) {
      words.value_options.insert(words.value_options.end(), spellings.begin(), spellings.end());
      if (auto c = Choices(*opt); !c.empty()) words.choices.emplace_back(spellings, c);
    }
  }
  out->push_back(std::move(words));
  for (const CLI::App* sub : subs)
    Collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
}

// `case "$1" in "PATH") echo "WORDS" ;; ... esac`, one function per kind of word.
void CaseFunction(std::ostream& os, const std::string& name, const std::vector<CommandWords>& tree,
                  std::vector<std::string> CommandWords::*field) {
  os << name << "() {\n  case \"$1\" in\n";
  for (const CommandWords& c : tree) {
    const auto& words = c.*field;
    if (!words.empty()) os << "    \"" << c.path << "\") echo \"" << Join(words) << "\" ;;\n";
  }
  os << "  esac\n}\n\n";
}

void ChoicesFunction(std::ostream& os, const std::vector<CommandWords>& tree) {
  os << "_icewarden_choices() {\n  case \"$1 $2\" in\n";
  for (const CommandWords& c : tree) {
    for (const auto& [spellings, values] : c.choices) {
      std::string patterns;
      for (const std::string& s : spellings)
        patterns.append(patterns.empty() ? "\"" : "|\"")
            .append(c.path)
            .append(" ")
            .append(s)
            .append("\"");
      os << "    " << patterns << ") echo \"" << Join(values) << "\" ;;\n";
    }
  }
  os << "  esac\n}\n\n";
}

// The walk over the words typed so far, in the common subset of bash and zsh (zsh splits
// words like sh inside it).
constexpr std::string_view kCandidates = R"sh(_icewarden_candidates() {
  [ -n "${ZSH_VERSION:-}" ] && setopt local_options sh_word_split
  local cmdpath="" expect="" w c cur IFS=$' \t\n'
  shift
  while [ $# -gt 1 ]; do
    w=$1
    shift
    if [ -n "$expect" ]; then expect=""; continue; fi
    case "$w" in
      --*=*) ;;
      -*) case " $(_icewarden_value_options "$cmdpath") " in *" $w "*) expect=$w ;; esac ;;
      *) case " $(_icewarden_subcommands "$cmdpath") " in
           *" $w "*) cmdpath="${cmdpath:+$cmdpath }$w" ;;
         esac ;;
    esac
  done
  cur=${1:-}
  if [ -n "$expect" ]; then
    c=$(_icewarden_choices "$cmdpath" "$expect")
    if [ -z "$c" ]; then echo __icewarden_files__; return; fi
  else
    case "$cur" in
      -*) c=$(_icewarden_options "$cmdpath") ;;
      *) c=$(_icewarden_subcommands "$cmdpath")
         if [ -z "$c" ] && [ -n "$(_icewarden_positionals "$cmdpath")" ]; then
           echo __icewarden_files__
           return
         fi
         [ -z "$c" ] && c=$(_icewarden_options "$cmdpath") ;;
    esac
  fi
  for w in $c; do
    case "$w" in "$cur"*) echo "$w" ;; esac
  done
}
)sh";

constexpr std::string_view kBashGlue = R"sh(
_icewarden() {
  local IFS=$'\n'
  COMPREPLY=($(_icewarden_candidates "${COMP_WORDS[@]:0:COMP_CWORD+1}"))
  if [ "${COMPREPLY[0]:-}" = __icewarden_files__ ]; then
    COMPREPLY=($(compgen -f -- "${COMP_WORDS[COMP_CWORD]}"))
  fi
}
complete -o default -F _icewarden icewarden
)sh";

constexpr std::string_view kZshGlue = R"sh(
_icewarden() {
  local -a found
  found=("${(@f)$(_icewarden_candidates "${(@)words[1,CURRENT]}")}")
  if [[ "${found[1]:-}" == __icewarden_files__ ]]; then
    _files
  elif (( ${#found[@]} )) && [[ -n "${found[1]}" ]]; then
    compadd -- "${found[@]}"
  fi
}

# Autoloaded from fpath (as the file _icewarden) this runs the completion; sourced, it registers.
if [[ "${funcstack[1]:-}" == _icewarden ]]; then
  _icewarden "$@"
elif (( $+functions[compdef] )); then
  compdef _icewarden icewarden
fi
)sh";

}  // namespace

std::string CompletionScript(const CLI::App& root, std::string_view shell) {
  if (shell != "bash" && shell != "zsh") return "";
  std::vector<CommandWords> tree;
  Collect(root, "", &tree);
  std::ostringstream os;
  if (shell == "zsh") os << "#compdef icewarden\n";
  os << "# " << shell << " completion for icewarden " << BuildVersion()
     << ", generated by `icewarden completion " << shell << "`.\n";
  if (shell == "bash")
    os << "# Install: icewarden completion bash > /etc/bash_completion.d/icewarden, or\n"
          "# `source <(icewarden completion bash)` in ~/.bashrc.\n\n";
  else
    os << "# Install: icewarden completion zsh > \"${fpath[1]}/_icewarden\" (then compinit), or\n"
          "# `source <(icewarden completion zsh)` in ~/.zshrc after compinit.\n\n";
  CaseFunction(os, "_icewarden_subcommands", tree, &CommandWords::subcommands);
  CaseFunction(os, "_icewarden_options", tree, &CommandWords::options);
  CaseFunction(os, "_icewarden_value_options", tree, &CommandWords::value_options);
  CaseFunction(os, "_icewarden_positionals", tree, &CommandWords::positionals);
  ChoicesFunction(os, tree);
  os << kCandidates << (shell == "bash" ? kBashGlue : kZshGlue);
  return os.str();
}

}  // namespace icewarden
