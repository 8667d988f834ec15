#include "bench/engine/batch_step.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <span>
#include <vector>

#include "engine/model/loaded_model.h"
#include "engine/runtime/attention.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/forward_batch.h"
#include "engine/runtime/kv_cache_storage.h"
#include "engine/runtime/panel_weights.h"
#include "engine/runtime/sampler.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb {

namespace {

using Clock = std::chrono::steady_clock;

// Best (smallest) seconds of fn over rounds, after one warm-up call.
double best_of(int rounds, const std::function<void()>& fn) {
    fn();
    double best = 1e30;
    for (int r = 0; r < rounds; ++r) {
        const auto t0 = Clock::now();
        fn();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    return best;
}

kernels::WeightMatrix as_matrix(const TensorView& t) {
    return kernels::WeightMatrix{t.type, t.data, t.rows, t.cols, t.layout};
}

} // namespace

int run_batch_step(const LoadedModel& m, CpuTransformer& tf, kernels::ThreadPool& pool,
                   const BatchStepOptions& o) {
    const ModelConfig& c = m.config;
    const int32_t n = o.n_seqs, V = tf.vocab_size();
    // Every sequence: `context` tokens, then the timed step's token (rounds rewrite its slot).
    const int32_t per_seq = (o.context + 1 + o.block_size - 1) / o.block_size;
    auto kv_or = KvCacheStorage::create(c, per_seq * n, o.block_size, o.kv_dtype);
    if (!kv_or) {
        std::fprintf(stderr, "error: %s\n", kv_or.message().c_str());
        return 1;
    }
    KvCacheStorage& kv = **kv_or;
    std::vector<std::vector<int32_t>> tables(static_cast<size_t>(n));
    for (int32_t s = 0; s < n; ++s)
        for (int32_t b = 0; b < per_seq; ++b)
            tables[s].push_back(s * per_seq + b);

    // The contexts, a few sequences per forward.
    ForwardBatch batch;
    std::vector<float> logits(static_cast<size_t>(n) * V);
    std::vector<std::vector<int32_t>> ids(static_cast<size_t>(n));
    for (int32_t s = 0; s < n; ++s)
        for (int32_t i = 0; i <= o.context; ++i)
            ids[s].push_back(static_cast<int32_t>((int64_t{s} * 7919 + i * 104729 + 13) % V));
    for (int32_t s0 = 0; s0 < n; s0 += 4) {
        batch.clear();
        for (int32_t s = s0; s < std::min(n, s0 + 4); ++s)
            batch.add_sequence(std::span<const int32_t>(ids[s]).first(o.context), 0, tables[s],
                               o.block_size, ForwardBatch::Logits::Last);
        tf.forward(batch, kv, logits.data());
    }
    // The decode step: one token per sequence at position `context`, logits for all.
    batch.clear();
    for (int32_t s = 0; s < n; ++s)
        batch.add_sequence(std::span<const int32_t>(ids[s]).subspan(o.context, 1), o.context,
                           tables[s], o.block_size, ForwardBatch::Logits::Last);
    // Greedy choice as the engine makes it on the CPU (CpuExecutor::forward_greedy): each
    // row's argmax_first, rows in parallel on the pool.
    std::vector<int32_t> next(static_cast<size_t>(n));
    auto sample_all = [&] {
        std::atomic<int64_t> row{0};
        pool.run([&](int, int) {
            for (int64_t r = row.fetch_add(1); r < n; r = row.fetch_add(1))
                next[r] = argmax_first(std::span<const float>(logits).subspan(
                    static_cast<size_t>(r) * V, static_cast<size_t>(V)));
        });
    };
    const double step_s = best_of(o.rounds, [&] {
        tf.forward(batch, kv, logits.data());
        sample_all();
    });
    const double sample_s = best_of(o.rounds, sample_all);

    // The products alone, n token rows each, as the step runs them.
    const ModelWeights& pw = tf.panel_weights().weights();
    const int64_t H = c.hidden_size, I = c.intermediate_size;
    const int64_t qw = int64_t{c.num_heads} * c.head_dim;
    const int64_t widest = std::max<int64_t>({H, I, qw, V});
    std::vector<float> x(static_cast<size_t>(n * widest)), y0(x.size()), y1(x.size()), y2(x.size());
    for (size_t i = 0; i < x.size(); ++i)
        x[i] = 0.02f * static_cast<float>(static_cast<int64_t>(i * 37 % 101) - 50);
    std::vector<float> y_lm(static_cast<size_t>(n) * V);
    auto each_layer = [&](const std::function<void(const LayerWeights&)>& fn) {
        return best_of(o.rounds, [&] {
            for (const LayerWeights& l : pw.layers)
                fn(l);
        });
    };
    const double qkv_s = each_layer([&](const LayerWeights& l) {
        if (l.wqkv.present()) {
            kernels::matmul(y0.data(), as_matrix(l.wqkv), x.data(), n, &pool);
            return;
        }
        const kernels::MatmulOut outs[] = {{y0.data(), as_matrix(l.wq)},
                                           {y1.data(), as_matrix(l.wk)},
                                           {y2.data(), as_matrix(l.wv)}};
        kernels::matmul_shared(outs, x.data(), n, &pool);
    });
    const double o_s = each_layer([&](const LayerWeights& l) {
        kernels::matmul(y0.data(), as_matrix(l.wo), x.data(), n, &pool);
    });
    const double gate_up_s = each_layer([&](const LayerWeights& l) {
        if (l.w_gate_up.present()) {
            kernels::matmul(y0.data(), as_matrix(l.w_gate_up), x.data(), n, &pool);
            return;
        }
        if (!l.w_gate.present())
            return; // mixture of experts: not timed here
        const kernels::MatmulOut outs[] = {{y0.data(), as_matrix(l.w_gate)},
                                           {y1.data(), as_matrix(l.w_up)}};
        kernels::matmul_shared(outs, x.data(), n, &pool);
    });
    const double down_s = each_layer([&](const LayerWeights& l) {
        if (l.w_down.present())
            kernels::matmul(y0.data(), as_matrix(l.w_down), x.data(), n, &pool);
    });
    const TensorView& out_w = pw.output.present() ? pw.output : pw.tok_embd;
    const double lm_s = best_of(
        o.rounds, [&] { kernels::matmul(y_lm.data(), as_matrix(out_w), x.data(), n, &pool); });

    // The attention of every layer over the N contexts.
    AttentionScratch scratch;
    std::vector<float> att(static_cast<size_t>(n * qw));
    const double att_s = best_of(o.rounds, [&] {
        for (int32_t l = 0; l < kv.num_layers(); ++l)
            paged_attention(att.data(), x.data(), batch, kv.k_pool(l), kv.v_pool(l), kv.layout(),
                            kv.k_scale(l), kv.v_scale(l),
                            attention_shape(c, kv.head_dim(), kv.block_size(), l), pool, scratch);
    });

    // Multiply-adds of the step's products (x2: operations).
    double macs = 0;
    for (const LayerWeights& l : pw.layers)
        for (const TensorView* t :
             {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.wo, &l.w_gate, &l.w_up, &l.w_gate_up, &l.w_down})
            if (t->present())
                macs += static_cast<double>(t->rows) * static_cast<double>(t->cols);
    macs += static_cast<double>(out_w.rows) * static_cast<double>(out_w.cols);
    const double mm_s = qkv_s + o_s + gate_up_s + down_s + lm_s;
    const double other_s = step_s - mm_s - att_s - sample_s;
    const double ms = 1000.0;
    if (o.json) {
        std::printf("{\"batch\": %d, \"context\": %d, \"threads\": %d, \"kv_cache_dtype\": \"%s\", "
                    "\"step_ms\": %.3f, "
                    "\"qkv_ms\": %.3f, \"o_ms\": %.3f, \"gate_up_ms\": %.3f, \"down_ms\": %.3f, "
                    "\"lm_head_ms\": %.3f, \"attention_ms\": %.3f, \"sampling_ms\": %.3f, "
                    "\"other_ms\": %.3f, \"matmul_gops\": %.2f}\n",
                    n, o.context, pool.size(), kv_dtype_name(o.kv_dtype), step_s * ms, qkv_s * ms,
                    o_s * ms, gate_up_s * ms, down_s * ms, lm_s * ms, att_s * ms, sample_s * ms,
                    other_s * ms, 2.0 * macs * n / mm_s / 1e9);
        return 0;
    }
    auto line = [&](const char* name, double s) {
        std::printf("  %-22s %8.2f ms  %5.1f%%\n", name, s * ms, 100.0 * s / step_s);
    };
    std::printf(
        "decode step of %d sequences at context %d, %d threads, %s KV (best of %d rounds)\n", n,
        o.context, pool.size(), kv_dtype_name(o.kv_dtype), o.rounds);
    line("whole step", step_s);
    line("q/k/v products", qkv_s);
    line("o products", o_s);
    line("gate/up products", gate_up_s);
    line("down products", down_s);
    line("lm_head", lm_s);
    line("attention", att_s);
    line("greedy argmaxes", sample_s);
    line("other (by difference)", other_s);
    std::printf("  products: %.1f GOP/s; %.2f ms per token of the step\n",
                2.0 * macs * n / mm_s / 1e9, step_s * ms / n);
    return 0;
}

} // namespace llmwb
