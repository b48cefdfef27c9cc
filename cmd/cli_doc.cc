#include "cmd/cli_doc.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/exit_codes.h"
#include "cmd/version.h"
#include "mapping/mapping.h"

namespace widen {
namespace {

// What a completion offers for an option's value or a positional argument.
enum class ValueKind { kNone, kFile, kTable, kChoice };

// One visible option of a command, as the generators need it.
struct OptionInfo {
  std::vector<std::string> names;  // "-m", "--mapping"; empty for a positional
  std::string positional;          // the positional's name ("table"), else ""
  std::string type;                // "TEXT", "INT", ... ("" for a flag)
  std::string check;               // the validators' text ("INT in [1 - 64]", "{text,json}")
  std::string description;
  std::vector<std::string> choices;   // from an IsMember check
  std::vector<std::string> excludes;  // names of the options this one excludes
  bool flag = false;                  // takes no value
  bool required = false;
  bool repeatable = false;  // may be given more than once (a list)
  ValueKind kind = ValueKind::kNone;
};

// Options whose value is a file on this machine, by long name: these, and
// any --...-file.
bool IsFileOption(const std::string& lname) {
  const std::string_view suffix = "-file";
  return lname == "mapping" || lname == "rejects" || lname == "output" || lname == "policy" ||
         lname == "diagram" || lname == "html" ||
         (lname.size() > suffix.size() && lname.ends_with(suffix));
}

std::vector<std::string> SplitChoices(const std::string& check) {
  std::vector<std::string> out;
  const size_t open = check.find('{');
  const size_t close = check.find('}', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos) return out;
  std::string item;
  for (size_t i = open + 1; i < close; ++i) {
    if (check[i] == ',') {
      out.push_back(item);
      item.clear();
    } else {
      item += check[i];
    }
  }
  if (!item.empty()) out.push_back(item);
  return out;
}

OptionInfo Describe(const CLI::Option& o) {
  OptionInfo info;
  for (const std::string& s : o.get_snames()) info.names.push_back("-" + s);
  for (const std::string& l : o.get_lnames()) info.names.push_back("--" + l);
  if (info.names.empty()) info.positional = o.get_name(true);
  info.description = o.get_description();
  info.flag = o.get_expected_max() == 0;  // add_flag sets expected(0)
  info.required = o.get_required();
  info.repeatable = o.get_items_expected_max() > 1;
  if (!info.flag) {
    const std::string full = o.get_type_name();
    const size_t colon = full.find(':');
    info.type = full.substr(0, colon);
    if (colon != std::string::npos) info.check = full.substr(colon + 1);
    info.choices = SplitChoices(info.check);
  }
  for (const CLI::Option* x : o.get_excludes()) {
    const std::string name = x->get_name();
    if (!name.empty()) info.excludes.push_back(name);
  }
  const std::string lname = o.get_lnames().empty() ? "" : o.get_lnames().front();
  if (info.flag) {
    info.kind = ValueKind::kNone;
  } else if (!info.choices.empty()) {
    info.kind = ValueKind::kChoice;
  } else if (lname == "table" || info.positional == "table") {
    info.kind = ValueKind::kTable;
  } else if (IsFileOption(lname)) {
    info.kind = ValueKind::kFile;
  }
  return info;
}

// The visible options of `app` (hidden ones have no group), in definition
// order, positionals last, as --help lists them.
std::vector<OptionInfo> Options(const CLI::App& app) {
  std::vector<OptionInfo> named, positionals;
  const CLI::Option* help = app.get_help_ptr();
  for (const CLI::Option* o : app.get_options(
           [help](const CLI::Option* o) { return o != help && !o->get_group().empty(); })) {
    OptionInfo info = Describe(*o);
    (info.positional.empty() ? named : positionals).push_back(std::move(info));
  }
  named.insert(named.end(), positionals.begin(), positionals.end());
  return named;
}

std::vector<const CLI::App*> Commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* c) { return !c->get_group().empty(); });
}

// ---- roff -----------------------------------------------------------------

