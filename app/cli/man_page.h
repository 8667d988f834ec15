// llmwb(1), generated from the same texts as --help: the usage text and each command's --help
// (captured from the command itself, see command_table.h), so the manual cannot drift from the
// program. `llmwb --help-man` prints it; the build gzips it into the package.
#pragma once

#include <string>
#include <string_view>

#include "app/cli/command_table.h"

namespace llmwb::cli {

// What `llmwb <command> [variant] --help` prints on stdout, run in this process (stdout is
// redirected to a temporary file for the call). Empty when it could not be captured.
std::string capture_command_help(const CliCommand& command);

// One line of text for roff: backslashes and minus signs escaped, a leading '.' or '\'' kept
// from being read as a request.
std::string roff_escape(std::string_view line);

// A --help text as man-page body: "  --opt ARG   description" rows (and their deeper-indented
// continuation lines) become .TP entries, other lines are kept as laid out (.nf ... .fi).
// Every word of the help text appears, in order, and nothing else.
std::string help_to_roff(std::string_view help);

// The whole page: .TH, NAME, SYNOPSIS, DESCRIPTION (the usage text), COMMANDS (one .SS per
// entry of cli_commands() with its --help), FILES, SEE ALSO.
std::string llmwb_man_page(std::string_view version);

} // namespace llmwb::cli
