// llmwb(1) from the texts of --help (app/cli/man_page.h): every command of the table has its
// section, and each section holds exactly the words of that command's --help, in order, so
// the manual and --help cannot drift apart; roff escaping keeps text from being read as
// requests.
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/command_table.h"
#include "app/cli/man_page.h"
#include "support/mini_test.h"

using namespace llmwb::cli;
using namespace llmwb::mini_test;

namespace {

std::vector<std::string> man_test_words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

// The text a reader sees in a roff fragment: requests (.TP, .PP, .br) dropped, font changes and
// escapes undone.
std::string man_test_unroff(const std::string& roff) {
    std::istringstream in(roff);
    std::string out;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line[0] == '.')
            continue;
        for (size_t i = 0; i < line.size(); ++i) {
            if (line[i] != '\\') {
                out += line[i];
                continue;
            }
            const char next = i + 1 < line.size() ? line[i + 1] : '\0';
            if (next == 'f') {
                i += 2; // \fB, \fR, \fI
            } else if (next == '-') {
                out += '-';
                ++i;
            } else if (next == 'e') {
                out += '\\';
                ++i;
            } else if (next == '&') {
                ++i;
            } else {
                out += "<unknown escape>";
            }
        }
        out += '\n';
    }
    return out;
}

// The sections of a page: .SS title -> body (up to the next .SS or .SH).
std::vector<std::pair<std::string, std::string>> man_test_sections(const std::string& page) {
    std::vector<std::pair<std::string, std::string>> out;
    std::istringstream in(page);
    bool open = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(".SS ", 0) == 0) {
            out.emplace_back(man_test_unroff(line.substr(4)), "");
            open = true;
        } else if (line.rfind(".SH ", 0) == 0) {
            open = false;
        } else if (open) {
            out.back().second += line + "\n";
        }
    }
    return out;
}

std::set<std::string> man_test_options(const std::string& text) {
    std::set<std::string> out;
    for (size_t i = text.find("--"); i != std::string::npos; i = text.find("--", i + 2)) {
        size_t e = i + 2;
        while (e < text.size() &&
               (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '-'))
            ++e;
        if (e > i + 2)
            out.insert(text.substr(i, e - i));
    }
    return out;
}

} // namespace

MT_TEST(everyCommandHasItsHelpInThePage) {
    const std::string page = llmwb_man_page("9.8.7");
    MT_CHECK(page.find(".TH LLMWB 1 \"\" \"llmwb 9.8.7\"") != std::string::npos);
    const auto sections = man_test_sections(page);
    MT_REQUIRE(sections.size() == cli_commands().size());
    size_t i = 0;
    for (const CliCommand& c : cli_commands()) {
        std::string title = std::string("llmwb ") + c.name;
        if (*c.help_variant)
            title += std::string(" ") + c.help_variant;
        MT_CHECK_MSG(man_test_words(sections[i].first) == man_test_words("\"" + title + "\""),
                     "section %zu is '%s', expected '%s'", i, sections[i].first.c_str(),
                     title.c_str());
        const std::string help = capture_command_help(c);
        // A real help text: it names the command and its options.
        MT_CHECK_MSG(help.find(std::string("llmwb ") + c.name) != std::string::npos,
                     "%s --help does not name the command:\n%s", title.c_str(), help.c_str());
        MT_CHECK_MSG(help.find(" --") != std::string::npos, "%s --help names no option",
                     title.c_str());
        const std::string shown = man_test_unroff(sections[i].second);
        MT_CHECK_MSG(man_test_words(shown) == man_test_words(help),
                     "%s: the page's words differ from --help's\n--- page:\n%s\n--- help:\n%s",
                     title.c_str(), shown.c_str(), help.c_str());
        for (const std::string& opt : man_test_options(help))
            MT_CHECK_MSG(sections[i].second.find(roff_escape(opt)) != std::string::npos,
                         "%s: %s missing", title.c_str(), opt.c_str());
        ++i;
    }
}

MT_TEST(theUsageListsEveryCommandAndIsInThePage) {
    const std::string usage = kCliUsage;
    for (const CliCommand& c : cli_commands())
        MT_CHECK_MSG(usage.find(std::string("\n  ") + c.name + " ") != std::string::npos,
                     "usage does not list %s", c.name);
    const std::string page = llmwb_man_page("1");
    const size_t desc = page.find(".SH DESCRIPTION\n");
    const size_t cmds = page.find(".SH COMMANDS\n");
    MT_REQUIRE(desc != std::string::npos && cmds != std::string::npos && desc < cmds);
    const std::string shown = man_test_unroff(page.substr(desc, cmds - desc));
    const auto usage_words = man_test_words(usage);
    const auto shown_words = man_test_words(shown);
    // The description's own sentences come first; the usage text is its tail, word for word.
    MT_REQUIRE(shown_words.size() >= usage_words.size());
    MT_CHECK(std::vector<std::string>(shown_words.end() - usage_words.size(), shown_words.end()) ==
             usage_words);
}

MT_TEST(dispatchFindsCommandsNotVariants) {
    MT_REQUIRE(find_cli_command("generate") != nullptr);
    MT_CHECK(*find_cli_command("generate")->help_variant == '\0');
    MT_CHECK(find_cli_command("quantize") != nullptr);
    MT_CHECK(find_cli_command("--prompts") == nullptr);
    MT_CHECK(find_cli_command("no-such-command") == nullptr);
}

MT_TEST(roffEscapesRequestsMinusAndBackslash) {
    MT_COMPARE(roff_escape(".hidden"), std::string("\\&.hidden"));
    MT_COMPARE(roff_escape("'quoted"), std::string("\\&'quoted"));
    MT_COMPARE(roff_escape("a-b \\n"), std::string("a\\-b \\en"));
    const std::string roff = help_to_roff("llmwb x --a A\n"
                                          "  --alpha N     first line\n"
                                          "                continued\n"
                                          "  --beta-long-option-name\n"
                                          "                on the next line\n"
                                          ".starts with a dot\n");
    MT_COMPARE(roff,
               std::string(".nf\nllmwb x \\-\\-a A\n.fi\n"
                           ".TP\n\\fB\\-\\-alpha N\\fR\nfirst line\ncontinued\n"
                           ".TP\n\\fB\\-\\-beta\\-long\\-option\\-name\\fR\non the next line\n"
                           ".PP\n.nf\n\\&.starts with a dot\n.fi\n"));
    // No line of the fragment starts a request the text did not ask for.
    std::istringstream in(roff);
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] == '.')
            MT_CHECK_MSG(line == ".TP" || line == ".PP" || line == ".nf" || line == ".fi",
                         "line '%s'", line.c_str());
}

// The binary: `llmwb --version` names the project's version and `llmwb --help-man` prints the
// page built here (one run of the binary for each).
MT_TEST(theBinaryPrintsVersionAndThePage) {
    const auto run = [](const char* args) {
        std::string out;
        FILE* p =
            popen((std::string("'" LLMWB_CLI_PATH "' ") + args + " 2>/dev/null").c_str(), "r");
        MT_REQUIRE(p != nullptr);
        char buf[4096];
        for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
            out.append(buf, n);
        MT_CHECK_MSG(pclose(p) == 0, "llmwb %s failed", args);
        return out;
    };
    MT_COMPARE(run("--version"), std::string("llmwb " LLMWB_VERSION "\n"));
    MT_CHECK(run("--help-man") == llmwb_man_page(LLMWB_VERSION));
}

MINI_TEST_MAIN()
