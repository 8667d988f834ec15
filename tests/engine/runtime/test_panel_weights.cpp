// The CPU runtime's panel layout (engine/runtime/panel_weights.h) on real model files written by
// the project's writer: which matrices are packed, that packing loses no byte, that the tied
// lm_head shares the embedding's copy, that the layout switch keeps the loaded views, that
// panels and rows give the same predictions, and the guarantee the layout exists for: a
// sequence's logits have the same bits alone or with any other sequences in the step.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/forward_batch.h"
#include "engine/runtime/kv_cache_storage.h"
#include "engine/runtime/panel_weights.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/weight_layout.h"
#include "runtime_test_models.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::test;

namespace {

struct PanelFixture {
    mini_test::TempDir dir{"llmwb-panels"};
    std::map<std::string, std::unique_ptr<LoadedModel>> models;
    kernels::ThreadPool pool{2};
};

PanelFixture& pfx() {
    static PanelFixture f;
    return f;
}

const LoadedModel* panel_model(Shape shape, WeightType type) {
    PanelFixture& f = pfx();
    const std::string key =
        mini_test::format("%d-%s", static_cast<int>(shape), weight_type_name(type));
    auto it = f.models.find(key);
    if (it != f.models.end())
        return it->second.get();
    std::string err;
    auto m = write_and_load(spec_for(shape, ModelFileFormat::Gguf, type), f.dir.path(), key, &err);
    if (!m) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return nullptr;
    }
    return (f.models[key] = std::move(m)).get();
}

// Restores the process-wide layout switch.
struct LayoutGuard {
    bool saved = kernels::panel_layout_enabled();
    ~LayoutGuard() { kernels::set_panel_layout_enabled(saved); }
};

std::vector<const TensorView*> matrices(const ModelWeights& w) {
    std::vector<const TensorView*> out{&w.tok_embd, &w.output};
    for (const LayerWeights& l : w.layers)
        for (const TensorView* t :
             {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.wo, &l.w_gate, &l.w_up, &l.w_gate_up, &l.w_down})
            out.push_back(t);
    return out;
}

kernels::WeightMatrix matrix_of(const TensorView& t) {
    return kernels::WeightMatrix{t.type, t.data, t.rows, t.cols, t.layout};
}

struct PanelTypeRow {
    std::string name;
    WeightType type;
    DType dtype;
};
// The weight types whose matrices have a panel layout. Q8_0 must be among them (the layout's
// first type): the tests below would otherwise test nothing.
std::vector<PanelTypeRow> panel_type_rows() {
    std::vector<PanelTypeRow> rows;
    for (const PanelTypeRow& r : {PanelTypeRow{"q8_0", WeightType::Q8_0, DType::Q8_0},
                                  PanelTypeRow{"q4_0", WeightType::Q4_0, DType::Q4_0},
                                  PanelTypeRow{"q5_0", WeightType::Q5_0, DType::Q5_0},
                                  PanelTypeRow{"q5_1", WeightType::Q5_1, DType::Q5_1},
                                  PanelTypeRow{"q4_1", WeightType::Q4_1, DType::Q4_1},
                                  PanelTypeRow{"iq4_nl", WeightType::IQ4_NL, DType::IQ4_NL},
                                  PanelTypeRow{"q4_k", WeightType::Q4_K, DType::Q4_K},
                                  PanelTypeRow{"q5_k", WeightType::Q5_K, DType::Q5_K},
                                  PanelTypeRow{"q6_k", WeightType::Q6_K, DType::Q6_K},
                                  PanelTypeRow{"iq4_xs", WeightType::IQ4_XS, DType::IQ4_XS},
                                  PanelTypeRow{"q3_k", WeightType::Q3_K, DType::Q3_K},
                                  PanelTypeRow{"q2_k", WeightType::Q2_K, DType::Q2_K},
                                  PanelTypeRow{"f16", WeightType::F16, DType::F16},
                                  PanelTypeRow{"bf16", WeightType::BF16, DType::BF16}})
        if (kernels::panel_format(r.dtype))
            rows.push_back(r);
    return rows;
}

// Logits of the last position of every sequence of one step.
std::vector<float> step_logits(CpuTransformer& tf, KvCacheStorage& kv, const ForwardBatch& b) {
    std::vector<float> out(b.logits_rows.size() * static_cast<size_t>(tf.vocab_size()));
    tf.forward(b, kv, out.data());
    return out;
}

