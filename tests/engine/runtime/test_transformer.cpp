// The CPU forward pass against the plain double-precision reference (reference_model.h), over
// paged KV with scattered block tables, several block sizes, architectures, file formats and
// weight types; batched prefill vs token-by-token decode; a varlen batch of two sequences.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/forward_batch.h"
#include "engine/runtime/kv_cache_storage.h"
#include "engine/runtime/perplexity.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/weight_layout.h"
#include "reference_model.h"
#include "runtime_test_models.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::test;

namespace {

// max |got - ref| / max |ref|
double rel_diff(const float* got, const std::vector<double>& ref) {
    double md = 0, mr = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        md = std::max(md, std::abs(static_cast<double>(got[i]) - ref[i]));
        mr = std::max(mr, std::abs(ref[i]));
    }
    return mr > 0 ? md / mr : md;
}

std::vector<int32_t> make_prompt(int n, int32_t vocab, uint32_t seed) {
    std::vector<int32_t> ids(n);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; i < n; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        ids[i] = static_cast<int32_t>((s >> 33) % static_cast<uint64_t>(vocab));
    }
    return ids;
}

// Blocks of a sequence taken from the end of the pool backwards, so tables are never 0,1,2...
std::vector<int32_t> scattered_blocks(int32_t count, int32_t num_blocks, int32_t stride) {
    std::vector<int32_t> t;
    for (int32_t i = 0; i < count; ++i)
        t.push_back((num_blocks - 1 - i * stride) % num_blocks);
    return t;
}

// What the Qt test object held: the models written so far (one per shape, format and weight
// type), in a temporary directory, and the thread pool.
struct Fixture {
    mini_test::TempDir dir;
    std::map<std::string, std::unique_ptr<LoadedModel>> models;
    kernels::ThreadPool pool{2};
};

Fixture& fx() {
    static Fixture f;
    return f;
}

const LoadedModel* model(Shape shape, ModelFileFormat format, WeightType type) {
    Fixture& f = fx();
    MT_REQUIRE(f.dir.valid());
    const std::string key =
        mini_test::format("%d-%s-%s", static_cast<int>(shape),
                          format == ModelFileFormat::Gguf ? "gguf" : "st", weight_type_name(type));
    auto it = f.models.find(key);
    if (it != f.models.end())
        return it->second.get();
    std::string err;
    auto m = write_and_load(spec_for(shape, format, type), f.dir.path(), key, &err);
    if (!m) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return nullptr;
    }
    return (f.models[key] = std::move(m)).get();
}

// Prefill `n_prompt` tokens (all-row logits), then `n_decode` decode steps, on a scattered
// block table; returns the worst relative difference to the reference over all rows.
double run_vs_reference(const LoadedModel& m, int32_t block_size, int n_prompt, int n_decode) {
    CpuTransformer tf(m, fx().pool);
    const int32_t num_blocks = (n_prompt + n_decode) / block_size + 4;
    KvCacheStorage kv(m.config, num_blocks, block_size);
    const std::vector<int32_t> table =
        scattered_blocks((n_prompt + n_decode + block_size - 1) / block_size, num_blocks, 1);
    ReferenceModel ref(m);
    const int32_t V = tf.vocab_size();
    std::vector<int32_t> ids = make_prompt(n_prompt, V, 7);

    ForwardBatch batch;
    batch.add_sequence(ids, 0, table, block_size, ForwardBatch::Logits::All);
    if (Status st = batch.validate(block_size, num_blocks); !st)
        MT_FAIL(st.message());
    std::vector<float> logits(static_cast<size_t>(n_prompt) * V);
    tf.forward(batch, kv, logits.data());
    double worst = 0;
    std::vector<double> r;
    for (int i = 0; i < n_prompt; ++i) {
        r = ref.step(ids[i]);
        worst = std::max(worst, rel_diff(logits.data() + static_cast<size_t>(i) * V, r));
    }
    for (int s = 0; s < n_decode; ++s) {
        // Next token: the reference's argmax (a plausible continuation).
        const auto next = static_cast<int32_t>(std::max_element(r.begin(), r.end()) - r.begin());
        ids.push_back(next);
        batch.clear();
        batch.add_sequence(std::span<const int32_t>(&ids.back(), 1),
                           static_cast<int32_t>(ids.size() - 1), table, block_size,
                           ForwardBatch::Logits::Last);
        tf.forward(batch, kv, logits.data());
        r = ref.step(next);
        worst = std::max(worst, rel_diff(logits.data(), r));
    }
    return worst;
}

