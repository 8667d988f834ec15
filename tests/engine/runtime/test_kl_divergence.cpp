// KL divergence between two models' next-token distributions (engine/runtime/kl_divergence.h):
// one position computed by hand over a 3-token vocabulary, the summary statistics, identical
// models (KLD exactly 0), float vs Q8_0 vs Q4_0 written by the model writer, and bad input.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engine/runtime/cpu_executor.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/kl_divergence.h"
#include "engine/runtime/perplexity.h"
#include "kernels/cpu/thread_pool.h"
#include "runtime_test_models.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::test;

namespace {

std::vector<int32_t> make_ids(int n, int32_t vocab, uint32_t seed) {
    std::vector<int32_t> ids(n);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; i < n; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        ids[i] = static_cast<int32_t>((s >> 33) % static_cast<uint64_t>(vocab));
    }
    return ids;
}

struct Fixture {
    mini_test::TempDir dir;
    kernels::ThreadPool pool{2};
};

Fixture& fx() {
    static Fixture f;
    return f;
}

// A loaded model with its CPU executor (KV pool of `blocks` x 16 slots).
struct Runner {
    std::unique_ptr<LoadedModel> model;
    std::unique_ptr<CpuTransformer> tf;
    std::unique_ptr<CpuExecutor> exec;
};

std::unique_ptr<Runner> open(const ModelWriterSpec& spec, const std::string& name,
                             int32_t blocks = 16) {
    std::string err;
    auto r = std::make_unique<Runner>();
    r->model = write_and_load(spec, fx().dir.path(), name, &err);
    if (!r->model) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return nullptr;
    }
    r->tf = std::make_unique<CpuTransformer>(*r->model, fx().pool);
    r->exec = std::make_unique<CpuExecutor>(*r->tf);
    if (Status st = r->exec->resize_kv(blocks, 16, {}); !st) {
        std::fprintf(stderr, "%s\n", st.message().c_str());
        return nullptr;
    }
    return r;
}

bool near(double a, double b, double tol) {
    return std::abs(a - b) <= tol;
}

} // namespace

// p = (1/2, 1/4, 1/4), q = (1/4, 1/2, 1/4): KL(p || q) = 1/2 ln 2 + 1/4 ln 1/2 = 1/4 ln 2.
MT_TEST(hand_computed_three_token_vocabulary) {
    const float b[3] = {std::log(0.5f), std::log(0.25f), std::log(0.25f)};
    // The model's logits shifted by a constant: the distribution (and the KL) is the same.
    const float m[3] = {std::log(0.25f) + 7.0f, std::log(0.5f) + 7.0f, std::log(0.25f) + 7.0f};
    auto p = kld_position(b, m, 2);
    MT_REQUIRE(p.ok());
    MT_CHECK_MSG(near(p->kld, 0.25 * std::log(2.0), 1e-7), "kld %.9f", p->kld);
    MT_CHECK(near(p->base_logprob, std::log(0.25), 1e-7));
    MT_CHECK(near(p->model_logprob, std::log(0.25), 1e-6));
    MT_COMPARE(p->base_top1, 0);
    MT_COMPARE(p->model_top1, 1);
    MT_CHECK(near(p->base_margin, 0.25, 1e-7));

    // KL is not symmetric: KL(q || p) = 1/4 ln 1/2 + 1/2 ln 2 = 1/4 ln 2 here too, but with
    // q = (0.8, 0.1, 0.1) against p: 0.8 ln 1.6 + 0.1 ln 0.4 + 0.1 ln 0.4.
    const float q2[3] = {std::log(0.8f), std::log(0.1f), std::log(0.1f)};
    auto pq = kld_position(q2, b, 0);
    MT_REQUIRE(pq.ok());
    const double want = 0.8 * std::log(1.6) + 0.2 * std::log(0.4);
    MT_CHECK_MSG(near(pq->kld, want, 1e-6), "kld %.9f, want %.9f", pq->kld, want);
    auto qp = kld_position(b, q2, 0);
    MT_REQUIRE(qp.ok());
    const double want_rev = 0.5 * std::log(0.5 / 0.8) + 0.5 * std::log(0.25 / 0.1);
    MT_CHECK_MSG(near(qp->kld, want_rev, 1e-6), "kld %.9f, want %.9f", qp->kld, want_rev);
}