// The decode step of sequence 0 at position 5 run beside 0, 1, 6 and 31 other sequences (their
// 5-token prompts prefilled first, one step each): for k in `sizes`, whether its logits have the
// bits they have alone (the first entry names the first batch size that differs, 0: none).
int32_t first_batch_that_differs(CpuTransformer& tf, const LoadedModel& m,
                                 std::initializer_list<int32_t> sizes) {
    const int32_t V = tf.vocab_size(), bs = 16, n_seq = 32, prompt = 5;
    KvCacheStorage kv(m.config, 2 * n_seq + 2, bs);
    std::vector<std::vector<int32_t>> tables(n_seq), ids(n_seq);
    for (int32_t s = 0; s < n_seq; ++s) {
        tables[static_cast<size_t>(s)] = {2 * s + 1, 2 * s};
        for (int i = 0; i <= prompt; ++i)
            ids[static_cast<size_t>(s)].push_back((s * 131 + i * 17 + 3) % V);
        ForwardBatch b;
        b.add_sequence(std::span(ids[static_cast<size_t>(s)]).first(prompt), 0,
                       tables[static_cast<size_t>(s)], bs, ForwardBatch::Logits::Last);
        step_logits(tf, kv, b);
    }
    // The decode token of the first k sequences in one step. Rewriting the same K/V slots with
    // the same values keeps the cache as it was.
    auto decode = [&](int32_t k) {
        ForwardBatch b;
        for (int32_t s = 0; s < k; ++s)
            b.add_sequence(std::span(ids[static_cast<size_t>(s)]).subspan(prompt, 1), prompt,
                           tables[static_cast<size_t>(s)], bs, ForwardBatch::Logits::Last);
        return step_logits(tf, kv, b);
    };
    const std::vector<float> alone = decode(1);
    for (int32_t k : sizes)
        if (std::memcmp(alone.data(), decode(k).data(), sizeof(float) * V) != 0)
            return k;
    return 0;
}

} // namespace

MT_TEST(q8_0_has_a_panel_layout) {
    MT_REQUIRE(kernels::panel_format(DType::Q8_0) != nullptr);
    MT_CHECK(kernels::panel_format(DType::F32) == nullptr); // fp32 stays in rows
}

MT_TEST_TABLE(packs_every_dense_matrix_losslessly, PanelTypeRow, panel_type_rows()) {
    LayoutGuard guard;
    kernels::set_panel_layout_enabled(true);
    const LoadedModel* m = panel_model(Shape::Quant, row.type); // qwen2: tied embeddings
    MT_REQUIRE(m);
    PanelWeights pw(*m, pfx().pool);
    MT_REQUIRE(pw.packed_matrices() > 0);
    MT_CHECK(pw.not_packed_reason().empty());
    const std::vector<const TensorView*> loaded = matrices(m->weights);
    const std::vector<const TensorView*> packed = matrices(pw.weights());
    int64_t bytes = 0;
    for (size_t i = 0; i < loaded.size(); ++i) {
        const TensorView& a = *loaded[i];
        const TensorView& b = *packed[i];
        if (!a.present())
            continue;
        MT_SCOPE("%s", a.name.c_str());
        const bool applies = kernels::panel_layout_applies(a.type, a.rows, a.cols);
        MT_CHECK(b.layout ==
                 (applies ? kernels::WeightLayout::Panels : kernels::WeightLayout::Rows));
        MT_CHECK(applies ? b.data != a.data : b.data == a.data);
        // Every row of the packed copy unpacks to the file's bytes.
        std::vector<uint8_t> got(static_cast<size_t>(a.row_bytes()));
        for (int64_t r = 0; r < a.rows; ++r) {
            kernels::copy_weight_row(matrix_of(b), r, got.data());
            MT_REQUIRE_MSG(std::memcmp(got.data(), a.row(r), got.size()) == 0, "row %lld",
                           static_cast<long long>(r));
        }
        if (applies && (i != 1 || a.data != m->weights.tok_embd.data))
            bytes += a.rows * a.row_bytes();
    }
    // Tied: the lm_head view is the embedding's packed copy, counted once.
    if (m->weights.output.data == m->weights.tok_embd.data)
        MT_CHECK(pw.weights().output.data == pw.weights().tok_embd.data);
    MT_COMPARE(pw.packed_bytes(), bytes);
}

