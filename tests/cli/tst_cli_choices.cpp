// llmwb generate spending more compute on one prompt (issue 20): the --n / --best-of / --vote /
// --beam-width / --length-penalty / --early-stopping options and their errors, then the real
// binary over the demo model: --n N equals N single runs with seeds s..s+N-1, --vote counts
// every sample, --best-of keeps the best scores, --beam-width ranks its hypotheses,
// --thinking-budget is refused for a model without <think>; llmwb think spends n x the tokens.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/generate_choices.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::cli;
using namespace llmwb::mini_test;

namespace {

Result<ChoiceOptions> parse(std::vector<std::string> argv) {
    auto args = choice_option_names().parse(argv);
    if (!args)
        return args.error();
    return parse_choice_options(*args);
}

struct Run {
    int status = -1;
    std::string out;
};

// Runs `llmwb generate ARGS` with the demo model under `xdg`.
Run generate(const std::string& xdg, const std::string& args) {
    const std::string cmd =
        "XDG_DATA_HOME='" + xdg + "' '" LLMWB_CLI_PATH "' generate " + args + " 2>/dev/null";
    Run r;
    FILE* p = popen(cmd.c_str(), "r");
    MT_REQUIRE(p != nullptr);
    char buf[4096];
    size_t n = 0;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        r.out.append(buf, n);
    r.status = pclose(p);
    return r;
}

nlohmann::json json_of(const std::string& xdg, const std::string& args) {
    Run r = generate(xdg, args + " --json");
    MT_REQUIRE_MSG(r.status == 0, "llmwb generate %s: status %d", args.c_str(), r.status);
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    MT_REQUIRE_MSG(!j.is_discarded(), "not JSON: %s", r.out.c_str());
    return j;
}

const char* kPrompt = "--prompt 'Once upon a time there were three numbers'";

} // namespace

MT_TEST(options_parse) {
    auto o = parse({"--n", "4", "--vote", "boxed"});
    MT_REQUIRE(o.ok());
    MT_REQUIRE_COMPARE(o->n, 4);
    MT_REQUIRE(o->vote.has_value());
    MT_REQUIRE(o->active());
    MT_REQUIRE_COMPARE(o->sequences(), 4);
    auto b = parse({"--n", "2", "--best-of", "5", "--best-of-rank", "mean-logprob"});
    MT_REQUIRE(b.ok());
    MT_REQUIRE_COMPARE(b->sequences(), 5);
    MT_REQUIRE(b->rank == BestOfRank::MeanLogprob);
    auto beam =
        parse({"--beam-width", "3", "--length-penalty", "0.5", "--early-stopping", "never"});
    MT_REQUIRE(beam.ok());
    MT_REQUIRE_COMPARE(beam->beam_width, 3);
    MT_REQUIRE(beam->early_stopping == EarlyStopping::Never);
    MT_REQUIRE(!parse({}).value().active());
}

MT_TEST(option_errors) {
    auto expect = [](std::vector<std::string> argv, const char* part) {
        auto o = parse(argv);
        MT_REQUIRE(!o.ok());
        MT_REQUIRE_MSG(o.message().find(part) != std::string::npos, "%s", o.message().c_str());
    };
    expect({"--n", "0"}, "--n");
    expect({"--n", "4", "--best-of", "2"}, "--best-of 2 must be >= --n 4");
    expect({"--best-of-rank", "mean-logprob"}, "needs --best-of");
    expect({"--best-of", "3", "--best-of-rank", "median"}, "--best-of-rank");
    expect({"--vote", "(a)(b)"}, "exactly one capture group");
    expect({"--beam-width", "65"}, "--beam-width");
    expect({"--beam-width", "2", "--n", "2"}, "does not combine");
    expect({"--early-stopping", "true"}, "need --beam-width");
    expect({"--beam-width", "2", "--early-stopping", "maybe"}, "--early-stopping");
}