// Logits of 1000s would overflow a naive exp; the log-softmax subtracts the max first.
MT_TEST(large_logits_are_stable_and_ties_have_no_margin) {
    const float b[3] = {1000.0f, 1000.0f, 990.0f};
    const float m[3] = {-500.0f, -500.0f, -510.0f};
    auto p = kld_position(b, m, 1);
    MT_REQUIRE(p.ok());
    MT_CHECK(std::isfinite(p->kld));
    MT_CHECK(p->kld < 1e-9);
    MT_COMPARE(p->base_top1, 0); // lowest id on ties
    MT_COMPARE(p->base_margin, 0.0);

    const float one[1] = {3.0f};
    auto single = kld_position(one, one, 0);
    MT_REQUIRE(single.ok());
    MT_COMPARE(single->kld, 0.0);
    MT_COMPARE(single->base_margin, 1.0);

    const float nan[3] = {0.0f, std::numeric_limits<float>::quiet_NaN(), 1.0f};
    auto bad = kld_position(b, nan, 0);
    MT_REQUIRE(!bad.ok());
    MT_CHECK(bad.message().find("model's logit for token 1") != std::string::npos);
    const float inf[3] = {std::numeric_limits<float>::infinity(), 0.0f, 0.0f};
    auto bad_base = kld_position(inf, m, 0);
    MT_REQUIRE(!bad_base.ok());
    MT_CHECK(bad_base.message().find("base") != std::string::npos);
}

MT_TEST(accumulator_statistics) {
    KldAccumulator acc(0.1);
    // KL values 100, 99, ..., 0 (out of order); top-1 agrees on even positions; the margin is
    // above 0.1 on the first 10 positions, which all agree.
    for (int i = 0; i <= 100; ++i) {
        KldPosition p;
        p.kld = 100 - i;
        p.base_logprob = std::log(0.5);
        p.model_logprob = std::log(0.25);
        p.base_top1 = 3;
        p.model_top1 = (i % 2 == 0 || i < 10) ? 3 : 4;
        p.base_margin = i < 10 ? 0.5 : 0.05;
        acc.add(p);
    }
    KldResult r = acc.summarize();
    MT_COMPARE(r.positions, int64_t{101});
    MT_CHECK(near(r.mean_kld, 50.0, 1e-12));
    MT_CHECK(near(r.median_kld, 50.0, 1e-12));
    MT_CHECK(near(r.p99_kld, 99.0, 1e-12));
    MT_COMPARE(r.max_kld, 100.0);
    // Agreement: 51 even positions + odd positions below 10 (1, 3, 5, 7, 9) = 56 of 101.
    MT_CHECK(near(r.top1_agreement, 100.0 * 56 / 101, 1e-9));
    MT_COMPARE(r.confident_positions, int64_t{10});
    MT_CHECK(near(r.top1_agreement_confident, 100.0, 1e-12));
    MT_CHECK(near(r.ppl_base, 2.0, 1e-9));
    MT_CHECK(near(r.ppl_model, 4.0, 1e-9));
    MT_CHECK(near(r.ppl_ratio, 2.0, 1e-9));

    KldAccumulator two;
    KldPosition a, b;
    a.kld = 1;
    b.kld = 3;
    two.add(a);
    two.add(b);
    KldResult t = two.summarize();
    MT_CHECK(near(t.median_kld, 2.0, 1e-12));
    MT_CHECK(near(t.p99_kld, 2.98, 1e-12)); // interpolated between the two
}

// The same weights in two executors: KL exactly 0, top-1 100 %, the perplexities those of
// perplexity(), whatever the windows and chunks.
MT_TEST(identical_models) {
    auto a = open(spec_for(Shape::Llama, ModelFileFormat::Gguf, WeightType::F32), "same-a");
    auto b = open(spec_for(Shape::Llama, ModelFileFormat::Gguf, WeightType::F32), "same-b");
    MT_REQUIRE(a && b);
    const std::vector<int32_t> ids = make_ids(70, a->exec->vocab_size(), 3);
    KldOptions opt;
    opt.chunk = 16;
    auto r = kl_divergence(*a->exec, *b->exec, ids, opt);
    MT_REQUIRE_MSG(r.ok(), "%s", r.ok() ? "" : r.message().c_str());
    MT_COMPARE(r->tokens, int64_t{70});
    MT_COMPARE(r->windows, int64_t{1});
    MT_COMPARE(r->positions, int64_t{69});
    MT_COMPARE(r->mean_kld, 0.0);
    MT_COMPARE(r->max_kld, 0.0);
    MT_COMPARE(r->top1_agreement, 100.0);
    MT_COMPARE(r->ppl_ratio, 1.0);
    auto ppl = perplexity(*a->exec, ids);
    MT_REQUIRE(ppl.ok());
    MT_CHECK_MSG(near(r->ppl_base, ppl->ppl, 1e-9 * ppl->ppl), "%g vs %g", r->ppl_base, ppl->ppl);

    // Windows of 32 tokens: 70 = 32 + 32 + 6, each window scores all but its last token.
    opt.ctx = 32;
    auto w = kl_divergence(*a->exec, *a->exec, ids, opt); // one executor twice works too
    MT_REQUIRE(w.ok());
    MT_COMPARE(w->windows, int64_t{3});
    MT_COMPARE(w->positions, int64_t{67});
    MT_COMPARE(w->mean_kld, 0.0);
    MT_COMPARE(w->top1_agreement, 100.0);
    // A window of 71 tokens would leave the first window's perplexity unchanged; a window of 32
    // starts again from an empty cache at 32 and 64, so the perplexity differs.
    MT_CHECK(std::abs(w->ppl_base - r->ppl_base) > 1e-9);
}

