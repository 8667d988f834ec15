// llmwb-bench-decode: how close single-stream decode comes to the memory-bandwidth roofline.
//
//   roofline tokens/s = read bandwidth (measured here, wide vector loads on all threads)
//                       / weight bytes read per token (every matrix incl. lm_head, once)
//
// Also prompt processing (one 512-token prefill) in tokens/s and GFLOP/s, and the attention of
// one decode step alone (paged_attention of every layer over the whole context, timed on its
// own) with its share of the step: with --prompt 4096 and --kv-cache-dtype
// it shows what a smaller KV cache buys at long context. A plain command that prints figures;
// never a timed assertion.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/engine/batch_step.h"
#include "bench/engine/shape_model.h"
#include "bench/kernels/peak.h"
#include "engine/model/loaded_model.h"
#include "engine/model/model_shapes.h"
#include "engine/model/model_writer.h"
#include "engine/runtime/attention.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/forward_batch.h"
#include "engine/runtime/kv_cache_storage.h"
#include "engine/runtime/panel_weights.h"
#include "engine/runtime/sampler.h"
#include "kernels/cpu/bandwidth.h"
#include "kernels/cpu/kv_format.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"

using namespace llmwb;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Options {
    std::string model;
    std::string shape = "qwen2.5-0.5b";
    std::string type = "q8_0";
    std::string cache_dir;
    int threads = 0;
    int tokens = 64; // decode steps measured (per round)
    int rounds = 3;  // decode rounds; the best is reported (the machine may be shared)
    int prompt = 16; // short prompt before decoding
    int pp = 512;    // prompt-processing length
    int block_size = 16;
    KvDtype kv_dtype = KvDtype::F16; // the CPU backend's auto (kCpuAutoKvDtype)
    std::string simd;                // empty: the best the CPU has (or LLMWB_SIMD)
    std::string layout;              // empty: the engine's default (panels where a type has them)
    bool cast_bf16 = false;          // --dtype bfloat16: F32 / F16 matrices cast to BF16 at load
    int batch = 0; // > 0: only the breakdown of one decode step of that many sequences
    bool json = false;
};

void usage() {
    std::fprintf(
        stderr,
        "usage: llmwb-bench-decode [--model PATH | --shape NAME (qwen2.5-0.5b) --type "
        "f16|q8_0|q4_k] [--cache-dir DIR]\n"
        "                          [--threads N] [--tokens N] [--prompt N] [--pp N] "
        "[--rounds N] [--block-size 8|16|32]\n"
        "                          [--batch N  (only: one decode step of N sequences at context "
        "--prompt, phase by phase)]\n"
        "                          [--kv-cache-dtype %s]\n"
        "                          [--simd scalar|avx2|avx512] [--weight-layout rows|panels] "
        "[--dtype auto|bfloat16] [--json]\n",
        kv_dtype_choices());
}

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&](std::string& v) {
            if (i + 1 >= argc)
                return false;
            v = argv[++i];
            return true;
        };
        auto next_int = [&](int& v) {
            std::string s;
            if (!next(s))
                return false;
            char* end = nullptr;
            const long x = std::strtol(s.c_str(), &end, 10);
            if (end == s.c_str() || *end || x < 0 || x > 1000000)
                return false;
            v = static_cast<int>(x);
            return true;
        };
        bool ok = true;
        if (a == "--model")
            ok = next(o.model);
        else if (a == "--shape")
            ok = next(o.shape);
        else if (a == "--type")
            ok = next(o.type);
        else if (a == "--cache-dir")
            ok = next(o.cache_dir);
        else if (a == "--threads")
            ok = next_int(o.threads);
        else if (a == "--tokens")
            ok = next_int(o.tokens);
        else if (a == "--prompt")
            ok = next_int(o.prompt);
        else if (a == "--rounds")
            ok = next_int(o.rounds);
        else if (a == "--batch")
            ok = next_int(o.batch);
        else if (a == "--pp")
            ok = next_int(o.pp);
        else if (a == "--block-size")
            ok = next_int(o.block_size);
        else if (a == "--kv-cache-dtype") {
            std::string t;
            ok = next(t);
            if (ok && t != "auto") {
                const auto d = parse_kv_dtype(t);
                ok = d.has_value();
                if (ok)
                    o.kv_dtype = *d;
            } else if (ok) {
                o.kv_dtype = KvDtype::F16; // the CPU backend's auto (kCpuAutoKvDtype)
            }
        } else if (a == "--simd") {
            ok = next(o.simd) && (o.simd == "scalar" || o.simd == "avx2" || o.simd == "avx512");
        } else if (a == "--weight-layout") {
            ok = next(o.layout) && (o.layout == "rows" || o.layout == "panels");
        } else if (a == "--dtype") {
            std::string d;
            ok = next(d) && (d == "auto" || d == "bfloat16" || d == "bf16");
            o.cast_bf16 = ok && d != "auto";
        } else if (a == "--json")
            o.json = true;
        else if (a == "-h" || a == "--help")
            return false;
        else {
            std::fprintf(stderr, "unknown argument: %s\n", a.c_str());
            return false;
        }
        if (!ok) {
            std::fprintf(stderr, "bad or missing value for %s\n", a.c_str());
            return false;
        }
    }
    return o.tokens >= 1 && o.prompt >= 1 && o.rounds >= 1;
}