struct ForwardRow {
    std::string name;
    Shape shape;
    ModelFileFormat format;
    int block_size;
};
std::vector<ForwardRow> forward_rows() {
    std::vector<ForwardRow> rows;
    const std::pair<const char*, Shape> shapes[] = {{"llama", Shape::Llama},
                                                    {"llama3-rope", Shape::Llama3Rope},
                                                    {"qwen2", Shape::Qwen2},
                                                    {"qwen3", Shape::Qwen3}};
    for (auto [name, shape] : shapes)
        for (auto [fname, format] : {std::pair{"gguf", ModelFileFormat::Gguf},
                                     std::pair{"safetensors", ModelFileFormat::Safetensors}})
            for (int bs : {8, 16, 32})
                rows.push_back(
                    {mini_test::format("%s-%s-bs%d", name, fname, bs), shape, format, bs});
    return rows;
}

struct TypeRow {
    std::string name;
    WeightType type;
    double tolerance;
};
std::vector<TypeRow> quantized_rows() {
    // Float weights: fp32 activations, tight. Integer types quantize the activations to
    // 8 bits per block, so they differ from the exact product by ~1e-3..1e-2.
    return {{"f16", WeightType::F16, 1e-4},      {"bf16", WeightType::BF16, 1e-4},
            {"q8_0", WeightType::Q8_0, 3e-2},    {"q4_0", WeightType::Q4_0, 3e-2},
            {"q4_k", WeightType::Q4_K, 3e-2},    {"q6_k", WeightType::Q6_K, 3e-2},
            {"q4_k_m", WeightType::Q4_K_M, 3e-2}};
}
std::vector<TypeRow> batched_rows() {
    return {{"f32", WeightType::F32, 1e-5},
            {"f16", WeightType::F16, 1e-5},
            // Integer types: the matrix-matrix and matrix-vector kernels sum blocks in a
            // different order; a 1e-7 difference that moves an 8-bit activation across a
            // rounding boundary downstream shows up as ~1e-3..1e-2. Same bound as against the
            // reference.
            {"q8_0", WeightType::Q8_0, 3e-2},
            {"q4_k", WeightType::Q4_K, 3e-2}};
}

struct ShapeRow {
    std::string name;
    Shape shape;
};
std::vector<ShapeRow> shape_rows() {
    // llama: interleaved RoPE on permuted Q/K rows vs rotate-half; llama3: rope_freqs
    // tensor vs config rope_scaling; qwen2/qwen3: rotate-half in both.
    return {{"llama", Shape::Llama},
            {"llama3-rope", Shape::Llama3Rope},
            {"qwen2", Shape::Qwen2},
            {"qwen3", Shape::Qwen3}};
}

struct CorruptionRow {
    std::string name;
    int corruption;
    std::string keyword;
};
std::vector<CorruptionRow> corruption_rows() {
    return {{"valid", 0, ""},
            {"slot", 1, "slot"},
            {"position", 2, "position"},
            {"block id", 3, "out of range"},
            {"context", 4, "exceeds"},
            {"logits row", 5, "logits row"},
            {"lengths", 6, "length"}};
}

} // namespace

MT_TEST_TABLE(forward_matches_reference, ForwardRow, forward_rows()) {
    const LoadedModel* m = model(row.shape, row.format, WeightType::F32);
    MT_REQUIRE(m);
    // 41 prompt tokens end mid-block for 8, 16 and 32; 6 decode steps cross a boundary.
    const double d = run_vs_reference(*m, row.block_size, 41, 6);
    MT_REQUIRE_MSG(d < 1e-4, "relative diff %g", d);
}

MT_TEST_TABLE(quantized_matches_reference, TypeRow, quantized_rows()) {
    const WeightType type = row.type;
    // BF16 weights on a CPU with bf16 dot products (kernels/cpu/simd.h; panel layout) round the
    // activations to bf16 too: ~5e-3 relative here (8-bit mantissas), so the bound is the
    // integer types'.
    const bool bf16_dot = kernels::bf16_dot_active() && kernels::panel_layout_enabled();
    const double tolerance = type == WeightType::BF16 && bf16_dot ? 3e-2 : row.tolerance;
    const LoadedModel* m = model(Shape::Quant, ModelFileFormat::Gguf, type);
    MT_REQUIRE(m);
    // The shape fits every block size, so the requested type is really used.
    const std::map<WeightType, DType> stored = {
        {WeightType::F16, DType::F16},   {WeightType::BF16, DType::BF16},
        {WeightType::Q8_0, DType::Q8_0}, {WeightType::Q4_0, DType::Q4_0},
        {WeightType::Q4_K, DType::Q4_K}, {WeightType::Q6_K, DType::Q6_K}};
    if (stored.count(type)) {
        MT_REQUIRE_COMPARE(m->weights.layers[0].wq.type, stored.at(type));
        MT_REQUIRE_COMPARE(m->weights.layers[1].w_down.type, stored.at(type));
    }
    const double d = run_vs_reference(*m, 16, 37, 4);
    std::printf("%s: relative diff %.3g\n", weight_type_name(type), d);
    MT_REQUIRE_MSG(d < tolerance, "relative diff %g", d);
}