MT_TEST(layout_off_keeps_the_loaded_views) {
    LayoutGuard guard;
    kernels::set_panel_layout_enabled(false);
    const LoadedModel* m = panel_model(Shape::Quant, WeightType::Q8_0);
    MT_REQUIRE(m);
    PanelWeights pw(*m, pfx().pool);
    MT_COMPARE(pw.packed_matrices(), 0);
    MT_CHECK(!pw.not_packed_reason().empty());
    const auto a = matrices(m->weights), b = matrices(pw.weights());
    for (size_t i = 0; i < a.size(); ++i) {
        MT_CHECK(a[i]->data == b[i]->data);
        MT_CHECK(b[i]->layout == kernels::WeightLayout::Rows);
    }
}

// Panels and rows: the same greedy predictions and logits within the kernels' rounding (the
// activations are quantized the same way; only the float summation order may differ).
MT_TEST_TABLE(panels_predict_as_rows, PanelTypeRow, panel_type_rows()) {
    LayoutGuard guard;
    const LoadedModel* m = panel_model(Shape::Quant, row.type);
    MT_REQUIRE(m);
    std::vector<std::vector<float>> out;
    for (bool on : {false, true}) {
        kernels::set_panel_layout_enabled(on);
        CpuTransformer tf(*m, pfx().pool);
        MT_REQUIRE((tf.panel_weights().packed_matrices() > 0) == on);
        KvCacheStorage kv(m->config, 8, 16);
        const int32_t V = tf.vocab_size();
        std::vector<int32_t> ids(24);
        for (int i = 0; i < 24; ++i)
            ids[static_cast<size_t>(i)] = (i * 37 + 5) % V;
        const std::vector<int32_t> table = {3, 1};
        ForwardBatch b;
        b.add_sequence(ids, 0, table, 16, ForwardBatch::Logits::All);
        out.push_back(step_logits(tf, kv, b));
    }
    const int64_t V = static_cast<int64_t>(out[0].size()) / 24;
    double md = 0, mr = 0;
    int same_argmax = 0;
    for (int64_t t = 0; t < 24; ++t) {
        const float* a = out[0].data() + t * V;
        const float* b = out[1].data() + t * V;
        for (int64_t i = 0; i < V; ++i) {
            md = std::max(md, static_cast<double>(std::abs(a[i] - b[i])));
            mr = std::max(mr, static_cast<double>(std::abs(a[i])));
        }
        same_argmax += std::max_element(a, a + V) - a == std::max_element(b, b + V) - b;
    }
    std::printf("%s panels vs rows: relative diff %.3g, same argmax %d/24\n", row.name.c_str(),
                md / mr, same_argmax);
    MT_CHECK_MSG(md / mr < 3e-2, "relative diff %g", md / mr);
    MT_CHECK(same_argmax >= 22);
}

// A decode step of sequence A has the same bits alone as beside 1 or 31 other sequences (the
// batched-decode shape), and a prefill's logits do not depend on the chunk sharing its step.
MT_TEST_TABLE(decode_bits_independent_of_the_batch, PanelTypeRow, panel_type_rows()) {
    LayoutGuard guard;
    kernels::set_panel_layout_enabled(true);
    const LoadedModel* m = panel_model(Shape::Quant, row.type);
    MT_REQUIRE(m);
    CpuTransformer tf(*m, pfx().pool);
    const int32_t k = first_batch_that_differs(tf, *m, {2, 7, 32});
    MT_CHECK_MSG(k == 0, "sequence 0 alone vs in a step of %d: the logits differ", k);
}