// Multiply-adds per token of all matrices except lm_head (x2 = FLOPs), for prompt processing.
double matmul_flops_per_token(const ModelWeights& w) {
    double f = 0;
    for (const LayerWeights& l : w.layers)
        for (const TensorView* t :
             {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.wo, &l.w_gate, &l.w_up, &l.w_gate_up, &l.w_down})
            f += 2.0 * static_cast<double>(t->rows) * static_cast<double>(t->cols);
    return f;
}

std::string dtype_mix(const ModelWeights& w) {
    int counts[64] = {};
    auto add = [&](const TensorView& t) {
        if (t.present())
            ++counts[static_cast<uint32_t>(t.type) & 63];
    };
    for (const LayerWeights& l : w.layers)
        for (const TensorView* t :
             {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.wo, &l.w_gate, &l.w_up, &l.w_gate_up, &l.w_down})
            add(*t);
    add(w.output.present() ? w.output : w.tok_embd);
    std::string s; // every type present (a preset mixes several: Q5_K_M is Q5_K and Q6_K)
    for (uint32_t i = 0; i < 64; ++i)
        if (counts[i])
            s += (s.empty() ? "" : " ") + std::string(dtype_name(static_cast<DType>(i))) + "x" +
                 std::to_string(counts[i]);
    return s;
}

// The weight type that dominates the matrices decides the instruction mix of prompt processing:
// integer types run int8 dot products, float types fp32 FMAs.
bool integer_mix(const ModelWeights& w) {
    int64_t int_bytes = 0, all = 0;
    for (const LayerWeights& l : w.layers)
        for (const TensorView* t :
             {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.wo, &l.w_gate, &l.w_up, &l.w_gate_up, &l.w_down}) {
            const int64_t b = t->rows * t->row_bytes();
            all += b;
            if (dtype_block_elems(t->type) > 1)
                int_bytes += b;
        }
    return int_bytes * 2 > all;
}

