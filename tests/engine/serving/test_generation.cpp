// Single-request generation through the serving engine (generate(): a loop over
// Engine::step()): greedy equals a plain double-precision reference's argmax chain, streamed
// text equals the final text, stop strings across token boundaries, stop token ids and EOS, max
// tokens, context length, cancellation, logprobs, seeds and input errors.
#include <algorithm>
#include <memory>

#include "../runtime/reference_model.h"
#include "../runtime/runtime_test_models.h"
#include "engine/serving/generation.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/thread_pool.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::test;

namespace {

struct Stream {
    std::string text;
    std::vector<int32_t> ids;
    int last_events = 0;
    std::function<bool(const TokenEvent&)> fn() {
        return [this](const TokenEvent& e) {
            text += e.text;
            ids.push_back(e.id);
            last_events += e.last ? 1 : 0;
            return true;
        };
    }
};

struct Fixture {
    mini_test::TempDir dir;
    kernels::ThreadPool pool{2};
    std::unique_ptr<LoadedModel> model;
    std::unique_ptr<Tokenizer> tok;
    std::unique_ptr<CpuTransformer> tf;
    std::vector<int32_t> prompt;
};

Fixture& fx() {
    // Destroyed at exit: its TempDir removes the model files.
    static std::unique_ptr<Fixture> f = [] {
        auto f = std::make_unique<Fixture>();
        std::string err;
        f->model = write_and_load(spec_for(Shape::Qwen2, ModelFileFormat::Gguf, WeightType::F32),
                                  f->dir.path(), "gen", &err);
        if (!f->model) {
            std::fprintf(stderr, "model: %s\n", err.c_str());
            std::exit(1);
        }
        auto tok = Tokenizer::create(f->model->tokenizer);
        if (!tok) {
            std::fprintf(stderr, "tokenizer: %s\n", tok.message().c_str());
            std::exit(1);
        }
        f->tok = std::move(tok.value());
        f->tf = std::make_unique<CpuTransformer>(*f->model, f->pool);
        f->prompt = f->tok->encode("The quick brown fox jumps over the lazy dog.", false);
        return f;
    }();
    return *f;
}

// An engine of `num_blocks` blocks of 16 tokens (the default: 256 token slots).
std::unique_ptr<Engine> engine(int32_t num_blocks = 16, int32_t max_batched_tokens = 512) {
    EngineConfig c;
    c.block_size = 16;
    c.memory.num_blocks = num_blocks;
    c.max_num_batched_tokens = max_batched_tokens;
    auto e = Engine::create(*fx().tf, *fx().tok, c);
    MT_REQUIRE_MSG(e.ok(), "engine: %s", e.ok() ? "" : e.message().c_str());
    return std::move(e.value());
}

SamplingParams greedy(int max_tokens) {
    SamplingParams p;
    p.temperature = 0;
    p.max_tokens = max_tokens;
    p.ignore_eos = true;
    return p;
}
// Seeded sampling: varied text from the random model (greedy soon repeats one token).
SamplingParams sampled(int max_tokens, uint64_t seed) {
    SamplingParams p;
    p.temperature = 1.0f;
    p.seed = seed;
    p.max_tokens = max_tokens;
    p.ignore_eos = true;
    return p;
}
GenerationResult run(const SamplingParams& p, Stream* s = nullptr,
                     const std::vector<int32_t>* prompt = nullptr) {
    auto e = engine();
    auto r = generate(*e, prompt ? *prompt : fx().prompt, p,
                      s ? s->fn() : std::function<bool(const TokenEvent&)>{});
    MT_REQUIRE_MSG(r.ok(), "generate: %s", r.ok() ? "" : r.message().c_str());
    return std::move(r.value());
}

} // namespace