MT_TEST_TABLE(gguf_equals_safetensors, ShapeRow, shape_rows()) {
    const Shape shape = row.shape;
    const LoadedModel* g = model(shape, ModelFileFormat::Gguf, WeightType::F32);
    const LoadedModel* s = model(shape, ModelFileFormat::Safetensors, WeightType::F32);
    MT_REQUIRE(g && s);
    if (shape == Shape::Llama || shape == Shape::Llama3Rope) {
        MT_REQUIRE_COMPARE(g->config.rope_style, RopeStyle::Interleaved);
        MT_REQUIRE_COMPARE(s->config.rope_style, RopeStyle::RotateHalf);
    }
    if (shape == Shape::Llama3Rope)
        MT_REQUIRE(g->weights.rope_freqs.present());
    std::vector<std::vector<float>> out[2];
    const LoadedModel* ms[2] = {g, s};
    for (int k = 0; k < 2; ++k) {
        CpuTransformer tf(*ms[k], fx().pool);
        KvCacheStorage kv(ms[k]->config, 8, 16);
        std::vector<int32_t> table = {3, 1, 6, 0};
        std::vector<int32_t> ids = make_prompt(50, tf.vocab_size(), 3);
        ForwardBatch b;
        b.add_sequence(ids, 0, table, 16, ForwardBatch::Logits::All);
        std::vector<float> logits(ids.size() * tf.vocab_size());
        tf.forward(b, kv, logits.data());
        for (size_t i = 0; i < ids.size(); ++i)
            out[k].emplace_back(logits.begin() + i * tf.vocab_size(),
                                logits.begin() + (i + 1) * tf.vocab_size());
    }
    double worst = 0;
    for (size_t i = 0; i < out[0].size(); ++i) {
        std::vector<double> r(out[1][i].begin(), out[1][i].end());
        worst = std::max(worst, rel_diff(out[0][i].data(), r));
    }
    std::printf("gguf vs safetensors: relative diff %.3g\n", worst);
    MT_REQUIRE_MSG(worst < 1e-5, "relative diff %g", worst);
}

MT_TEST_TABLE(batched_prefill_equals_token_by_token, TypeRow, batched_rows()) {
    const WeightType type = row.type;
    const double tolerance = row.tolerance;
    const LoadedModel* m = model(Shape::Quant, ModelFileFormat::Gguf, type);
    MT_REQUIRE(m);
    CpuTransformer tf(*m, fx().pool);
    const int32_t V = tf.vocab_size();
    const int n = 40;
    std::vector<int32_t> ids = make_prompt(n, V, 11);
    std::vector<int32_t> table = {2, 0, 3};
    KvCacheStorage kv_a(m->config, 4, 16), kv_b(m->config, 4, 16);

    ForwardBatch b;
    b.add_sequence(ids, 0, table, 16, ForwardBatch::Logits::All);
    std::vector<float> batched(static_cast<size_t>(n) * V);
    tf.forward(b, kv_a, batched.data());

    std::vector<float> one(V);
    double worst = 0;
    for (int i = 0; i < n; ++i) {
        b.clear();
        b.add_sequence(std::span<const int32_t>(&ids[i], 1), i, table, 16,
                       ForwardBatch::Logits::Last);
        tf.forward(b, kv_b, one.data());
        std::vector<double> r(one.begin(), one.end());
        worst = std::max(worst, rel_diff(batched.data() + static_cast<size_t>(i) * V, r));
    }
    std::printf("%s batched vs token-by-token: relative diff %.3g\n", weight_type_name(type),
                worst);
    MT_REQUIRE_MSG(worst < tolerance, "relative diff %g", worst);
}

