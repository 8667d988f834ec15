// The demo model speaks: its file encodes the bigram table of engine/model/demo_ngram.h, so the
// real engine's greedy output equals the table's most likely continuation token by token (for
// chat prompts, plain prompts and every single-token context); the file is deterministic and
// small; greedy answers are readable text that ends with <|im_end|>.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "engine/model/demo_model.h"
#include "engine/model/demo_ngram.h"
#include "engine/model/loaded_model.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/serving/engine.h"
#include "engine/serving/generation.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/thread_pool.h"
#include "support/mini_test.h"

using namespace llmwb;
namespace fs = std::filesystem;

namespace {

mini_test::TempDir& dir() {
    static mini_test::TempDir d;
    return d;
}

struct Demo {
    std::unique_ptr<LoadedModel> model;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<kernels::ThreadPool> pool;
    std::unique_ptr<CpuTransformer> transformer;
};

Demo& demo() {
    static std::unique_ptr<Demo> d = [] {
        auto out = std::make_unique<Demo>();
        auto path = ensure_demo_model(dir().file("models"));
        if (!path) {
            std::fprintf(stderr, "demo model: %s\n", path.message().c_str());
            std::exit(1);
        }
        auto m = load_model(path.value());
        auto t = m ? Tokenizer::create(m.value()->tokenizer)
                   : Result<std::unique_ptr<Tokenizer>>(m.error());
        if (!m || !t) {
            std::fprintf(stderr, "demo model does not load\n");
            std::exit(1);
        }
        out->model = std::move(m.value());
        out->tokenizer = std::move(t.value());
        out->pool = std::make_unique<kernels::ThreadPool>(2);
        out->transformer = std::make_unique<CpuTransformer>(*out->model, *out->pool);
        return out;
    }();
    return *d;
}

std::unique_ptr<Engine> engine(bool speculative = false) {
    EngineConfig c;
    if (speculative) {
        c.speculative.method = SpeculativeMethod::Ngram;
        c.speculative.num_speculative_tokens = 4;
        c.speculative.prompt_lookup_min = 1;
        c.speculative.prompt_lookup_max = 4;
    }
    auto e = Engine::create(*demo().transformer, *demo().tokenizer, c);
    MT_REQUIRE_MSG(e.ok(), "engine: %s", e.ok() ? "" : e.message().c_str());
    return std::move(e.value());
}

SamplingParams greedy(int max_tokens, bool ignore_eos) {
    SamplingParams p;
    p.temperature = 0;
    p.max_tokens = max_tokens;
    p.ignore_eos = ignore_eos;
    return p;
}

std::string chat_prompt(const std::string& user) {
    return "<|im_start|>user\n" + user + "<|im_end|>\n<|im_start|>assistant\n";
}

std::vector<std::string> prompts() {
    return {chat_prompt("Hello"),
            chat_prompt("What is the KV cache?"),
            chat_prompt("Tell me about speculative decoding."),
            "The scheduler",
            "Once upon a time",
            "zzzz qqqq 12345 ~~~", // tokens the table never saw as a context: unigram back-off
            "The engine reads"};
}

int32_t im_end() {
    return demo().tokenizer->eos_id();
}

} // namespace

MT_TEST(tableIsWellDefined) {
    const DemoBigramModel& lm = DemoBigramModel::instance();
    MT_COMPARE(lm.vocab_size(), demo().transformer->vocab_size());
    MT_CHECK(lm.turns().size() >= 200);
    int64_t tokens = 0;
    for (const auto& t : lm.turns())
        tokens += int64_t(t.size());
    MT_CHECK_MSG(tokens >= 2000, "%lld tokens counted", (long long)tokens);
    MT_CHECK_MSG(lm.min_margin() >= kDemoMinMargin, "margin %g", lm.min_margin());
    // The stated rule, checked from the counts: highest count, ties -> lowest id; back-off.
    int ties = 0;
    for (int32_t v = 0; v < lm.vocab_size(); ++v) {
        if (!lm.seen_as_context(v))
            continue;
        int32_t best = -1;
        int64_t best_n = 0, equal = 0;
        for (int32_t u = 0; u < lm.vocab_size(); ++u) {
            const int64_t n = lm.count(v, u);
            if (n > best_n) {
                best_n = n;
                best = u;
                equal = 0;
            } else if (n == best_n && n > 0) {
                ++equal;
            }
        }
        ties += equal > 0;
        MT_COMPARE(lm.most_likely_next(v), best);
        const auto s = lm.scores(v);
        MT_COMPARE(int32_t(std::max_element(s.begin(), s.end()) - s.begin()), best);
    }
    MT_CHECK(ties > 0); // the tie rule is exercised by the real table
    // Nothing follows <|im_end|> in the counts: its row is the unigram back-off.
    MT_CHECK(!lm.seen_as_context(im_end()));
    MT_COMPARE(lm.count(im_end(), lm.most_likely_next(im_end())), int64_t(0));
}

MT_TEST(logitsEqualTheTableScores) {
    // One forward per context token through the engine's CPU transformer: logits == scores.
    const DemoBigramModel& lm = DemoBigramModel::instance();
    auto e = engine();
    double max_err = 0;
    for (int32_t v : {0, 10, 200, 300, 400, 600, im_end(), lm.vocab_size() - 1}) {
        SamplingParams p = greedy(1, true);
        p.logprobs = 1;
        auto r = generate(*e, {v}, p);
        MT_REQUIRE_MSG(r.ok(), "%s", r.ok() ? "" : r.message().c_str());
        MT_COMPARE(r->ids.front(), lm.most_likely_next(v));
        // log_softmax of the logits vs log_softmax of the scores, for the chosen token.
        const auto s = lm.scores(v);
        double mx = *std::max_element(s.begin(), s.end()), z = 0;
        for (float x : s)
            z += std::exp(double(x) - mx);
        const double want = double(s[size_t(r->ids.front())]) - mx - std::log(z);
        max_err = std::max(max_err, std::abs(double(r->logprobs.front().logprob) - want));
    }
    MT_CHECK_MSG(max_err < 5e-3, "max logprob error %g", max_err); // F16 weights
}

