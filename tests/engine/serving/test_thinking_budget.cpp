// Reasoning budget (SamplingParams::thinking_budget) in the OutputProcessor: after N tokens
// inside <think> ... </think> the next token is </think> whatever the logits say, then the
// answer continues as sampled; a block the prompt opened counts; budget 0 closes at once; no
// budget never forces; forks count the thinking they inherit; a model without the tokens is
// refused by the engine. A demo tokenizer with Qwen3's <think> / </think> added tokens.
#include <algorithm>
#include <memory>

#include "engine/model/demo_tokenizer.h"
#include "engine/serving/output_processor.h"
#include "engine/tokenizer/tokenizer.h"
#include "serving_test_engine.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::mini_test;

namespace {

struct Think {
    std::unique_ptr<Tokenizer> tok;
    int32_t open = -1, close = -1, word = -1, vocab = 0;
};

const Think& think() {
    static const Think t = [] {
        Think t;
        TokenizerData d = make_demo_tokenizer().data;
        for (const char* s : {"<think>", "</think>"}) {
            TokenizerData::AddedToken a;
            a.id = static_cast<int32_t>(d.tokens.size());
            a.content = s;
            a.special = false; // as in Qwen3's tokenizer
            d.added_tokens.push_back(a);
            d.tokens.push_back(s);
            d.token_types.push_back(4);
        }
        auto tok = Tokenizer::create(d);
        if (!tok) {
            std::fprintf(stderr, "tokenizer: %s\n", tok.message().c_str());
            std::exit(1);
        }
        t.tok = std::move(tok.value());
        t.open = t.tok->vocab_size() - 2;
        t.close = t.tok->vocab_size() - 1;
        t.word = t.tok->encode("a", false).at(0);
        t.vocab = t.tok->vocab_size();
        return t;
    }();
    return t;
}

// A logits row whose argmax is `id`.
std::vector<float> favouring(int32_t id) {
    std::vector<float> row(static_cast<size_t>(think().vocab), 0.0f);
    row[static_cast<size_t>(id)] = 10.0f;
    return row;
}

SamplingParams greedy(std::optional<int32_t> budget) {
    SamplingParams p;
    p.temperature = 0;
    p.max_tokens = 50;
    p.ignore_eos = true;
    p.thinking_budget = budget;
    return p;
}

// Appends tokens with logits favouring `want[i]`; returns what was appended.
std::vector<int32_t> run(OutputProcessor& op, Request& r, const std::vector<int32_t>& want) {
    std::vector<int32_t> got;
    for (int32_t w : want) {
        RequestOutput o;
        const auto row = favouring(w);
        op.append_token(r, row.data(), think().vocab, -1, 1 << 20, o);
        got.insert(got.end(), o.new_token_ids.begin(), o.new_token_ids.end());
    }
    return got;
}

} // namespace

MT_TEST(tokens_found) {
    OutputProcessor op(*think().tok, true);
    MT_REQUIRE_COMPARE(op.think_open_id(), think().open);
    MT_REQUIRE_COMPARE(op.think_close_id(), think().close);
}

MT_TEST(budget_forces_close_then_answer_continues) {
    const Think& t = think();
    OutputProcessor op(*t.tok, true);
    Request r(1, {t.word, t.word}, greedy(3));
    op.add(r);
    // The model opens a block and would think forever.
    const std::vector<int32_t> got =
        run(op, r, {t.open, t.word, t.word, t.word, t.word, t.word, t.word, t.open});
    // <think>, three thinking tokens, forced </think>, then the answer as sampled (a second
    // block opened later gets the budget again).
    MT_REQUIRE_COMPARE(got, (std::vector<int32_t>{t.open, t.word, t.word, t.word, t.close, t.word,
                                                  t.word, t.open}));
}

MT_TEST(block_opened_by_the_prompt_counts) {
    const Think& t = think();
    OutputProcessor op(*t.tok, true);
    Request r(1, {t.word, t.open, t.word}, greedy(2)); // one thinking token in the prompt
    op.add(r);
    MT_REQUIRE_COMPARE(run(op, r, {t.word, t.word, t.word}),
                       (std::vector<int32_t>{t.word, t.close, t.word}));
    Request zero(2, {t.word, t.open}, greedy(0));
    op.add(zero);
    MT_REQUIRE_COMPARE(run(op, zero, {t.word, t.word}), (std::vector<int32_t>{t.close, t.word}));
    // The model closing on its own inside the budget is left alone.
    Request own(3, {t.open}, greedy(5));
    op.add(own);
    MT_REQUIRE_COMPARE(run(op, own, {t.word, t.close, t.word, t.word}),
                       (std::vector<int32_t>{t.word, t.close, t.word, t.word}));
}

MT_TEST(no_budget_never_forces) {
    const Think& t = think();
    OutputProcessor op(*t.tok, true);
    Request r(1, {t.open}, greedy(std::nullopt));
    op.add(r);
    const std::vector<int32_t> want(20, t.word);
    MT_REQUIRE_COMPARE(run(op, r, want), want);
}

MT_TEST(fork_counts_inherited_thinking) {
    const Think& t = think();
    OutputProcessor op(*t.tok, true);
    Request r(1, {t.word}, greedy(4));
    op.add(r);
    run(op, r, {t.open, t.word, t.word}); // two thinking tokens so far
    Request child(2, r.tokens, greedy(4));
    op.fork(1, child);
    MT_REQUIRE_COMPARE(run(op, child, {t.word, t.word, t.word}),
                       (std::vector<int32_t>{t.word, t.word, t.close}));
}

MT_TEST(engine_refuses_budget_without_think_tokens) {
    auto e = test::serving_engine(EngineConfig{});
    auto id = e->add_request(std::vector<int32_t>{1, 2, 3}, greedy(8));
    MT_REQUIRE(!id.ok());
    MT_REQUIRE_MSG(id.message().find("thinking_budget") != std::string::npos, "%s",
                   id.message().c_str());
    MT_REQUIRE(e->add_request(std::vector<int32_t>{1, 2, 3}, greedy(std::nullopt)).ok());
}

MINI_TEST_MAIN()
