#include "app/cli/generate_choices.h"

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_output.h"
#include "app/cli/commands.h"

namespace llmwb::cli {

const char* kChoiceOptionsHelp =
    "test-time compute:\n"
    "  --n N                     N samples of the prompt, prefilled once and forked (seeds\n"
    "                            s..s+N-1 with --seed s)\n"
    "  --best-of M               sample M (>= N) and keep the N with the best score\n"
    "  --best-of-rank R          logprob (sum, default) | mean-logprob (sum / tokens)\n"
    "  --vote PATTERN            majority vote over the samples' answers: last-number, boxed\n"
    "                            (\\boxed{...}) or a regex with one capture group\n"
    "  --beam-width W            beam search (1..64; scores are raw logprobs): prints the W\n"
    "                            best hypotheses\n"
    "  --length-penalty F        beam score = sum logprobs / length^F (default 1)\n"
    "  --early-stopping E        true | false (default) | never, as Hugging Face's\n";

const OptionNames& choice_option_names() {
    static const OptionNames n{
        {"n", "best-of", "best-of-rank", "vote", "beam-width", "length-penalty", "early-stopping"},
        {}};
    return n;
}

Result<ChoiceOptions> parse_choice_options(const CliArgs& a) {
    ChoiceOptions o;
    auto n = a.get_int("n", 1, 256);
    if (!n)
        return n.error(); // names the option
    o.n = static_cast<int32_t>(n->value_or(1));
    auto best_of = a.get_int("best-of", 1, 256);
    if (!best_of)
        return best_of.error(); // names the option
    if (*best_of) {
        o.best_of = static_cast<int32_t>(**best_of);
        if (o.best_of < o.n)
            return make_error("--best-of " + std::to_string(o.best_of) + " must be >= --n " +
                              std::to_string(o.n));
    }
    if (auto r = a.get("best-of-rank")) {
        if (*r == "logprob")
            o.rank = BestOfRank::CumulativeLogprob;
        else if (*r == "mean-logprob")
            o.rank = BestOfRank::MeanLogprob;
        else
            return make_error("--best-of-rank: expected logprob or mean-logprob, got \"" + *r +
                              "\"");
        if (!o.best_of)
            return make_error("--best-of-rank needs --best-of");
    }
    if (auto v = a.get("vote")) {
        auto p = AnswerPattern::parse(*v);
        if (!p)
            return make_error("--vote: " + p.message());
        o.vote = std::move(p.value());
    }
    auto width = a.get_int("beam-width", 1, 64);
    if (!width)
        return width.error(); // names the option
    o.beam_width = static_cast<int32_t>(width->value_or(0));
    auto lp = a.get_double("length-penalty", -100, 100);
    if (!lp)
        return lp.error(); // names the option
    if (auto es = a.get("early-stopping")) {
        auto parsed = parse_early_stopping(*es);
        if (!parsed)
            return make_error("--early-stopping: " + parsed.message());
        o.early_stopping = *parsed;
    }
    if (o.beam_width == 0 && (lp->has_value() || a.has("early-stopping")))
        return make_error("--length-penalty and --early-stopping need --beam-width");
    o.length_penalty = static_cast<float>(lp->value_or(1.0));
    if (o.beam_width > 0 && (o.n > 1 || o.best_of > 0 || o.vote))
        return make_error("--beam-width does not combine with --n, --best-of or --vote");
    return o;
}

namespace {

std::string answer_text(const std::optional<std::string>& a) {
    return a ? *a : "(no answer)";
}

} // namespace

static int run_beam_search(const char* cmd, Engine& engine, std::vector<int32_t> prompt,
                           const SamplingParams& params, const ChoiceOptions& opt, bool json) {
    BeamSearchParams bp;
    bp.width = opt.beam_width;
    bp.length_penalty = opt.length_penalty;
    bp.early_stopping = opt.early_stopping;
    bp.params = params;
    const auto prompt_tokens = static_cast<int64_t>(prompt.size());
    const auto t0 = EngineClock::now();
    auto r = beam_search(engine, std::move(prompt), bp);
    if (!r)
        return fail(cmd, r.message());
    const double total_ms =
        std::chrono::duration<double, std::milli>(EngineClock::now() - t0).count();
    if (json) {
        nlohmann::json j;
        nlohmann::json arr = nlohmann::json::array();
        for (size_t i = 0; i < r->hypotheses.size(); ++i) {
            const BeamHypothesis& h = r->hypotheses[i];
            arr.push_back({{"index", i},
                           {"ids", h.ids},
                           {"text", h.text},
                           {"finish_reason", finish_reason_name(h.finish)},
                           {"cumulative_logprob", h.sum_logprob},
                           {"score", h.score}});
        }
        j["choices"] = std::move(arr);
        j["beam_width"] = opt.beam_width;
        j["length_penalty"] = opt.length_penalty;
        j["early_stopping"] = early_stopping_name(opt.early_stopping);
        j["steps"] = r->steps;
        j["forks"] = r->forks;
        j["pruned"] = r->aborted;
        j["prompt_tokens"] = prompt_tokens;
        j["total_ms"] = total_ms;
        j["kv_cache"] = {{"peak_used_blocks", r->peak_used_blocks},
                         {"cow_copies", engine.kv_manager().cow_copies()},
                         {"block_size", engine.config().block_size}};
        std::cout << dump_json(j) << "\n";
        return 0;
    }
    for (size_t i = 0; i < r->hypotheses.size(); ++i) {
        const BeamHypothesis& h = r->hypotheses[i];
        char head[160];
        std::snprintf(head, sizeof head,
                      "--- beam %zu/%zu, score %.4f, logprob %.4f, %zu tokens, finish: %s ---",
                      i + 1, r->hypotheses.size(), h.score, h.sum_logprob, h.ids.size(),
                      finish_reason_name(h.finish));
        std::cout << head << "\n" << h.text << "\n";
    }
    std::cout << std::flush;
    std::fprintf(stderr,
                 "[beam search: width %d, %d steps, %lld forks, %lld pruned, %.1f ms; KV peak %lld "
                 "blocks]\n",
                 opt.beam_width, r->steps, static_cast<long long>(r->forks),
                 static_cast<long long>(r->aborted), total_ms,
                 static_cast<long long>(r->peak_used_blocks));
    return 0;
}

int run_choices(const char* cmd, Engine& engine, std::vector<int32_t> prompt,
                const SamplingParams& params, const ChoiceOptions& opt, bool json) {
    if (opt.beam_width > 0)
        return run_beam_search(cmd, engine, std::move(prompt), params, opt, json);
    const int32_t total = opt.sequences();
    std::vector<SamplingParams> choices = parallel_sampling_choices(params, total);
    if (opt.best_of > 0) // ranking needs every token's logprob
        for (SamplingParams& c : choices)
            c.logprobs = std::max(c.logprobs, 1);
    const auto prompt_tokens = static_cast<int64_t>(prompt.size());
    const auto t0 = EngineClock::now();
    auto results = generate_choices(engine, std::move(prompt), choices);
    if (!results)
        return fail(cmd, results.message());
    const double total_ms =
        std::chrono::duration<double, std::milli>(EngineClock::now() - t0).count();
    // The samples shown: all, or the n best of best_of.
    std::vector<size_t> shown;
    if (opt.best_of > 0) {
        shown = best_of_order(*results, static_cast<size_t>(opt.n), opt.rank);
    } else {
        for (size_t i = 0; i < results->size(); ++i)
            shown.push_back(i);
    }
    std::optional<VoteResult> vote;
    if (opt.vote) {
        std::vector<std::string> texts;
        for (size_t i : shown)
            texts.push_back((*results)[i].text);
        vote = majority_vote(*opt.vote, texts);
    }
    int64_t completion_tokens = 0;
    for (const GenerationResult& r : *results)
        completion_tokens += static_cast<int64_t>(r.ids.size());
    const int64_t peak_blocks = engine.kv_accounting().peak_used_blocks;
    const int64_t cow = engine.kv_manager().cow_copies();
    if (json) {
        nlohmann::json j;
        nlohmann::json arr = nlohmann::json::array();
        for (size_t k = 0; k < shown.size(); ++k) {
            const size_t i = shown[k];
            const GenerationResult& r = (*results)[i];
            nlohmann::json c;
            c["index"] = k;
            c["sample"] = i;
            if (choices[i].seed)
                c["seed"] = *choices[i].seed;
            c["ids"] = r.ids;
            c["text"] = r.text;
            c["finish_reason"] = finish_reason_name(r.finish);
            if (!r.stop_matched.empty())
                c["stop"] = r.stop_matched;
            if (opt.best_of > 0 || params.logprobs > 0)
                c["cumulative_logprob"] = cumulative_logprob(r);
            if (opt.best_of > 0)
                c["score"] = best_of_score(r, opt.rank);
            if (vote) {
                const auto& a = vote->answers[k];
                c["answer"] = a ? nlohmann::json(*a) : nlohmann::json(nullptr);
            }
            arr.push_back(std::move(c));
        }
        j["choices"] = std::move(arr);
        j["n"] = opt.n;
        if (opt.best_of > 0) {
            j["best_of"] = opt.best_of;
            j["best_of_rank"] = best_of_rank_name(opt.rank);
        }
        if (vote) {
            nlohmann::json tally = nlohmann::json::array();
            for (const AnswerVotes& t : vote->tally)
                tally.push_back({{"answer", t.answer}, {"votes", t.votes}});
            j["vote"] = {
                {"pattern", opt.vote->spec()},
                {"answer", vote->winner ? nlohmann::json(*vote->winner) : nlohmann::json(nullptr)},
                {"votes", vote->winner_votes},
                {"samples", vote->answers.size()},
                {"tie", vote->tie()},
                {"tied", vote->tied},
                {"no_answer", vote->no_answer},
                {"tally", std::move(tally)}};
        }
        j["prompt_tokens"] = prompt_tokens;
        j["completion_tokens"] = completion_tokens;
        j["total_ms"] = total_ms;
        j["kv_cache"] = {{"peak_used_blocks", peak_blocks},
                         {"cow_copies", cow},
                         {"block_size", engine.config().block_size}};
        std::cout << dump_json(j) << "\n";
        return 0;
    }
    for (size_t k = 0; k < shown.size(); ++k) {
        const size_t i = shown[k];
        const GenerationResult& r = (*results)[i];
        std::string head =
            "--- sample " + std::to_string(k + 1) + "/" + std::to_string(shown.size());
        if (choices[i].seed)
            head += ", seed " + std::to_string(*choices[i].seed);
        if (opt.best_of > 0) {
            char buf[64];
            std::snprintf(buf, sizeof buf, ", score %.4f", best_of_score(r, opt.rank));
            head += buf;
        }
        head += std::string(", finish: ") + finish_reason_name(r.finish);
        if (vote)
            head += ", answer: " + answer_text(vote->answers[k]);
        std::cout << head << " ---\n" << r.text << "\n";
    }
    if (vote) {
        std::cout << "vote (" << opt.vote->spec() << "): " << answer_text(vote->winner);
        if (vote->winner)
            std::cout << " with " << vote->winner_votes << "/" << vote->answers.size() << " votes";
        if (vote->tie())
            std::cout << " (tie between " << vote->tied << " answers)";
        std::cout << "; no answer: " << vote->no_answer << "\n";
        for (const AnswerVotes& t : vote->tally)
            std::cout << "  " << t.answer << ": " << t.votes << "\n";
    }
    std::cout << std::flush;
    std::fprintf(stderr,
                 "[%lld prompt tokens prefilled once, %d samples, %lld generated, %.1f ms, "
                 "%.1f tok/s; KV peak %lld blocks, %lld copy-on-write copies]\n",
                 static_cast<long long>(prompt_tokens), total,
                 static_cast<long long>(completion_tokens), total_ms,
                 total_ms > 0 ? completion_tokens / (total_ms / 1000.0) : 0.0,
                 static_cast<long long>(peak_blocks), static_cast<long long>(cow));
    return 0;
}

} // namespace llmwb::cli