MT_TEST(greedy_matches_reference_argmax) {
    Stream s;
    GenerationResult r = run(greedy(12), &s);
    MT_REQUIRE_COMPARE(r.finish, FinishReason::Length);
    MT_REQUIRE_COMPARE(r.ids.size(), size_t{12});
    MT_REQUIRE_COMPARE(r.prompt_tokens, int32_t(fx().prompt.size()));
    ReferenceModel ref(*fx().model);
    std::vector<double> l;
    for (int32_t id : fx().prompt)
        l = ref.step(id);
    for (int32_t id : r.ids) {
        MT_REQUIRE_COMPARE(int32_t(std::max_element(l.begin(), l.end()) - l.begin()), id);
        l = ref.step(id);
    }
    MT_REQUIRE_COMPARE(s.ids, r.ids);
    MT_REQUIRE_COMPARE(s.text, r.text);
    MT_REQUIRE_COMPARE(s.last_events, 1);
    MT_REQUIRE_COMPARE(r.text, fx().tok->decode(r.ids, true));
    MT_REQUIRE(r.ttft_ms > 0 && r.total_ms >= r.ttft_ms);
    MT_REQUIRE(r.prefill_tokens_per_s > 0 && r.decode_tokens_per_s > 0);
}

MT_TEST(chunked_prefill_gives_same_tokens) {
    const GenerationResult a = run(greedy(8));
    auto chunked = engine(16, 3); // 3 prompt tokens per step
    auto b = generate(*chunked, fx().prompt, greedy(8));
    MT_REQUIRE(b.ok());
    MT_REQUIRE_COMPARE(b->ids, a.ids);
    MT_REQUIRE(chunked->steps() >= int64_t((fx().prompt.size() + 2) / 3 + 7));
}

MT_TEST(stop_string_across_token_boundaries) {
    const GenerationResult full = run(sampled(40, 5));
    // Token boundaries in the text.
    std::vector<size_t> at = {0};
    for (size_t i = 1; i <= full.ids.size(); ++i)
        at.push_back(fx().tok->decode(std::span(full.ids).first(i), true).size());
    MT_REQUIRE_COMPARE(at.back(), full.text.size());
    // A stop string starting inside one token and ending inside a later one.
    size_t i = 2;
    while (i + 2 < full.ids.size() && at[i + 1] - at[i] < 2)
        ++i;
    MT_REQUIRE_MSG(i + 2 < full.ids.size(), "%s", "no multi-character token to split");
    const std::string stop = full.text.substr(at[i] + 1, at[i + 2] - at[i]);
    const size_t expect_len = full.text.find(stop);

    SamplingParams p = sampled(40, 5);
    p.stop = {"never-in-this-text-\x01", stop};
    Stream s;
    GenerationResult r = run(p, &s);
    MT_REQUIRE_COMPARE(r.finish, FinishReason::Stop);
    MT_REQUIRE_COMPARE(r.stop_matched, stop);
    MT_REQUIRE_COMPARE(r.text, full.text.substr(0, expect_len));
    MT_REQUIRE_COMPARE(s.text, r.text);
    MT_REQUIRE(s.text.find(stop) == std::string::npos);
    MT_REQUIRE(!r.stop_token.has_value());
    MT_REQUIRE(r.ids.size() <= i + 3);
    MT_REQUIRE_COMPARE(s.last_events, 1);
}

MT_TEST(stop_token_id_ends_generation) {
    const GenerationResult full = run(sampled(20, 6));
    const int32_t stop_id = full.ids[5];
    const size_t first = std::find(full.ids.begin(), full.ids.end(), stop_id) - full.ids.begin();
    SamplingParams p = sampled(20, 6);
    p.stop_token_ids = {stop_id};
    Stream s;
    GenerationResult r = run(p, &s);
    MT_REQUIRE_COMPARE(r.finish, FinishReason::Stop);
    MT_REQUIRE_COMPARE(r.stop_token, std::optional<int32_t>(stop_id));
    MT_REQUIRE_COMPARE(r.ids, std::vector<int32_t>(full.ids.begin(), full.ids.begin() + first + 1));
    MT_REQUIRE_COMPARE(r.text, fx().tok->decode(std::span(full.ids).first(first), true));
    MT_REQUIRE_COMPARE(s.text, r.text);
}