// BF16 weights with the CPU's bf16 dot products (activations rounded to bf16, kernels/cpu/simd.h)
// against the fp32 path, on a whole model: the log-probabilities the dot gives, per position.
// Printed (the "rounding measured as logprob error"); bounded loosely so that a wrong
// kernel (truncation instead of rounding, a lost column) fails.
MT_TEST(bf16_dot_logprob_error) {
    if (!kernels::bf16_dot_available())
        MT_SKIP("this CPU has no AVX512_BF16 (or the AVX-512 level is off)");
    LayoutGuard guard;
    kernels::set_panel_layout_enabled(true);
    const bool saved = kernels::bf16_dot_enabled();
    const LoadedModel* m = panel_model(Shape::Quant, WeightType::BF16);
    MT_REQUIRE(m);
    const int n = 32;
    std::vector<std::vector<float>> out;
    int32_t V = 0;
    for (bool dot : {false, true}) {
        kernels::set_bf16_dot_enabled(dot);
        CpuTransformer tf(*m, pfx().pool);
        V = tf.vocab_size();
        KvCacheStorage kv(m->config, 4, 16);
        std::vector<int32_t> ids(n);
        for (int i = 0; i < n; ++i)
            ids[static_cast<size_t>(i)] = (i * 53 + 11) % V;
        ForwardBatch b;
        b.add_sequence(ids, 0, std::vector<int32_t>{2, 0}, 16, ForwardBatch::Logits::All);
        out.push_back(step_logits(tf, kv, b));
    }
    kernels::set_bf16_dot_enabled(saved);
    auto log_softmax = [V](const float* z, std::vector<double>& lp) {
        const double mx = *std::max_element(z, z + V);
        double s = 0;
        for (int32_t i = 0; i < V; ++i)
            s += std::exp(static_cast<double>(z[i]) - mx);
        lp.resize(static_cast<size_t>(V));
        for (int32_t i = 0; i < V; ++i)
            lp[static_cast<size_t>(i)] = static_cast<double>(z[i]) - mx - std::log(s);
    };
    double worst_top = 0, mean_top = 0, worst_any = 0;
    std::vector<double> a, b;
    for (int t = 0; t < n; ++t) {
        log_softmax(out[0].data() + static_cast<size_t>(t) * V, a);
        log_softmax(out[1].data() + static_cast<size_t>(t) * V, b);
        const auto top = static_cast<size_t>(std::max_element(a.begin(), a.end()) - a.begin());
        worst_top = std::max(worst_top, std::abs(a[top] - b[top]));
        mean_top += std::abs(a[top] - b[top]) / n;
        for (size_t i = 0; i < a.size(); ++i)
            worst_any = std::max(worst_any, std::abs(a[i] - b[i]));
    }
    std::printf("bf16 dot vs fp32 path: |logprob error| of the fp32 top token mean %.3g, max %.3g; "
                "max over the vocabulary %.3g\n",
                mean_top, worst_top, worst_any);
    MT_CHECK(worst_top < 0.05);
    MT_CHECK(worst_any > 0.0); // the dot was in use: activations rounded to bf16 change the bits
}

// --dtype bfloat16: the F32 / F16 matrices cast to BF16 as they are packed. Every value of the
// packed copy is the source value rounded to nearest even (one rounding, from the exact stored
// value), the tied lm_head still shares the embedding's copy, the bytes are counted.
struct CastRow {
    std::string name;
    WeightType type;
    DType dtype;
};
MT_TEST_TABLE(cast_to_bf16_rounds_every_float_weight, CastRow,
              (std::vector<CastRow>{{"f16", WeightType::F16, DType::F16},
                                    {"f32", WeightType::F32, DType::F32}})) {
    LayoutGuard guard;
    kernels::set_panel_layout_enabled(true);
    const LoadedModel* m = panel_model(Shape::Quant, row.type);
    MT_REQUIRE(m);
    PanelWeights pw(*m, pfx().pool, DType::BF16);
    MT_CHECK(pw.not_packed_reason().empty());
    MT_CHECK(pw.not_cast_reason().empty());
    MT_CHECK(pw.uncast().empty());
    const std::vector<const TensorView*> loaded = matrices(m->weights);
    const std::vector<const TensorView*> packed = matrices(pw.weights());
    int32_t n_cast = 0;
    int64_t src_bytes = 0, cast_bytes = 0;
    std::vector<uint16_t> got;
    for (size_t i = 0; i < loaded.size(); ++i) {
        const TensorView& a = *loaded[i];
        const TensorView& b = *packed[i];
        if (!a.present())
            continue;
        MT_SCOPE("%s", a.name.c_str());
        MT_REQUIRE(a.type == row.dtype);
        MT_CHECK(b.type == DType::BF16);
        MT_CHECK(b.layout == kernels::WeightLayout::Panels);
        got.resize(static_cast<size_t>(a.cols));
        for (int64_t r = 0; r < a.rows; ++r) {
            kernels::copy_weight_row(matrix_of(b), r, reinterpret_cast<uint8_t*>(got.data()));
            const uint8_t* src = a.row(r);
            for (int64_t c = 0; c < a.cols; ++c) {
                float v;
                if (a.type == DType::F16) {
                    uint16_t h;
                    std::memcpy(&h, src + 2 * c, 2);
                    v = kernels::fp16_to_fp32(h);
                } else {
                    std::memcpy(&v, src + 4 * c, 4);
                }
                MT_REQUIRE_MSG(got[static_cast<size_t>(c)] == kernels::fp32_to_bf16(v),
                               "row %lld column %lld", static_cast<long long>(r),
                               static_cast<long long>(c));
            }
        }
        if (i == 1 && a.data == m->weights.tok_embd.data)
            continue; // tied: the embedding's copy
        ++n_cast;
        src_bytes += a.rows * a.row_bytes();
        cast_bytes += a.rows * dtype_row_bytes(DType::BF16, a.cols);
    }
    if (m->weights.output.data == m->weights.tok_embd.data)
        MT_CHECK(pw.weights().output.data == pw.weights().tok_embd.data);
    MT_COMPARE(pw.cast_matrices(), n_cast);
    MT_COMPARE(pw.cast_source_bytes(), src_bytes);
    MT_COMPARE(pw.cast_bytes(), cast_bytes);
    MT_COMPARE(pw.packed_bytes(), cast_bytes);
    // F16 -> BF16 keeps the size; F32 -> BF16 halves it.
    MT_COMPARE(cast_bytes * (row.dtype == DType::F32 ? 2 : 1), src_bytes);
}

