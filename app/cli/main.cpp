// llmwb — the headless CLI over the LLM Workbench engine.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "app/cli/command_table.h"
#include "app/cli/man_page.h"

int main(int argc, char** argv) {
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
        !std::strcmp(argv[1], "help")) {
        std::fputs(llmwb::cli::kCliUsage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    using namespace llmwb::cli;
    if (!std::strcmp(argv[1], "--version")) {
        std::printf("llmwb %s\n", LLMWB_VERSION);
        return 0;
    }
    if (!std::strcmp(argv[1], "--help-man")) {
        std::fputs(llmwb_man_page(LLMWB_VERSION).c_str(), stdout);
        return 0;
    }
    const std::string command = argv[1];
    if (const CliCommand* c = find_cli_command(command))
        return c->run(std::vector<std::string>(argv + 2, argv + argc));
    std::fprintf(stderr, "llmwb: unknown command '%s'\n\n%s", command.c_str(), kCliUsage);
    return 2;
}
