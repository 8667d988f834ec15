// Issue 14 in the engine: the one length rule (resolve_max_tokens, applied by add_request) and
// a model file truncated while the engine generates from its mapping (the requests fail with
// FinishReason::Error and the file's name; the engine takes no more requests).
#include <unistd.h>

#include <climits>
#include <string>

#include "engine/serving/engine.h"
#include "engine/serving/generation.h"
#include "serving_test_model.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::mini_test;

namespace {

SamplingParams greedy() {
    SamplingParams p;
    p.temperature = 0;
    p.ignore_eos = true;
    return p;
}

SamplingParams greedy_asked(int max_tokens) {
    SamplingParams p = greedy();
    const SamplingField* f = find_sampling_field("max_tokens");
    MT_REQUIRE(f != nullptr);
    MT_REQUIRE(set_sampling_integer(p, *f, max_tokens).ok()); // as a flag or a JSONL key sets it
    MT_REQUIRE(p.max_tokens_set);
    return p;
}

// A fresh model per test: the SIGBUS tests truncate their file.
struct Setup {
    TempDir dir;
    std::unique_ptr<test::ServingTestModel> m;
    std::string path() const { return dir.file("serving.gguf"); }
};

std::unique_ptr<Setup> setup() {
    auto s = std::make_unique<Setup>();
    std::string err;
    s->m = test::make_serving_test_model(s->dir.path(), &err);
    MT_REQUIRE_MSG(s->m != nullptr, "%s", err.c_str());
    MT_REQUIRE_COMPARE(s->m->model->config.max_position, 4096);
    return s;
}

std::unique_ptr<Engine> engine_of(Setup& s) {
    EngineConfig c;
    c.memory.num_blocks = 600; // 9600 token slots: more than the model's context of 4096
    auto e = Engine::create(*s.m->transformer, *s.m->tokenizer, c);
    MT_REQUIRE_MSG(e.ok(), "%s", e.ok() ? "" : e.message().c_str());
    return std::move(e.value());
}

std::vector<int32_t> ids(int n) {
    std::vector<int32_t> v;
    for (int i = 0; i < n; ++i)
        v.push_back(10 + i % 200);
    return v;
}

} // namespace

// ---- the length rule

MT_TEST(defaultMaxTokensIsCappedByTheRoomLeft) {
    SamplingParams p; // max_tokens 256, not set by the request
    MT_COMPARE(*resolve_max_tokens(p, 12, 32768), 256);
    MT_COMPARE(*resolve_max_tokens(p, 32700, 32768), 68);
    p.max_tokens = INT_MAX; // vLLM's absent max_tokens: up to the context
    MT_COMPARE(*resolve_max_tokens(p, 12, 32768), 32756);
    MT_COMPARE(*resolve_max_tokens(p, 12, 0), INT_MAX); // no known context: as given
}

MT_TEST(askedMaxTokensBeyondTheContextIsRefusedWithBothNumbers) {
    const SamplingParams p = greedy_asked(1000000);
    auto r = resolve_max_tokens(p, 12, 32768);
    MT_REQUIRE(!r.ok());
    MT_COMPARE(r.message(), std::string("prompt (12 tokens) + max_tokens (1000000) = 1000012 "
                                        "exceeds the model's context of 32768 tokens"));
    MT_COMPARE(*resolve_max_tokens(greedy_asked(32756), 12, 32768), 32756); // exactly fits
    MT_CHECK(!resolve_max_tokens(greedy_asked(32757), 12, 32768).ok());
}

MT_TEST(promptFillingTheContextIsRefused) {
    auto r = resolve_max_tokens(SamplingParams{}, 32768, 32768);
    MT_REQUIRE(!r.ok());
    MT_COMPARE(r.message(),
               std::string("prompt (32768 tokens) leaves no room in the model's context of "
                           "32768 tokens"));
}

MT_TEST(engineAppliesTheRuleInAddRequest) {
    auto s = setup();
    auto e = engine_of(*s);
    auto refused = e->add_request(ids(12), greedy_asked(1000000));
    MT_REQUIRE(!refused.ok());
    MT_COMPARE(refused.message(),
               std::string("add_request: prompt (12 tokens) + max_tokens (1000000) = 1000012 "
                           "exceeds the model's context of 4096 tokens"));
    MT_CHECK(!e->has_unfinished());
    // A default max_tokens near the end of the context runs and stops at the context.
    SamplingParams d = greedy();
    auto r = generate(*e, ids(4090), d);
    MT_REQUIRE_MSG(r.ok(), "%s", r.ok() ? "" : r.message().c_str());
    MT_COMPARE(r->ids.size(), size_t(6));
    MT_COMPARE(int(r->finish), int(FinishReason::Length));
    // An asked max_tokens that fits exactly runs to it.
    auto exact = generate(*e, ids(4090), greedy_asked(6));
    MT_REQUIRE(exact.ok());
    MT_COMPARE(exact->ids.size(), size_t(6));
    MT_CHECK(!generate(*e, ids(4090), greedy_asked(7)).ok());
}

// ---- a model file truncated under the engine

MT_TEST(truncatedModelFileFailsTheRunningRequests) {
    auto s = setup();
    auto e = engine_of(*s);
    SamplingParams p = greedy();
    p.max_tokens = 64;
    auto a = e->add_request(ids(20), p);
    auto b = e->add_request(ids(33), p);
    MT_REQUIRE(a.ok() && b.ok());
    int tokens = 0;
    for (int i = 0; i < 3; ++i) // prefill and a couple of decode steps
        tokens += int(e->step().outputs.size());
    MT_REQUIRE(tokens > 0);
    MT_REQUIRE(::truncate(s->path().c_str(), 1024) == 0); // the header stays, the weights go
    const StepOutputs out = e->step(); // reads zeros where the weights were: no SIGBUS
    const std::string want = "model file changed or was truncated while in use: " + s->path();
    MT_COMPARE(out.outputs.size(), size_t(2));
    for (const RequestOutput& o : out.outputs) {
        MT_CHECK(o.finished);
        MT_COMPARE(int(o.finish), int(FinishReason::Error));
        MT_CHECK(o.new_token_ids.empty());
    }
    MT_COMPARE(e->last_error(), want);
    MT_CHECK(e->weights_lost());
    MT_CHECK(!e->has_unfinished());
    MT_CHECK(e->check_consistency().ok()); // every block back in the pool
    // No more requests until the model is reloaded.
    auto again = e->add_request(ids(5), p);
    MT_REQUIRE(!again.ok());
    MT_COMPARE(again.message(), "add_request: " + want);
}

MT_TEST(generateReportsTheTruncationAsItsError) {
    auto s = setup();
    auto e = engine_of(*s);
    MT_REQUIRE(::truncate(s->path().c_str(), 0) == 0); // before the first step
    SamplingParams p = greedy();
    p.max_tokens = 8;
    auto r = generate(*e, ids(10), p);
    MT_REQUIRE(!r.ok());
    MT_COMPARE(r.message(), "model file changed or was truncated while in use: " + s->path());
}

MINI_TEST_MAIN()
