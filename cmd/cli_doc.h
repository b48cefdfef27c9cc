// Man pages and shell completions generated from widen's command-line
// definitions (the CLI::App main() builds), so that --help, the man pages and
// the completions cannot disagree; and the hidden commands that emit them.
//
// Hidden commands (not in --help; for the build and the completion scripts):
//   widen __doc man DIR      writes DIR/widen.1 and DIR/widen-COMMAND.1 for
//                            every command (roff, man(7) macros)
//   widen __doc bash FILE    writes the bash completion script
//   widen __doc zsh FILE     writes the zsh completion script (#compdef widen)
//   widen __complete tables -m MAPPING
//                            prints the target table names (ns:table) of the
//                            mapping, one a line, reading the mapping file
//                            only (no source or target connection); prints
//                            nothing and exits 0 on any error, as a completion
//                            helper must
//
// Thread safety: the functions only read the App; call them before or after
// parsing, not during.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace widen {

/// The man page of `command` (a subcommand of `app`), or of widen itself
/// when `command` is null: NAME, SYNOPSIS, DESCRIPTION, OPTIONS (each
/// option's names, value type, description, whether it is required, its
/// allowed values or range and what it excludes), EXIT STATUS (the exit
/// codes of cmd/exit_codes.h), SEE ALSO.
std::string ManPage(const CLI::App& app, const CLI::App* command);

/// The file name of that page: "widen.1" or "widen-COMMAND.1".
std::string ManPageFileName(const CLI::App* command);

/// A bash completion script defining `_widen` and `complete -F _widen widen`:
/// commands, each command's options, allowed values (--format), file names
/// for the options that take a file, and target table names (from
/// `widen __complete tables` on the command line's -m mapping) for the
/// options and arguments that take one. Needs no bash-completion package.
std::string BashCompletion(const CLI::App& app);

/// The same for zsh, for a directory of $fpath (a `#compdef widen` file).
std::string ZshCompletion(const CLI::App& app);

/// True when args[1] names a hidden command (`__doc`, `__complete`).
bool IsHiddenCommand(const std::vector<std::string>& args);

/// Runs the hidden command args[1..] (see the header comment) on `app`;
/// returns the exit code: 0, or 2 with a message on stderr for a bad `__doc`
/// command line, 11 when a file could not be written; `__complete` always 0.
int RunHiddenCommand(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace widen
