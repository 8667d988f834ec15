// The llmwb commands in one table: main() dispatches through it, the usage text lists them and
// the manual page (man_page.h) prints each one's --help from it, so none of them can drift.
#pragma once

#include <span>
#include <string>

#include "app/cli/commands.h"

namespace llmwb::cli {

struct CliCommand {
    const char* name;
    int (*run)(const Args& args);
    // Arguments before --help that select a variant with its own help (generate --prompts);
    // empty for the command itself.
    const char* help_variant = "";
};

// Every command, in the order of the usage text. Variants (help_variant non-empty) follow their
// command and are skipped by the dispatcher.
std::span<const CliCommand> cli_commands();
// The command run by name (not a variant), nullptr when there is none.
const CliCommand* find_cli_command(const std::string& name);

// `llmwb --help`: the commands and a line on each.
extern const char* kCliUsage;

} // namespace llmwb::cli