// Text for a roff text line: backslashes escaped, a leading control
// character neutralised.
std::string Roff(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

// An option name in bold, its hyphens as roff's minus signs.
std::string RoffName(const std::string& name) {
  std::string out = "\\fB";
  for (char c : name) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out + "\\fR";
}

std::string RoffVar(const std::string& var) { return "\\fI" + Roff(var) + "\\fR"; }

std::string Sentence(std::string text) {
  if (!text.empty() && text.back() != '.' && text.back() != ')') text += '.';
  if (!text.empty() && text.back() == ')') text += '.';
  return text;
}

// The value's name in the man pages: FILE, URL, NS:TABLE where the option
// says so, else CLI11's type (TEXT, INT, UINT) as --help shows it.
std::string Metavar(const OptionInfo& o) {
  if (o.kind == ValueKind::kTable) return "NS:TABLE";
  if (o.kind == ValueKind::kFile) return "FILE";
  for (const std::string& n : o.names) {
    if (n == "--source" || n == "--target" || n == "--into") return "URL";
  }
  if (!o.positional.empty()) {
    std::string up;
    for (char c : o.positional)
      up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return up;
  }
  return o.type;
}

// A line of text as a sentence: a capital first letter, a full stop; the
// name "widen" stays as it is written.
std::string Capitalized(std::string text) {
  if (!text.empty() && text.rfind("widen", 0) != 0) {
    text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  }
  return text;
}

// The environment variables widen reads (the README's "Source passwords",
// "Parallel jobs" and the mapping's ${VAR}s).
std::string EnvironmentSection() {
  return ".SH ENVIRONMENT\n"
         ".TP\n.B WIDEN_SOURCE_PASSWORD\n"
         "The source's password when its URL has none (then \\fBPGPASSWORD\\fR or "
         "\\fBMYSQL_PWD\\fR, as the engine's own clients read them); it keeps the password "
         "out of the process list.\n"
         ".TP\n\\fB${\\fR\\fINAME\\fR\\fB}\\fR, \\fB${\\fR\\fINAME\\fR\\fB:\\-\\fR"
         "\\fIdefault\\fR\\fB}\\fR\n"
         "A mapping's values may name environment variables (the examples take the source URL "
         "from \\fBWIDEN_SOURCE_URL\\fR); one that is not set and has no default is an error, "
         "naming it, when the value is used.\n"
         ".TP\n.B TMPDIR\n"
         "Where the temporary sort runs and spools go (else \\fI/tmp\\fR).\n"
         ".TP\n.B WIDEN_CORES\n"
         "The cores a run may use, instead of those the process may run on; "
         "\\fB\\-\\-jobs\\fR runs at most one job per two.\n";
}

std::string ExitStatusSection() {
  std::string out = ".SH EXIT STATUS\n";
  for (const ExitCodeDoc& e : ExitCodeDocs()) {
    out +=
        ".TP\n.B " + std::to_string(e.code) + "\n" + Roff(Capitalized(Sentence(e.meaning))) + "\n";
  }
  return out;
}

std::string Header(const std::string& page) {
  std::string upper;
  for (char c : page) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return ".\\\" Generated by widen __doc man from widen's command-line definitions; do not "
         "edit.\n"
         ".TH " +
         upper + " 1 \"\" \"widen " + WidenVersion() + "\" \"widen manual\"\n";
}

std::string CommandManPage(const CLI::App& app, const CLI::App& c) {
  const std::string name = "widen-" + c.get_name();
  const std::vector<OptionInfo> options = Options(c);
  std::string out = Header(name);
  out += ".SH NAME\n" + name + " \\- " + Roff(c.get_description()) + "\n";
  out += ".SH SYNOPSIS\n.B widen " + c.get_name() + "\n";
  for (const OptionInfo& o : options) {
    if (!o.positional.empty()) {
      out += (o.required ? RoffVar(Metavar(o)) : "[" + RoffVar(Metavar(o)) + "]") + "\n";
    } else if (o.required) {
      out += RoffName(o.names.front()) + " " + RoffVar(Metavar(o)) + "\n";
    }
  }
  out += "[" + RoffVar("OPTION") + "]...\n";
  out += ".SH DESCRIPTION\n" + Roff(Sentence(c.get_description())) + "\n";
  out +=
      ".PP\nThe README (/usr/share/doc/widen/README.md when installed from the package) tells "
      "more, with examples.\n";
  out += ".SH OPTIONS\n";
  for (const OptionInfo& o : options) {
    out += ".TP\n";
    if (!o.positional.empty()) {
      out += RoffVar(Metavar(o)) + "\n";
    } else {
      std::string names;
      for (const std::string& n : o.names) names += (names.empty() ? "" : ", ") + RoffName(n);
      if (!o.flag) names += " " + RoffVar(Metavar(o));
      out += names + "\n";
    }
    std::string text = Sentence(o.description);
    if (o.required) text += " Required.";
    if (!o.choices.empty()) {
      std::string list;
      for (const std::string& ch : o.choices) list += (list.empty() ? "" : ", ") + ch;
      text += " One of: " + list + ".";
    } else if (!o.check.empty()) {
      text += " Value: " + o.check + ".";
    }
    if (o.repeatable) text += " May be repeated.";
    if (!o.excludes.empty()) {
      std::string list;
      for (const std::string& x : o.excludes) list += (list.empty() ? "" : ", ") + x;
      text += " Not with " + list + ".";
    }
    out += Roff(text) + "\n";
  }
  out += ".TP\n" + RoffName("-h") + ", " + RoffName("--help") + "\nPrint the options and exit.\n";
  out += ExitStatusSection();
  out += EnvironmentSection();
  out += ".SH SEE ALSO\n\\fBwiden\\fR(1)";
  for (const CLI::App* other : Commands(app)) {
    if (other != &c) out += ",\n\\fBwiden\\-" + other->get_name() + "\\fR(1)";
  }
  return out + "\n";
}

std::string MainManPage(const CLI::App& app) {
  std::string out = Header("widen");
  out += ".SH NAME\nwiden \\- migrate relational databases into wide-column stores\n";
  out += ".SH SYNOPSIS\n.B widen\n" + RoffVar("COMMAND") + " [" + RoffVar("OPTION") +
         "]...\n.br\n.B widen\n" + RoffName("--help") + "\n.br\n.B widen\n" +
         RoffName("--version") + "\n";
  out += ".SH DESCRIPTION\n" + Roff(Sentence(app.get_description())) + "\n";
  out += ".PP\nEach command has its own page, and its own \\fB\\-\\-help\\fR.\n";
  out += ".SH COMMANDS\n";
  for (const CLI::App* c : Commands(app)) {
    out += ".TP\n\\fBwiden\\-" + c->get_name() + "\\fR(1)\n" +
           Roff(Sentence(c->get_description())) + "\n";
  }
  out += ".SH OPTIONS\n";
  out += ".TP\n" + RoffName("-h") + ", " + RoffName("--help") + "\nPrint the commands and exit.\n";
  out += ".TP\n" + RoffName("--version") +
         "\nPrint the version and the source commit widen was built from "
         "(\\(lqwiden 0.1.0 (commit 0123456789ab)\\(rq) and exit.\n";
  out += ExitStatusSection();
  out += EnvironmentSection();
  out +=
      ".SH FILES\n.TP\n.I /usr/share/doc/widen/\n"
      "The README, the docs and the examples (mappings with their schemas and data).\n"
      ".TP\n.I /usr/lib/systemd/system/widen\\-sync@.service\n.TQ\n"
      ".I /usr/lib/systemd/system/widen\\-sync@.timer\n"
      "A sync of \\fI/etc/widen/NAME.yaml\\fR every 5 minutes, as user widen, with "
      "\\fI/etc/widen/NAME.env\\fR as environment: "
      "\\fBsystemctl enable \\-\\-now widen\\-sync@NAME.timer\\fR (installed disabled).\n";
  out += ".SH SEE ALSO\n";
  bool first = true;
  for (const CLI::App* c : Commands(app)) {
    out += (first ? "" : ",\n") + std::string("\\fBwiden\\-") + c->get_name() + "\\fR(1)";
    first = false;
  }
  return out + "\n";
}

// ---- shells ---------------------------------------------------------------

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// `text` inside single quotes for a shell.
std::string ShellSingle(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// A short description for a completion menu: the first 80 characters, cut
// at a word.
std::string Short(const std::string& text) {
  if (text.size() <= 80) return text;
  size_t cut = text.rfind(' ', 77);
  if (cut == std::string::npos) cut = 77;
  return text.substr(0, cut) + "...";
}

// `text` for the inside of a zsh _arguments [...] or a _describe item:
// brackets, colons and backslashes escaped.
std::string ZshEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string ManPageFileName(const CLI::App* command) {
  return command == nullptr ? "widen.1" : "widen-" + command->get_name() + ".1";
}

std::string ManPage(const CLI::App& app, const CLI::App* command) {
  return command == nullptr ? MainManPage(app) : CommandManPage(app, *command);
}

std::string BashCompletion(const CLI::App& app) {
  std::vector<std::string> command_names;
  for (const CLI::App* c : Commands(app)) command_names.push_back(c->get_name());
  std::string cases;
  std::string value_cases;
  for (const CLI::App* c : Commands(app)) {
    std::vector<std::string> opts{"-h", "--help"}, takes, files, tables, positionals;
    for (const OptionInfo& o : Options(*c)) {
      if (!o.positional.empty()) {
        positionals.push_back(o.kind == ValueKind::kTable ? "table" : "-");
        continue;
      }
      opts.insert(opts.end(), o.names.begin(), o.names.end());
      if (o.flag) continue;
      takes.insert(takes.end(), o.names.begin(), o.names.end());
      if (o.kind == ValueKind::kFile) files.insert(files.end(), o.names.begin(), o.names.end());
      if (o.kind == ValueKind::kTable) tables.insert(tables.end(), o.names.begin(), o.names.end());
      if (o.kind == ValueKind::kChoice) {
        for (const std::string& n : o.names) {
          value_cases +=
              "    \"" + c->get_name() + " " + n + "\") choices=\"" + Join(o.choices) + "\" ;;\n";
        }
      }
    }
    cases += "    " + c->get_name() + ")\n      opts=\"" + Join(opts) + "\"\n      takes=\" " +
             Join(takes) + " \"\n      files=\" " + Join(files) + " \"\n      tables=\" " +
             Join(tables) + " \"\n      positionals=(" + Join(positionals) + ")\n      ;;\n";
  }
  std::string out = R"sh(# bash completion for widen.
# Generated by `widen __doc bash` from widen's command-line definitions; do not edit.
# Completes the commands, their options, --format values, file names, and
# target table names (ns:table) read from the mapping given with -m, through
# `widen __complete tables -m MAPPING` (the mapping file only, no connection).

# The table names of mapping $2 (starting with $3), through widen $1.
_widen_tables() {
  local mapping=${2/#\~/$HOME} names
  [[ -n $mapping ]] || return 0
  names=$("$1" __complete tables -m "$mapping" 2>/dev/null) || return 0
  COMPREPLY=($(compgen -W "$names" -- "$3"))
  # bash splits words at ':' (COMP_WORDBREAKS): it replaces only what
  # follows the last ':' of the word, so the replies drop what precedes it.
  if [[ $3 == *:* && ${COMP_WORDBREAKS-:} == *:* ]]; then
    local prefix=${3%"${3##*:}"}
    COMPREPLY=("${COMPREPLY[@]#"$prefix"}")
  fi
}

_widen() {
  # The words as typed, split at blanks only (so ns:table is one word):
  # from COMP_LINE up to the cursor, else from COMP_WORDS.
  local line
  if [[ -n ${COMP_LINE-} ]]; then
    line=${COMP_LINE:0:${COMP_POINT:-${#COMP_LINE}}}
  else
    line="${COMP_WORDS[*]:0:COMP_CWORD+1}"
  fi
  # Without -r, a backslash keeps a blank in its word (-m my\ map.yaml);
  # quotes around a word without blanks are dropped below.
  local -a words
  read -a words <<<"$line"
  [[ -z $line || $line == *[[:blank:]] ]] && words+=("")
  local cur=${words[${#words[@]}-1]} prev=
  ((${#words[@]} > 1)) && prev=${words[${#words[@]}-2]}
  local prog=${words[0]:-widen} cmd= mapping= i w cmd_at=0
  for ((i = 1; i < ${#words[@]} - 1; i++)); do
    w=${words[i]}
    case $w in
      -m | --mapping) mapping=${words[i + 1]} ;;
      --mapping=*) mapping=${w#--mapping=} ;;
      -m?*) mapping=${w#-m} ;;
    esac
    mapping=${mapping#[\"\']}
    mapping=${mapping%[\"\']}
    if [[ -z $cmd && $w != -* ]]; then
      cmd=$w
      cmd_at=$i
    fi
  done
  COMPREPLY=()
  if [[ -z $cmd ]]; then
    COMPREPLY=($(compgen -W "--help --version )sh" +
                    Join(command_names) + R"sh(" -- "$cur"))
    return 0
  fi
  local opts= takes= files= tables= choices=
  local -a positionals=()
  case $cmd in
)sh" + cases + R"sh(    *) return 0 ;;
  esac
  case "$cmd $prev" in
)sh" + value_cases + R"sh(  esac
  if [[ -n $choices ]]; then
    COMPREPLY=($(compgen -W "$choices" -- "$cur"))
    return 0
  fi
  if [[ -n $prev && $takes == *" $prev "* ]]; then
    if [[ $tables == *" $prev "* ]]; then
      _widen_tables "$prog" "$mapping" "$cur"
    elif [[ $files == *" $prev "* ]]; then
      # One reply a line (names with blanks stay whole); bash quotes them
      # and marks folders with a '/'.
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    return 0
  fi
  # Which positional argument this word is: the words after the command
  # that are neither options nor their values.
  local n=0
  for ((i = cmd_at + 1; i < ${#words[@]} - 1; i++)); do
    w=${words[i]}
    if [[ $w == -* ]]; then
      [[ $w != *=* && $takes == *" $w "* ]] && ((i++))
    else
      ((n++))
    fi
  done
  if [[ ${positionals[n]-} == table ]]; then
    _widen_tables "$prog" "$mapping" "$cur"
  elif ((n >= ${#positionals[@]})); then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  fi
  return 0
}
complete -o default -F _widen widen
)sh";
  return out;
}

std::string ZshCompletion(const CLI::App& app) {
  std::string commands;
  std::string cases;
  for (const CLI::App* c : Commands(app)) {
    commands +=
        "    " + ShellSingle(c->get_name() + ":" + ZshEscape(Short(c->get_description()))) + "\n";
    std::string specs;
    for (const OptionInfo& o : Options(*c)) {
      std::string action;
      switch (o.kind) {
        case ValueKind::kFile:
          action = "_files";
          break;
        case ValueKind::kTable:
          action = "_widen_tables";
          break;
        case ValueKind::kChoice:
          action = "(" + Join(o.choices) + ")";
          break;
        case ValueKind::kNone:
          action = " ";
          break;
      }
      if (!o.positional.empty()) {
        specs +=
            "        " +
            ShellSingle((o.required ? "" : ":") + std::string(":") + o.positional + ":" + action) +
            " \\\n";
        continue;
      }
      std::vector<std::string> exclusive = o.names;
      exclusive.insert(exclusive.end(), o.excludes.begin(), o.excludes.end());
      for (const std::string& n : o.names) {
        std::string spec = (o.repeatable ? "*" : "(" + Join(exclusive) + ")") + n + "[" +
                           ZshEscape(Short(o.description)) + "]";
        if (!o.flag) spec += ":" + ZshEscape(Metavar(o)) + ":" + action;
        specs += "        " + ShellSingle(spec) + " \\\n";
      }
    }
    specs += "        '(- *)'{-h,--help}'[Print this help message and exit]'\n";
    cases += "      " + c->get_name() + ")\n        _arguments -s \\\n" + specs + "        ;;\n";
  }
  return R"sh(#compdef widen
# zsh completion for widen.
# Generated by `widen __doc zsh` from widen's command-line definitions; do not edit.
# Target table names (ns:table) come from the mapping given with -m, through
# `widen __complete tables -m MAPPING` (the mapping file only, no connection).

# The table names of the mapping named on the command line.
_widen_tables() {
  local mapping i
  for ((i = 1; i < $#words; i++)); do
    case $words[i] in
      -m | --mapping) mapping=$words[i+1] ;;
      --mapping=*) mapping=${words[i]#--mapping=} ;;
    esac
  done
  [[ -n $mapping ]] || return 1
  local -a names
  names=(${(f)"$(widen __complete tables -m ${~mapping} 2>/dev/null)"})
  local expl
  _wanted tables expl 'table (ns:table)' compadd -a names
}

_widen() {
  local curcontext=$curcontext state line
  typeset -A opt_args
  local -a commands
  commands=(
)sh" + commands +
         R"sh(  )
  _arguments -C \
    '(- 1 *)'{-h,--help}'[Print this help message and exit]' \
    '(- 1 *)--version[Print the version and the source commit]' \
    '1:command:->command' \
    '*::arg:->args'
  case $state in
    command)
      _describe -t commands 'widen command' commands
      ;;
    args)
      curcontext=${curcontext%:*:*}:widen-$words[1]:
      case $words[1] in
)sh" + cases +
         R"sh(      esac
      ;;
  esac
}

_widen "$@"
)sh";
}

bool IsHiddenCommand(const std::vector<std::string>& args) {
  return args.size() > 1 && (args[1] == "__doc" || args[1] == "__complete");
}

namespace {

// Writes `text` to `path` whole: into a temporary file beside it, renamed
// onto it once written and closed; on any failure the temporary file is
// removed, `path` is left as it was, and stderr names the system's reason
// (the write's, or the close's: a full disk shows at either).
bool WriteFile(const std::string& path, const std::string& text) {
  const std::string temp = path + ".widen-tmp";
  FILE* f = std::fopen(temp.c_str(), "w");
  int err = errno;
  bool ok = f != nullptr;
  if (ok && std::fwrite(text.data(), 1, text.size(), f) != text.size()) {
    err = errno;
    ok = false;
  }
  if (f != nullptr && std::fclose(f) != 0 && ok) {
    err = errno;
    ok = false;
  }
  if (ok && std::rename(temp.c_str(), path.c_str()) != 0) {
    err = errno;
    ok = false;
  }
  if (!ok) {
    if (f != nullptr) std::remove(temp.c_str());
    std::fprintf(stderr, "widen: writing %s: %s\n", path.c_str(), std::strerror(err));
  }
  return ok;
}

int CompleteTables(const std::vector<std::string>& args) {
  std::string mapping;
  for (size_t i = 3; i < args.size(); ++i) {
    if ((args[i] == "-m" || args[i] == "--mapping") && i + 1 < args.size()) {
      mapping = args[++i];
    } else if (args[i].rfind("--mapping=", 0) == 0) {
      mapping = args[i].substr(10);
    }
  }
  if (mapping.empty()) return kExitOk;
  Result<Mapping> m = load_mapping(mapping);
  if (!m.ok()) return kExitOk;
  std::string out;
  for (const TableMapping& t : m->tables) out += t.name + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

}  // namespace

int RunHiddenCommand(const CLI::App& app, const std::vector<std::string>& args) {
  if (args[1] == "__complete") {
    if (args.size() > 2 && args[2] == "tables") return CompleteTables(args);
    return kExitOk;
  }
  const std::string what = args.size() > 2 ? args[2] : "";
  if (args.size() != 4 || (what != "man" && what != "bash" && what != "zsh")) {
    std::fprintf(stderr, "widen: usage: widen __doc man DIR | bash FILE | zsh FILE\n");
    return kExitInvalid;
  }
  const std::string& path = args[3];
  if (what == "bash") return WriteFile(path, BashCompletion(app)) ? kExitOk : kExitLocalIo;
  if (what == "zsh") return WriteFile(path, ZshCompletion(app)) ? kExitOk : kExitLocalIo;
  if (!WriteFile(path + "/" + ManPageFileName(nullptr), ManPage(app, nullptr))) {
    return kExitLocalIo;
  }
  for (const CLI::App* c : Commands(app)) {
    if (!WriteFile(path + "/" + ManPageFileName(c), ManPage(app, c))) return kExitLocalIo;
  }
  return kExitOk;
}

}  // namespace widen
