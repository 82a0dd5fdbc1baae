// Shell completion for the icewarden command, generated from the command tree CLI11 parsed
// (`icewarden completion bash|zsh`), so that a new subcommand or option completes without
// anyone editing a script.
//
// Both scripts share one candidate function, `_icewarden_candidates PROGRAM WORD... CURRENT`,
// which prints what may follow, one a line: subcommands, options (when CURRENT starts with
// "-", or when the command has neither subcommands nor positionals), an option's choices
// (CLI11's IsMember), or the single word `__icewarden_files__` where a file or free value is
// expected (a positional, an option's value). The bash and
// zsh glue only hands it the words and turns its answer into COMPREPLY or compadd.
#pragma once

#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace icewarden {

// The script for `shell` ("bash" or "zsh") over `root` and every visible subcommand below
// it. Empty for another shell.
std::string CompletionScript(const CLI::App& root, std::string_view shell);

}  // namespace icewarden