MT_TEST(eos_stops_unless_ignored) {
    const std::vector<int32_t> stops = fx().tok->stop_ids();
    MT_REQUIRE(!stops.empty());
    // Find a seed whose sampled continuation contains a stop id (the model is random).
    for (uint64_t seed = 1; seed < 400; ++seed) {
        SamplingParams p;
        p.temperature = 1.5f;
        p.seed = seed;
        p.max_tokens = 48;
        p.ignore_eos = true;
        const GenerationResult free_run = run(p);
        auto it = std::find_if(free_run.ids.begin(), free_run.ids.end(), [&](int32_t id) {
            return std::find(stops.begin(), stops.end(), id) != stops.end();
        });
        if (it == free_run.ids.end())
            continue;
        MT_REQUIRE_COMPARE(free_run.finish, FinishReason::Length);
        p.ignore_eos = false;
        const GenerationResult r = run(p);
        MT_REQUIRE_COMPARE(r.finish, FinishReason::Stop);
        MT_REQUIRE_COMPARE(r.stop_token, std::optional<int32_t>(*it));
        MT_REQUIRE_COMPARE(r.ids, std::vector<int32_t>(free_run.ids.begin(), it + 1));
        return;
    }
    MT_FAIL("no seed produced an end-of-sequence token");
}

MT_TEST(context_length_ends_generation) {
    auto small = engine(2); // 32 slots
    std::vector<int32_t> prompt(20, fx().prompt[0]);
    auto r = generate(*small, prompt, greedy(100));
    MT_REQUIRE(r.ok());
    MT_REQUIRE_COMPARE(r->finish, FinishReason::Length);
    MT_REQUIRE_COMPARE(r->ids.size(), size_t{12});
    std::vector<int32_t> too_long(32, fx().prompt[0]);
    auto e = generate(*small, too_long, greedy(4));
    MT_REQUIRE(!e.ok());
    MT_REQUIRE_MSG(e.message().find("context") != std::string::npos, "%s", e.message().c_str());
}

MT_TEST(cancellation) {
    std::string streamed;
    auto eng = engine();
    auto r = generate(*eng, fx().prompt, greedy(30), [&](const TokenEvent& e) {
        streamed += e.text;
        return e.index < 3;
    });
    MT_REQUIRE(r.ok());
    MT_REQUIRE_COMPARE(r->finish, FinishReason::Aborted);
    MT_REQUIRE(r->cancelled);
    MT_REQUIRE_COMPARE(r->ids.size(), size_t{4});
    MT_REQUIRE_COMPARE(r->text, streamed);
    MT_REQUIRE(!eng->has_unfinished()); // the request was aborted, its blocks returned
    MT_REQUIRE_COMPARE(eng->snapshot().num_used_blocks, 0);
}

MT_TEST(logprobs_and_seeds) {
    SamplingParams p;
    p.temperature = 0.8f;
    p.top_p = 0.95f;
    p.seed = 99;
    p.max_tokens = 10;
    p.ignore_eos = true;
    p.logprobs = 3;
    const GenerationResult a = run(p), b = run(p);
    MT_REQUIRE_COMPARE(a.ids, b.ids);
    MT_REQUIRE_COMPARE(a.logprobs.size(), a.ids.size());
    for (size_t i = 0; i < a.ids.size(); ++i) {
        MT_REQUIRE_COMPARE(a.logprobs[i].id, a.ids[i]);
        MT_REQUIRE_COMPARE(a.logprobs[i].top.size(), size_t{3});
        MT_REQUIRE(a.logprobs[i].logprob <= a.logprobs[i].top[0].logprob + 1e-6f);
        MT_REQUIRE(a.logprobs[i].top[0].logprob >= a.logprobs[i].top[1].logprob);
    }
    p.seed = 100;
    MT_REQUIRE(run(p).ids != a.ids);
}

MT_TEST(input_errors) {
    SamplingParams bad = greedy(4);
    bad.top_p = 0;
    auto eng = engine();
    auto e1 = generate(*eng, fx().prompt, bad);
    MT_REQUIRE(!e1.ok());
    MT_REQUIRE(e1.message().find("top_p") != std::string::npos);
    auto e2 = generate(*eng, {}, greedy(4));
    MT_REQUIRE(!e2.ok());
    MT_REQUIRE(e2.message().find("no tokens") != std::string::npos);
    auto e3 = generate(*eng, {1, fx().tf->vocab_size()}, greedy(4));
    MT_REQUIRE(!e3.ok());
    MT_REQUIRE(e3.message().find("vocabulary") != std::string::npos);
    auto e4 = generate(*eng, {1, -2}, greedy(4));
    MT_REQUIRE(!e4.ok());
}

MINI_TEST_MAIN()