// A cast model runs: its logits stay within the bf16 rounding of the uncast model's, and a
// sequence's decode logits have the same bits alone or beside 31 others (the BF16 kernels'
// batch invariance, which speculative decoding relies on, holds for cast weights too).
MT_TEST(cast_model_runs_close_and_batch_invariant) {
    LayoutGuard guard;
    kernels::set_panel_layout_enabled(true);
    const LoadedModel* m = panel_model(Shape::Quant, WeightType::F16);
    MT_REQUIRE(m);
    const int n = 24;
    std::vector<std::vector<float>> out;
    int32_t V = 0;
    for (bool cast : {false, true}) {
        CpuTransformer tf(*m, pfx().pool, cast ? std::optional<DType>(DType::BF16) : std::nullopt);
        MT_COMPARE(tf.panel_weights().cast_matrices() > 0, cast);
        V = tf.vocab_size();
        KvCacheStorage kv(m->config, 4, 16);
        std::vector<int32_t> ids(n);
        for (int i = 0; i < n; ++i)
            ids[static_cast<size_t>(i)] = (i * 37 + 5) % V;
        ForwardBatch b;
        b.add_sequence(ids, 0, std::vector<int32_t>{3, 1}, 16, ForwardBatch::Logits::All);
        out.push_back(step_logits(tf, kv, b));
    }
    double md = 0, mr = 0;
    int same_argmax = 0;
    for (int t = 0; t < n; ++t) {
        const float* a = out[0].data() + static_cast<size_t>(t) * V;
        const float* b = out[1].data() + static_cast<size_t>(t) * V;
        for (int32_t i = 0; i < V; ++i) {
            md = std::max(md, static_cast<double>(std::abs(a[i] - b[i])));
            mr = std::max(mr, static_cast<double>(std::abs(a[i])));
        }
        same_argmax += std::max_element(a, a + V) - a == std::max_element(b, b + V) - b;
    }
    std::printf("f16 cast to bf16 vs as stored: relative diff %.3g, same argmax %d/%d\n", md / mr,
                same_argmax, n);
    MT_CHECK(md > 0.0); // the weights were rounded
    MT_CHECK_MSG(md / mr < 3e-2, "relative diff %g", md / mr);
    MT_CHECK(same_argmax >= n - 2);

    CpuTransformer tf(*m, pfx().pool, DType::BF16);
    const int32_t k = first_batch_that_differs(tf, *m, {32});
    MT_CHECK_MSG(k == 0, "sequence 0 alone vs in a step of %d: the logits differ", k);
}

// The layout off: nothing is packed, so nothing is cast (open_backend turns this into an error
// for --dtype bfloat16; here the views stay the loaded F16 ones).
MT_TEST(cast_needs_the_panel_layout) {
    LayoutGuard guard;
    kernels::set_panel_layout_enabled(false);
    const LoadedModel* m = panel_model(Shape::Quant, WeightType::F16);
    MT_REQUIRE(m);
    PanelWeights pw(*m, pfx().pool, DType::BF16);
    MT_COMPARE(pw.cast_matrices(), 0);
    MT_CHECK(!pw.not_packed_reason().empty());
    MT_CHECK(pw.not_cast_reason() == pw.not_packed_reason());
    MT_CHECK(pw.weights().tok_embd.type == DType::F16);
}