MT_TEST(end_to_end_over_the_demo_model) {
    TempDir xdg;
    const std::string base = std::string(kPrompt) + " --max-tokens 8 --ignore-eos";
    // --n 3 with seed 11: the samples of seeds 11, 12, 13.
    const auto group = json_of(xdg.path(), base + " --n 3 --seed 11 --temperature 0.9");
    MT_REQUIRE_COMPARE(group["choices"].size(), size_t(3));
    for (int i = 0; i < 3; ++i) {
        MT_SCOPE("choice %d", i);
        const auto single =
            json_of(xdg.path(), base + " --seed " + std::to_string(11 + i) + " --temperature 0.9");
        MT_REQUIRE(group["choices"][i]["ids"] == single["ids"]);
        MT_REQUIRE(group["choices"][i]["text"] == single["text"]);
        MT_REQUIRE(group["choices"][i]["seed"] == 11 + i);
    }
    MT_REQUIRE(group["kv_cache"]["peak_used_blocks"].get<int>() > 0);

    // --vote: every sample is an answer or "no answer".
    const auto voted =
        json_of(xdg.path(), base + " --n 4 --seed 3 --vote last-number --temperature 1.2");
    const auto& v = voted["vote"];
    int counted = v["no_answer"].get<int>();
    for (const auto& t : v["tally"])
        counted += t["votes"].get<int>();
    MT_REQUIRE_COMPARE(counted, 4);
    MT_REQUIRE_COMPARE(v["samples"].get<int>(), 4);
    MT_REQUIRE(v["pattern"] == "last-number");

    // --best-of 4 --n 2: two choices, best score first, no better sample left out.
    const auto best = json_of(xdg.path(), base + " --n 2 --best-of 4 --seed 5");
    MT_REQUIRE_COMPARE(best["choices"].size(), size_t(2));
    MT_REQUIRE(best["choices"][0]["score"].get<double>() >=
               best["choices"][1]["score"].get<double>());
    const auto all = json_of(xdg.path(), base + " --n 4 --seed 5 --logprobs 1");
    int better = 0;
    for (const auto& c : all["choices"])
        better +=
            c["cumulative_logprob"].get<double>() > best["choices"][1]["score"].get<double>() + 1e-6
                ? 1
                : 0;
    MT_REQUIRE(better <= 1); // only the best may beat the second best

    // --beam-width 3: three hypotheses, best first.
    const auto beams = json_of(xdg.path(), base + " --beam-width 3");
    MT_REQUIRE_COMPARE(beams["choices"].size(), size_t(3));
    MT_REQUIRE(beams["choices"][0]["score"].get<double>() >=
               beams["choices"][2]["score"].get<double>());
    MT_REQUIRE(beams["forks"].get<int>() > 0);

    // llmwb think: one rung per ladder step, every task counted, more samples spend more tokens.
    {
        const std::string cmd = "XDG_DATA_HOME='" + xdg.path() +
                                "' '" LLMWB_CLI_PATH
                                "' think --tasks arith:2 --count 3 --ladder n=1,4 "
                                "--max-tokens 6 --ignore-eos --json 2>/dev/null";
        FILE* p = popen(cmd.c_str(), "r");
        MT_REQUIRE(p != nullptr);
        std::string out;
        char buf[4096];
        size_t n = 0;
        while ((n = fread(buf, 1, sizeof buf, p)) > 0)
            out.append(buf, n);
        MT_REQUIRE_COMPARE(pclose(p), 0);
        const auto j = nlohmann::json::parse(out, nullptr, false);
        MT_REQUIRE_MSG(!j.is_discarded(), "not JSON: %s", out.c_str());
        MT_REQUIRE_COMPARE(j["rungs"].size(), size_t(2));
        MT_REQUIRE_COMPARE(j["rungs"][0]["tokens"].get<int>(), 3 * 6);
        MT_REQUIRE_COMPARE(j["rungs"][1]["tokens"].get<int>(), 3 * 4 * 6);
        MT_REQUIRE_COMPARE(j["rungs"][1]["n"].get<int>(), 4);
        MT_REQUIRE_COMPARE(j["rungs"][1]["tasks"].get<int>(), 3);
    }

    // The demo model has no <think> token: a thinking budget is refused, with the reason.
    Run t = generate(xdg.path(), base + " --thinking-budget 4");
    MT_REQUIRE(t.status != 0);
}

MINI_TEST_MAIN()