// Peak operations/s (2 per multiply-add) of that mix on every thread of the pool at once.
double measure_peak_gops(kernels::ThreadPool& pool, bool int8) {
    const bool avx512 = kernels::active_simd_level() == kernels::SimdLevel::Avx512;
    if (kernels::active_simd_level() == kernels::SimdLevel::Scalar)
        return 0;
    const int64_t iters = int64_t{1} << 24;
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
        std::vector<double> ops(pool.size(), 0.0);
        const auto t0 = Clock::now();
        pool.run([&](int t, int) {
            ops[t] = int8 ? (avx512 ? bench::peak_int8_avx512(iters) : bench::peak_int8_avx2(iters))
                          : (avx512 ? bench::peak_fma_avx512(iters) : bench::peak_fma_avx2(iters));
        });
        const double s = seconds_since(t0);
        double total = 0;
        for (double o : ops)
            total += o;
        best = std::max(best, total / s / 1e9);
    }
    return best;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) {
        usage();
        return 2;
    }
    if (!o.simd.empty()) {
        const kernels::SimdLevel want = o.simd == "avx512" ? kernels::SimdLevel::Avx512
                                        : o.simd == "avx2" ? kernels::SimdLevel::Avx2
                                                           : kernels::SimdLevel::Scalar;
        kernels::set_simd_level(want);
        if (kernels::active_simd_level() != want) {
            std::fprintf(stderr, "error: this CPU has no %s\n", o.simd.c_str());
            return 1;
        }
    }
    if (!o.layout.empty())
        kernels::set_panel_layout_enabled(o.layout == "panels");
    std::string path = o.model;
    if (path.empty()) {
        auto p = bench::ensure_shape_model(o.shape, o.type, o.cache_dir);
        if (!p) {
            std::fprintf(stderr, "error: %s\n", p.message().c_str());
            return 1;
        }
        path = *p;
    }
    auto loaded = load_model(path);
    if (!loaded) {
        std::fprintf(stderr, "error: %s\n", loaded.message().c_str());
        return 1;
    }
    const LoadedModel& m = **loaded;
    // (A prompt past the model's context would only measure positions it was never trained for,
    // and size the KV cache by a number on the command line.)
    const int64_t want_ctx = std::max<int64_t>(int64_t{o.prompt} + o.tokens + 8, int64_t{o.pp} + 8);
    if (m.config.max_position > 0 && want_ctx > m.config.max_position) {
        std::fprintf(stderr,
                     "error: --prompt %d + --tokens %d (or --pp %d) needs %lld positions; the "
                     "model's context is %d\n",
                     o.prompt, o.tokens, o.pp, static_cast<long long>(want_ctx),
                     m.config.max_position);
        return 1;
    }

    kernels::ThreadPool pool(o.threads);
    CpuTransformer tf(m, pool, o.cast_bf16 ? std::optional<DType>(DType::BF16) : std::nullopt);
    if (o.cast_bf16 && !o.json)
        std::printf("--dtype bfloat16           %d F32/F16 matrices cast to BF16 at load\n",
                    tf.panel_weights().cast_matrices());
    const int32_t V = tf.vocab_size();
    if (o.batch > 0) { // --batch N: one N-sequence decode step, phase by phase
        BatchStepOptions bo;
        bo.n_seqs = o.batch;
        bo.context = o.prompt;
        bo.block_size = o.block_size;
        bo.rounds = o.rounds;
        bo.json = o.json;
        bo.kv_dtype = o.kv_dtype;
        return run_batch_step(m, tf, pool, bo);
    }

    // 1. Read bandwidth, wide vector loads on all threads (and the scalar probe for contrast).
    const double bw = kernels::measure_read_bandwidth_gbs(pool, size_t{512} << 20, true, 5);
    const double bw_scalar = kernels::measure_read_bandwidth_gbs(pool, size_t{512} << 20, false, 3);

    const int64_t max_ctx = std::max(o.prompt + o.tokens + 8, o.pp + 8);
    auto kv_or = KvCacheStorage::create(
        m.config, static_cast<int32_t>((max_ctx + o.block_size - 1) / o.block_size), o.block_size,
        o.kv_dtype);
    if (!kv_or) {
        std::fprintf(stderr, "error: %s\n", kv_or.message().c_str());
        return 1;
    }
    KvCacheStorage& kv = **kv_or;
    SequenceBlocks blocks(kv.block_size(), kv.num_blocks());
    blocks.reserve(max_ctx);
    std::vector<float> logits(V);
    ForwardBatch batch;

    // 2. Decode: a short prompt, two warm-up steps, then `tokens` timed steps (forward + greedy).
    std::vector<int32_t> ids;
    for (int i = 0; i < o.prompt; ++i)
        ids.push_back((i * 7919 + 13) % V);
    batch.add_sequence(ids, 0, blocks.table(), kv.block_size(), ForwardBatch::Logits::Last);
    tf.forward(batch, kv, logits.data());
    SamplingParams greedy;
    greedy.temperature = 0;
    Sampler sampler(greedy);
    auto step = [&] {
        const int32_t next = sampler.sample(logits).id;
        ids.push_back(next);
        batch.clear();
        batch.add_sequence(std::span<const int32_t>(&ids.back(), 1),
                           static_cast<int32_t>(ids.size() - 1), blocks.table(), kv.block_size(),
                           ForwardBatch::Logits::Last);
        tf.forward(batch, kv, logits.data());
    };
    for (int i = 0; i < 2; ++i)
        step();
    // The matrices a decode step multiplies, in its order (169 for a 24-layer model).
    std::vector<const TensorView*> mats;
    {
        const ModelWeights& pw = tf.panel_weights().weights(); // what the step reads
        for (const LayerWeights& l : pw.layers)
            for (const TensorView* t :
                 {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.wo, &l.w_gate, &l.w_up, &l.w_gate_up, &l.w_down})
                if (t->present())
                    mats.push_back(t);
        mats.push_back(pw.output.present() ? &pw.output : &pw.tok_embd);
    }
    // Each round is preceded by a read of those very bytes (matrix by matrix, each split over
    // the threads as the products split it, plain vector loads), and the round's decode rate is
    // set against that read's rate: on a shared machine (a VM whose neighbours come and go) the
    // bandwidth moves by 2x within minutes, so a ratio against one probe taken at the start says
    // more about the neighbours than about the kernels. The reported ratio is the median of the
    // rounds' ratios: the decode step's weight traffic as a fraction of what this machine could
    // read of the same bytes at that moment.
    const double bytes_per_token = static_cast<double>(tf.weight_bytes_per_token());
    const auto read_pass_gbs = [&] {
        double bytes = 0;
        const auto t0 = Clock::now();
        for (const TensorView* t : mats) {
            const auto* b = static_cast<const uint8_t*>(t->data);
            const auto n = static_cast<size_t>(dtype_row_bytes(t->type, t->cols) * t->rows);
            bytes += kernels::read_sum_split(pool, b, n);
        }
        return bytes / seconds_since(t0) / 1e9;
    };
    double dec_s = 1e30;
    std::vector<double> round_bw, round_ratio;
    const int64_t decode_start = static_cast<int64_t>(ids.size());
    for (int r = 0; r < o.rounds; ++r) {
        // Every round continues the same sequence; start each from the same context length.
        ids.resize(decode_start);
        round_bw.push_back(read_pass_gbs());
        const auto t_dec = Clock::now();
        for (int i = 0; i < o.tokens; ++i)
            step();
        const double s = seconds_since(t_dec);
        dec_s = std::min(dec_s, s);
        round_ratio.push_back(o.tokens / s * bytes_per_token / (round_bw.back() * 1e9));
    }
    const double decode_tps = o.tokens / dec_s;
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        const size_t n = v.size();
        return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    };
    const double ratio = median(round_ratio);
    const double round_bw_median = median(round_bw);
    const auto [ratio_lo, ratio_hi] = std::minmax_element(round_ratio.begin(), round_ratio.end());

    // The attention of one decode step alone: paged_attention of every layer in turn (each
    // layer's own pools, so the whole cache streams through as in a real step rather than one
    // layer's staying in cache) for one query row over the context the timed steps ended at,
    // best of rounds.
    double att_ms = 0;
    {
        const ModelConfig& c = m.config;
        const int32_t pos = static_cast<int32_t>(ids.size() - 1);
        batch.clear();
        batch.add_sequence(std::span<const int32_t>(&ids.back(), 1), pos, blocks.table(),
                           kv.block_size(), ForwardBatch::Logits::Last);
        const int64_t width = static_cast<int64_t>(c.num_heads) * kv.head_dim();
        std::vector<float> q(width), out(width);
        for (int64_t i = 0; i < width; ++i)
            q[i] = 0.1f * static_cast<float>((i * 37) % 17 - 8);
        AttentionScratch scratch;
        const int iters = std::max(4, o.tokens / 4);
        double best = 1e30;
        for (int r = 0; r < o.rounds + 1; ++r) {
            const auto t0 = Clock::now();
            for (int i = 0; i < iters; ++i)
                for (int32_t l = 0; l < kv.num_layers(); ++l)
                    paged_attention(out.data(), q.data(), batch, kv.k_pool(l), kv.v_pool(l),
                                    kv.layout(), kv.k_scale(l), kv.v_scale(l),
                                    attention_shape(c, kv.head_dim(), kv.block_size(), l), pool,
                                    scratch);
            if (r > 0)
                best = std::min(best, seconds_since(t0) / iters);
        }
        att_ms = best * 1000.0;
    }
    const int32_t att_context = static_cast<int32_t>(ids.size());
    const double kv_bytes_per_token =
        static_cast<double>(kv.bytes_per_block()) / static_cast<double>(kv.block_size());

    // The same step's matrix-vector products alone (169 for a 24-layer model), best of rounds:
    // what a decode step would cost with zero overhead outside the matmuls.
    double mm_s = 1e30;
    {
        int64_t max_dim = 0;
        for (const TensorView* t : mats)
            max_dim = std::max({max_dim, t->rows, t->cols});
        std::vector<float> x(max_dim, 0.01f), y(max_dim);
        for (int r = 0; r < o.rounds + 1; ++r) {
            const auto t0 = Clock::now();
            for (int i = 0; i < std::min(o.tokens, 16); ++i)
                for (const TensorView* t : mats)
                    kernels::matmul(
                        y.data(),
                        kernels::WeightMatrix{t->type, t->data, t->rows, t->cols, t->layout},
                        x.data(), 1, &pool);
            if (r > 0)
                mm_s = std::min(mm_s, seconds_since(t0) / std::min(o.tokens, 16));
        }
    }
    const double step_ms = dec_s / o.tokens * 1000.0;
    const double matmul_ms = mm_s * 1000.0;
    const double roofline_tps = round_bw_median * 1e9 / bytes_per_token;

    // 3. Prompt processing: one prefill of `pp` tokens in a single batch (after a warm-up).
    double pp_tps = 0, pp_gflops = 0;
    if (o.pp > 0) {
        std::vector<int32_t> prompt(o.pp);
        for (int i = 0; i < o.pp; ++i)
            prompt[i] = (i * 104729 + 7) % V;
        batch.clear();
        batch.add_sequence(std::span(prompt).first(std::min(o.pp, 32)), 0, blocks.table(),
                           kv.block_size(), ForwardBatch::Logits::Last);
        tf.forward(batch, kv, logits.data());
        batch.clear();
        batch.add_sequence(prompt, 0, blocks.table(), kv.block_size(), ForwardBatch::Logits::Last);
        const auto t_pp = Clock::now();
        tf.forward(batch, kv, logits.data());
        const double pp_s = seconds_since(t_pp);
        pp_tps = o.pp / pp_s;
        pp_gflops = matmul_flops_per_token(m.weights) * o.pp / pp_s / 1e9;
    }

    // The attention of the prompt's last chunk (up to 512 query rows over the whole prompt, every
    // layer, the K/V the prefill wrote): query rows 16 at a time per kernel call (what prefill
    // runs) against the same rows one by one (the baseline, the same bits), interleaved, best
    // of rounds.
    double pp_att_ms = 0, pp_att_rowwise_ms = 0;
    int32_t pp_att_rows = 0;
    if (o.pp > 0) {
        const ModelConfig& c = m.config;
        pp_att_rows = std::min(o.pp, 512);
        std::vector<int32_t> chunk(static_cast<size_t>(pp_att_rows), 1);
        batch.clear();
        batch.add_sequence(chunk, o.pp - pp_att_rows, blocks.table(), kv.block_size(),
                           ForwardBatch::Logits::Last);
        const int64_t width = static_cast<int64_t>(c.num_heads) * kv.head_dim() * pp_att_rows;
        std::vector<float> q(width), out(width);
        for (int64_t i = 0; i < width; ++i)
            q[i] = 0.1f * static_cast<float>((i * 37) % 17 - 8);
        AttentionScratch together, rowwise;
        rowwise.max_rows_per_call = 1;
        double best[2] = {1e30, 1e30};
        for (int r = 0; r < o.rounds + 1; ++r)
            for (int w = 0; w < 2; ++w) {
                const auto t0 = Clock::now();
                for (int32_t l = 0; l < kv.num_layers(); ++l)
                    paged_attention(out.data(), q.data(), batch, kv.k_pool(l), kv.v_pool(l),
                                    kv.layout(), kv.k_scale(l), kv.v_scale(l),
                                    attention_shape(c, kv.head_dim(), kv.block_size(), l), pool,
                                    w == 0 ? together : rowwise);
                if (r > 0)
                    best[w] = std::min(best[w], seconds_since(t0));
            }
        pp_att_ms = best[0] * 1000.0;
        pp_att_rowwise_ms = best[1] * 1000.0;
    }

    const bool int8_mix = integer_mix(m.weights);
    const double peak = o.pp > 0 ? measure_peak_gops(pool, int8_mix) : 0.0;
    const char* simd = kernels::simd_level_name(kernels::active_simd_level());
    const char* layout = tf.panel_weights().packed_matrices() > 0 ? "panels" : "rows";
    const char* kvt = kv_dtype_name(kv.dtype());
    if (o.json) {
        std::printf("{\"model\": \"%s\", \"weights\": \"%s\", \"threads\": %d, \"simd\": \"%s\", "
                    "\"bandwidth_gbs\": %.2f, \"bandwidth_scalar_gbs\": %.2f, "
                    "\"weight_bytes_per_token\": %.0f, \"decode_tokens\": %d, "
                    "\"decode_tokens_per_s\": %.3f, \"roofline_tokens_per_s\": %.3f, "
                    "\"roofline_ratio\": %.4f, \"effective_gbs\": %.2f, \"pp_tokens\": %d, "
                    "\"pp_tokens_per_s\": %.2f, \"pp_matmul_gflops\": %.2f, \"step_ms\": %.3f, "
                    "\"matmul_only_ms\": %.3f, \"peak_gops\": %.2f, \"peak_kind\": \"%s\", "
                    "\"pp_peak_ratio\": %.4f, \"kv_cache_dtype\": \"%s\", "
                    "\"kv_bytes_per_token\": %.0f, \"context\": %d, \"attention_ms\": %.3f, "
                    "\"attention_share\": %.4f, \"weight_layout\": \"%s\", "
                    "\"panel_matrices\": %d, \"round_bandwidth_gbs\": %.2f, "
                    "\"roofline_ratio_min\": %.4f, \"roofline_ratio_max\": %.4f, "
                    "\"pp_attention_rows\": %d, \"pp_attention_ms\": %.3f, "
                    "\"pp_attention_row_by_row_ms\": %.3f}\n",
                    path.c_str(), dtype_mix(m.weights).c_str(), pool.size(), simd, bw, bw_scalar,
                    bytes_per_token, o.tokens, decode_tps, roofline_tps, ratio,
                    decode_tps * bytes_per_token / 1e9, o.pp, pp_tps, pp_gflops, step_ms, matmul_ms,
                    peak, int8_mix ? "int8-dot" : "fp32-fma", peak > 0 ? pp_gflops / peak : 0.0,
                    kvt, kv_bytes_per_token, att_context, att_ms, att_ms / step_ms, layout,
                    tf.panel_weights().packed_matrices(), round_bw_median, *ratio_lo, *ratio_hi,
                    pp_att_rows, pp_att_ms, pp_att_rowwise_ms);
    } else {
        std::printf("model                      %s\n", path.c_str());
        std::printf("matrices                   %s\n", dtype_mix(m.weights).c_str());
        std::printf("threads / simd             %d / %s\n", pool.size(), simd);
        if (tf.panel_weights().packed_matrices() > 0)
            std::printf("weight layout              panels (%d matrices, %.1f MB packed at load)\n",
                        tf.panel_weights().packed_matrices(),
                        static_cast<double>(tf.panel_weights().packed_bytes()) / 1e6);
        else
            std::printf("weight layout              rows (%s)\n",
                        tf.panel_weights().not_packed_reason().c_str());
        std::printf("read bandwidth (wide)      %.2f GB/s   (scalar probe %.2f GB/s)\n", bw,
                    bw_scalar);
        std::printf("weight bytes per token     %.1f MB\n", bytes_per_token / 1e6);
        std::printf("decode                     %.2f tokens/s (best of %d rounds of %d tokens; "
                    "%.1f ms/token)\n",
                    decode_tps, o.rounds, o.tokens, 1000.0 / decode_tps);
        std::printf("step vs its matmuls alone  %.2f ms vs %.2f ms (%.1f%% outside matmuls)\n",
                    step_ms, matmul_ms, 100.0 * (step_ms - matmul_ms) / step_ms);
        std::printf("KV cache                   %s, %.0f bytes per token (all layers, K and V)\n",
                    kvt, kv_bytes_per_token);
        std::printf("attention at context %-6d %.2f ms per step (%.1f%% of the step)\n",
                    att_context, att_ms, 100.0 * att_ms / step_ms);
        std::printf(
            "roofline                   %.2f tokens/s (median rate of the reads of the same "
            "weight bytes before the rounds: %.2f GB/s)\n",
            roofline_tps, round_bw_median);
        std::printf("decode / roofline          %.3f   (median of %d rounds, each against the read "
                    "of the same bytes just before it: %.3f .. %.3f; best round %.2f GB/s)\n",
                    ratio, o.rounds, *ratio_lo, *ratio_hi, decode_tps * bytes_per_token / 1e9);
        if (o.pp > 0)
            std::printf("prompt processing (%d)    %.1f tokens/s   (%.1f GFLOP/s in matmuls)\n",
                        o.pp, pp_tps, pp_gflops);
        if (o.pp > 0)
            std::printf("prefill attention          last %d rows at context %d: %.2f ms, rows 16 "
                        "per kernel call, vs %.2f ms row by row (x%.2f)\n",
                        pp_att_rows, o.pp, pp_att_ms, pp_att_rowwise_ms,
                        pp_att_rowwise_ms / pp_att_ms);
        if (peak > 0)
            std::printf("compute peak (%s)      %.1f GOP/s   (prompt processing at %.3f of it)\n",
                        int8_mix ? "int8 dot" : "fp32 FMA", peak, pp_gflops / peak);
    }
    return 0;
}