MT_TEST(greedyEqualsTheTable) {
    const DemoBigramModel& lm = DemoBigramModel::instance();
    auto e = engine();
    for (const std::string& text : prompts()) {
        MT_SCOPE("%s", text.c_str());
        const auto ids = demo().tokenizer->encode(text, false);
        auto r = generate(*e, ids, greedy(96, true));
        MT_REQUIRE(r.ok());
        MT_COMPARE(r->ids.size(), size_t(96));
        MT_COMPARE(r->ids, lm.greedy(ids.back(), 96));
    }
}

MT_TEST(greedyEqualsTheTableFromEveryToken) {
    // Every id as a one-token prompt, all in one batch. The model reads only the last token, so
    // the first step from every id already covers every transition of the table; the next steps
    // check that the batch carries each sequence on (16 tokens: the exhaustive sweep under the
    // sanitizers took ~2 minutes at 64).
    constexpr int kTokens = 16;
    const DemoBigramModel& lm = DemoBigramModel::instance();
    auto e = engine();
    std::vector<RequestId> ids;
    std::map<RequestId, int32_t> first;
    for (int32_t v = 0; v < lm.vocab_size(); ++v) {
        auto id = e->add_request({v}, greedy(kTokens, true));
        MT_REQUIRE(id.ok());
        first[id.value()] = v;
    }
    std::map<RequestId, std::vector<int32_t>> out;
    while (e->has_unfinished()) {
        const StepOutputs step = e->step();
        MT_REQUIRE_MSG(e->last_error().empty(), "%s", e->last_error().c_str());
        for (const auto& o : step.outputs)
            for (int32_t t : o.new_token_ids)
                out[o.id].push_back(t);
    }
    for (const auto& [id, v] : first) {
        MT_SCOPE("first token %d", v);
        MT_COMPARE(out[id], lm.greedy(v, kTokens));
    }
}

MT_TEST(greedyAnswersAreReadableAndEnd) {
    auto e = engine();
    for (const std::string& text : prompts()) {
        MT_SCOPE("%s", text.c_str());
        auto r = generate(*e, demo().tokenizer->encode(text, false), greedy(256, false));
        MT_REQUIRE(r.ok());
        MT_CHECK_MSG(r->finish == FinishReason::Stop, "%s", r->text.c_str());
        MT_CHECK(r->text.find("\xEF\xBF\xBD") == std::string::npos); // U+FFFD
        MT_CHECK(r->text.find("\n\n\n") == std::string::npos);
        MT_CHECK(r->text.find('.') != std::string::npos);
        if (text.find("<|im_start|>") != std::string::npos) // a chat answer is a sentence
            MT_CHECK(r->text.size() >= 20);
        std::fprintf(stderr, "  %s -> %s\n", text.substr(0, 40).c_str(), r->text.c_str());
    }
    // From any token, greedy reaches <|im_end|> within 64 tokens (no loop avoids it).
    const DemoBigramModel& lm = DemoBigramModel::instance();
    for (int32_t v = 0; v < lm.vocab_size(); ++v) {
        const auto g = lm.greedy(v, 64);
        MT_CHECK_MSG(std::find(g.begin(), g.end(), im_end()) != g.end(), "from %d", v);
    }
}

MT_TEST(speculativeDraftsAreAcceptedAndChangeNothing) {
    const DemoBigramModel& lm = DemoBigramModel::instance();
    auto e = engine(true);
    const auto ids = demo().tokenizer->encode(chat_prompt("Hello"), false);
    auto r = generate(*e, ids, greedy(200, true));
    MT_REQUIRE(r.ok());
    MT_COMPARE(r->ids, lm.greedy(ids.back(), 200));
    const SpeculativeStats st = e->snapshot().speculative;
    // A greedy bigram answer repeats itself: prompt lookup finds most of it.
    MT_CHECK_MSG(st.acceptance_rate() > 0.5, "accepted %lld of %lld",
                 (long long)st.num_accepted_tokens, (long long)st.num_draft_tokens);
}

MT_TEST(fileIsDeterministicAndSmall) {
    const std::string a = dir().file("a.gguf"), b = dir().file("b.gguf");
    MT_REQUIRE(write_demo_model(a).ok());
    MT_REQUIRE(write_demo_model(b).ok());
    auto bytes = [](const std::string& p) {
        std::ifstream f(p, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(f), {});
    };
    const std::string x = bytes(a);
    MT_CHECK(x == bytes(b));
    MT_CHECK_MSG(x.size() < size_t(8) << 20, "%zu bytes", x.size());
    auto m = load_model(a);
    MT_REQUIRE(m.ok());
    MT_COMPARE(m.value()->name, std::string(kDemoModelName));
    MT_CHECK(m.value()->name.find("demo") != std::string::npos);
}

MT_TEST(oldRandomDemoFileIsRemoved) {
    const std::string d = dir().file("old");
    fs::create_directories(d);
    std::ofstream(d + "/" + kOldDemoModelFileName) << "old";
    auto p = ensure_demo_model(d);
    MT_REQUIRE(p.ok());
    MT_CHECK(!fs::exists(d + "/" + kOldDemoModelFileName));
    MT_CHECK(fs::exists(p.value()));
}

MINI_TEST_MAIN()