// Two sequences in one varlen batch, then a mixed step (one decode token + a prefill chunk),
// each checked against its own reference run.
MT_TEST(varlen_batch_of_two_sequences) {
    const LoadedModel* m = model(Shape::Qwen3, ModelFileFormat::Gguf, WeightType::F32);
    MT_REQUIRE(m);
    CpuTransformer tf(*m, fx().pool);
    const int32_t V = tf.vocab_size(), bs = 8;
    KvCacheStorage kv(m->config, 12, bs);
    const std::vector<int32_t> ta = {5, 2, 9, 11}, tb = {0, 7, 3, 10, 1};
    std::vector<int32_t> a = make_prompt(21, V, 1), b = make_prompt(30, V, 2);
    ReferenceModel ra(*m), rb(*m);

    ForwardBatch batch;
    batch.add_sequence(std::span(a).first(20), 0, ta, bs, ForwardBatch::Logits::Last);
    batch.add_sequence(std::span(b).first(13), 0, tb, bs, ForwardBatch::Logits::All);
    MT_REQUIRE(batch.validate(bs, kv.num_blocks()).ok());
    MT_REQUIRE_COMPARE(batch.max_blocks_per_seq, 5);
    std::vector<float> logits(14 * static_cast<size_t>(V));
    tf.forward(batch, kv, logits.data());
    std::vector<double> r;
    for (int i = 0; i < 20; ++i)
        r = ra.step(a[i]);
    MT_REQUIRE(rel_diff(logits.data(), r) < 1e-4);
    for (int i = 0; i < 13; ++i) {
        r = rb.step(b[i]);
        MT_REQUIRE_MSG(rel_diff(logits.data() + static_cast<size_t>(1 + i) * V, r) < 1e-4, "row %d",
                       i);
    }

    batch.clear();
    batch.add_sequence(std::span(a).subspan(20, 1), 20, ta, bs, ForwardBatch::Logits::Last);
    batch.add_sequence(std::span(b).subspan(13, 17), 13, tb, bs, ForwardBatch::Logits::Last);
    MT_REQUIRE(batch.validate(bs, kv.num_blocks()).ok());
    tf.forward(batch, kv, logits.data());
    r = ra.step(a[20]);
    MT_REQUIRE(rel_diff(logits.data(), r) < 1e-4);
    for (int i = 13; i < 30; ++i)
        r = rb.step(b[i]);
    MT_REQUIRE(rel_diff(logits.data() + V, r) < 1e-4);
}

MT_TEST(perplexity_matches_reference) {
    const LoadedModel* m = model(Shape::Llama, ModelFileFormat::Gguf, WeightType::F32);
    MT_REQUIRE(m);
    CpuTransformer tf(*m, fx().pool);
    KvCacheStorage kv(m->config, 8, 16);
    std::vector<int32_t> ids = make_prompt(45, tf.vocab_size(), 5);
    PerplexityOptions opt;
    opt.chunk = 16; // 3 chunks
    auto res = perplexity(tf, kv, ids, opt);
    MT_REQUIRE_MSG(res.ok(), "%s", res.ok() ? "" : res.message().c_str());
    MT_REQUIRE_COMPARE(res->logprobs.size(), ids.size() - 1);
    ReferenceModel ref(*m);
    double sum = 0;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
        std::vector<double> r = ref.step(ids[i]);
        double mx = *std::max_element(r.begin(), r.end()), z = 0;
        for (double v : r)
            z += std::exp(v - mx);
        const double lp = r[ids[i + 1]] - mx - std::log(z);
        sum += lp;
        MT_REQUIRE_MSG(std::abs(res->logprobs[i] - lp) < 1e-4, "token %zu: %g vs %g", i,
                       static_cast<double>(res->logprobs[i]), lp);
    }
    MT_REQUIRE(std::abs(res->ppl - std::exp(-sum / (ids.size() - 1))) < 1e-3 * res->ppl);

    auto too_short = perplexity(tf, kv, std::span(ids).first(1));
    MT_REQUIRE(!too_short.ok());
    MT_REQUIRE(too_short.message().find("at least 2") != std::string::npos);
    std::vector<int32_t> bad = {1, tf.vocab_size()};
    MT_REQUIRE(!perplexity(tf, kv, bad).ok());
    std::vector<int32_t> long_ids = make_prompt(129, tf.vocab_size(), 9); // > 8 * 16 slots
    auto too_long = perplexity(tf, kv, long_ids);
    MT_REQUIRE(!too_long.ok());
    MT_REQUIRE(too_long.message().find("context") != std::string::npos);
}