// Float vs Q8_0 vs Q4_0 of the same logical weights: Q8_0 is far closer than Q4_0.
MT_TEST(quantized_against_float) {
    auto f32 = open(spec_for(Shape::Quant, ModelFileFormat::Gguf, WeightType::F32), "q-f32");
    auto q8 = open(spec_for(Shape::Quant, ModelFileFormat::Gguf, WeightType::Q8_0), "q-q8");
    auto q4 = open(spec_for(Shape::Quant, ModelFileFormat::Gguf, WeightType::Q4_0), "q-q4");
    MT_REQUIRE(f32 && q8 && q4);
    const std::vector<int32_t> ids = make_ids(120, f32->exec->vocab_size(), 11);
    auto r8 = kl_divergence(*f32->exec, *q8->exec, ids);
    auto r4 = kl_divergence(*f32->exec, *q4->exec, ids);
    MT_REQUIRE(r8.ok() && r4.ok());
    std::printf("F32 vs Q8_0: mean KLD %.3g, p99 %.3g, top-1 %.1f %% (%.1f %% of %lld with margin "
                "> 0.1), PPL ratio %.5f\n",
                r8->mean_kld, r8->p99_kld, r8->top1_agreement, r8->top1_agreement_confident,
                static_cast<long long>(r8->confident_positions), r8->ppl_ratio);
    std::printf("F32 vs Q4_0: mean KLD %.3g, p99 %.3g, top-1 %.1f %% (%.1f %% of %lld with margin "
                "> 0.1), PPL ratio %.5f\n",
                r4->mean_kld, r4->p99_kld, r4->top1_agreement, r4->top1_agreement_confident,
                static_cast<long long>(r4->confident_positions), r4->ppl_ratio);
    MT_CHECK(r8->mean_kld > 0);
    MT_CHECK_MSG(r8->mean_kld * 10 < r4->mean_kld, "Q8_0 %g vs Q4_0 %g", r8->mean_kld,
                 r4->mean_kld);
    MT_CHECK(r8->p99_kld < r4->p99_kld);
    MT_CHECK(r8->top1_agreement >= 90.0);
    MT_CHECK(r8->top1_agreement >= r4->top1_agreement);
    MT_CHECK(std::abs(r8->ppl_ratio - 1.0) < std::abs(r4->ppl_ratio - 1.0) + 1e-12);
}

MT_TEST(bad_input) {
    auto a = open(spec_for(Shape::Llama, ModelFileFormat::Gguf, WeightType::F32), "bad-a", 4);
    ModelWriterSpec big = spec_for(Shape::Llama, ModelFileFormat::Gguf, WeightType::F32);
    big.vocab_size = a ? a->exec->vocab_size() + 10 : 0;
    auto b = open(big, "bad-bigvocab", 4);
    MT_REQUIRE(a && b);
    const int32_t V = a->exec->vocab_size();

    auto one = kl_divergence(*a->exec, *a->exec, std::vector<int32_t>{5});
    MT_REQUIRE(!one.ok());
    MT_CHECK(one.message().find("at least 2 tokens") != std::string::npos);

    auto vocab = kl_divergence(*a->exec, *b->exec, std::vector<int32_t>{1, 2, 3});
    MT_REQUIRE(!vocab.ok());
    MT_CHECK_MSG(vocab.message().find("vocabularies differ") != std::string::npos, "%s",
                 vocab.message().c_str());

    auto outside = kl_divergence(*a->exec, *a->exec, std::vector<int32_t>{1, V});
    MT_REQUIRE(!outside.ok());
    MT_CHECK(outside.message().find("outside the vocabulary") != std::string::npos);
    auto negative = kl_divergence(*a->exec, *a->exec, std::vector<int32_t>{-1, 2});
    MT_REQUIRE(!negative.ok());

    // 4 blocks of 16: a window of 65 tokens does not fit; a longer text with no --ctx is cut
    // into windows of the pool's 64 slots.
    const std::vector<int32_t> ids = make_ids(100, V, 5);
    KldOptions opt;
    opt.ctx = 65;
    auto too_long = kl_divergence(*a->exec, *a->exec, ids, opt);
    MT_REQUIRE(!too_long.ok());
    MT_CHECK(too_long.message().find("does not fit a context of 64") != std::string::npos);
    opt.ctx = 1;
    auto too_short = kl_divergence(*a->exec, *a->exec, ids, opt);
    MT_REQUIRE(!too_short.ok());
    MT_CHECK(too_short.message().find("too short") != std::string::npos);
    auto fit = kl_divergence(*a->exec, *a->exec, ids);
    MT_REQUIRE(fit.ok());
    MT_COMPARE(fit->windows, int64_t{2});
    MT_COMPARE(fit->positions, int64_t{98});
}

MINI_TEST_MAIN()