MT_TEST_TABLE(forward_batch_validate, CorruptionRow, corruption_rows()) {
    const int corruption = row.corruption;
    const std::string& keyword = row.keyword;
    ForwardBatch b;
    const std::vector<int32_t> t = {1, 2, 3}, blocks = {4, 1, 3};
    b.add_sequence(t, 14, blocks, 8, ForwardBatch::Logits::Last); // positions 14..16
    MT_REQUIRE_COMPARE(b.slot_mapping[0], int64_t{1 * 8 + 6});    // position 14: block 1, offset 6
    MT_REQUIRE_COMPARE(b.slot_mapping[2], int64_t{3 * 8 + 0});    // position 16: block 3, offset 0
    MT_REQUIRE_COMPARE(b.context_lens[0], 17);
    MT_REQUIRE_COMPARE(b.logits_rows, std::vector<int32_t>{2});
    switch (corruption) {
    case 1:
        b.slot_mapping[1] += 1;
        break;
    case 2:
        b.positions[1] = 3;
        break;
    case 3:
        b.block_tables[2] = 7;
        break;
    case 4:
        b.context_lens[0] = 25;
        break;
    case 5:
        b.logits_rows.push_back(3);
        break;
    case 6:
        b.positions.pop_back();
        break;
    }
    Status st = b.validate(8, 5);
    if (corruption == 0) {
        MT_REQUIRE_MSG(st.ok(), "%s", st.ok() ? "" : st.message().c_str());
    } else {
        MT_REQUIRE(!st.ok());
        MT_REQUIRE_MSG(st.message().find(keyword) != std::string::npos, "%s", st.message().c_str());
    }
}

MT_TEST(kv_cache_storage) {
    ModelConfig c;
    c.num_layers = 3;
    c.num_kv_heads = 2;
    c.head_dim = 16;
    MT_REQUIRE_COMPARE(KvCacheStorage::bytes_per_block(c, 16), int64_t{2 * 3 * 2 * 16 * 16 * 4});
    auto kv = KvCacheStorage::create(c, 10, 16);
    MT_REQUIRE(kv.ok());
    MT_REQUIRE_COMPARE((*kv)->total_bytes(), 10 * KvCacheStorage::bytes_per_block(c, 16));
    MT_REQUIRE_COMPARE((*kv)->v_slot(2, 17) - (*kv)->v(2), std::ptrdiff_t{17 * 32});
    auto bad = KvCacheStorage::create(c, 10, 12);
    MT_REQUIRE(!bad.ok());
    MT_REQUIRE(bad.message().find("block_size") != std::string::npos);
    MT_REQUIRE(!KvCacheStorage::create(c, 0, 16).ok());

    SequenceBlocks sb(16, 3);
    MT_REQUIRE(sb.reserve(17));
    MT_REQUIRE_COMPARE(sb.table().size(), size_t{2});
    MT_REQUIRE(sb.reserve(48));
    MT_REQUIRE(!sb.reserve(49));
}

// The pool is committed lazily: a Qwen2.5-0.5B-shaped pool of 4 x 32k tokens (3 GiB of fp32
// slots) costs no RAM until blocks are written, and writing one block commits about one block.
// (The issue: opening a 500 MB model made the app's RSS 11.9 GB.)
MT_TEST(kv_pool_commits_memory_as_blocks_fill) {
    ModelConfig c;
    c.num_layers = 24;
    c.num_kv_heads = 2;
    c.head_dim = 64;
    const int64_t before = resident_memory_bytes();
    MT_REQUIRE(before > 0);
    auto kv = KvCacheStorage::create(c, 8192, 16);
    MT_REQUIRE(kv.ok());
    MT_REQUIRE_COMPARE((*kv)->total_bytes(), int64_t{3} << 30);
    const int64_t reserved = resident_memory_bytes() - before;
    MT_CHECK_MSG(reserved < (int64_t{16} << 20), "reserving committed %lld bytes",
                 static_cast<long long>(reserved));
    // Unwritten slots read as zeros (reading does not need to commit a private copy either).
    MT_CHECK((*kv)->k_slot(23, 8192 * 16 - 1)[0] == 0.0f);
    // Block 100 of every layer, K and V: 384 KiB in all.
    for (int32_t l = 0; l < c.num_layers; ++l)
        for (int64_t slot = 1600; slot < 1616; ++slot) {
            std::fill_n((*kv)->k_slot(l, slot), 128, 1.0f);
            std::fill_n((*kv)->v_slot(l, slot), 128, 2.0f);
        }
    const int64_t written = resident_memory_bytes() - before;
    MT_CHECK_MSG(written >= KvCacheStorage::bytes_per_block(c, 16) / 2 &&
                     written < (int64_t{32} << 20),
                 "one block written: %lld bytes resident", static_cast<long long>(written));
    MT_CHECK((*kv)->v_slot(5, 1605)[7] == 2.0f);
}

MINI_TEST_MAIN()
