// phi3 on the CPU: the forward pass against a double-precision reference written from
// transformers' modeling_phi3.py (reference_phi3.h), in both file formats, with LongRoPE (short
// and long factor sets), partial rotary and a sliding window; the factor-set rule (one set per
// loaded model: long when the context exceeds the original one) and its independence of what
// shares a batch; the loaders' config and fused weights; broken config.json files.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "../model/gguf_image.h"
#include "engine/model/arch_phi3.h"
#include "engine/model/loaded_model.h"
#include "engine/model/weight_plan.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/forward_batch.h"
#include "engine/runtime/kv_cache_storage.h"
#include "engine/runtime/rope.h"
#include "kernels/cpu/thread_pool.h"
#include "reference_phi3.h"
#include "runtime_test_models.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::test;

namespace {

enum class Variant {
    LongRopeShort, // context == original: the short set; attention factor given (1.1)
    LongRopeLong,  // context > original: the long set; default attention factor
    PartialLong,   // partial rotary (12 of 16 dims, as phi-4-mini's 0.75) + long set
    Window,        // no scaling, partial rotary 8 of 16, sliding window 7
};

constexpr int kOriginal = 32;

ModelWriterSpec phi3_spec(Variant v, ModelFileFormat format) {
    ModelWriterSpec s;
    s.arch = Architecture::Phi3;
    s.format = format;
    s.seed = 4321;
    s.hidden_size = 64;
    s.intermediate_size = 96;
    s.num_layers = 2;
    s.num_heads = 4;
    s.num_kv_heads = 2; // head_dim 16
    s.rope_theta = 10000.0f;
    s.rms_norm_eps = 1e-5f;
    s.max_position = 4096;
    // The seeded random weights, with larger embeddings and q/k/v (std 0.3 and 0.16 instead
    // of 0.02) so that attention is far from uniform and RoPE differences show in the logits.
    s.tensor_values = [seed = s.seed](const std::string& name, int64_t a, int64_t b, int64_t cols,
                                      float* out) {
        generate_rows(seed, name, a, b, cols, out);
        const bool big = name == "model.embed_tokens.weight" || name == "lm_head.weight";
        const float k = big ? 15.0f : name.find("qkv_proj") != std::string::npos ? 8.0f : 1.0f;
        for (int64_t i = 0; i < (b - a) * cols; ++i)
            out[i] *= k;
    };
    auto longrope = [&](int rot) {
        s.rope_scaling.kind = RopeScaling::Kind::LongRope;
        s.rope_scaling.original_max_position = kOriginal;
        s.rope_scaling.short_factor.clear();
        s.rope_scaling.long_factor.clear();
        for (int i = 0; i < rot / 2; ++i) {
            s.rope_scaling.short_factor.push_back(1.0f + 0.05f * float(i));
            s.rope_scaling.long_factor.push_back(1.0f + 1.5f * float(i * i));
        }
        s.rope_scaling.attention_factor = 0.0f; // default from the positions
    };
    switch (v) {
    case Variant::LongRopeShort:
        s.max_position = kOriginal;
        longrope(16);
        s.rope_scaling.attention_factor = 1.1f;
        break;
    case Variant::LongRopeLong:
        longrope(16);
        break;
    case Variant::PartialLong:
        s.rotary_dim = 12;
        longrope(12);
        break;
    case Variant::Window:
        s.rotary_dim = 8;
        s.sliding_window = 7;
        break;
    }
    return s;
}

const char* variant_name(Variant v) {
    switch (v) {
    case Variant::LongRopeShort:
        return "longrope-short";
    case Variant::LongRopeLong:
        return "longrope-long";
    case Variant::PartialLong:
        return "partial-long";
    case Variant::Window:
        return "window";
    }
    return "?";
}

struct Fixture {
    mini_test::TempDir dir;
    std::map<std::string, std::unique_ptr<LoadedModel>> models;
    kernels::ThreadPool pool{2};
};

Fixture& fx() {
    static Fixture f;
    return f;
}

const LoadedModel* model(Variant v, ModelFileFormat format) {
    Fixture& f = fx();
    MT_REQUIRE(f.dir.valid());
    const std::string key = mini_test::format("phi3-%s-%s", variant_name(v),
                                              format == ModelFileFormat::Gguf ? "gguf" : "st");
    auto it = f.models.find(key);
    if (it != f.models.end())
        return it->second.get();
    std::string err;
    auto m = write_and_load(phi3_spec(v, format), f.dir.path(), key, &err);
    if (!m) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return nullptr;
    }
    return (f.models[key] = std::move(m)).get();
}

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

// Logits of every position of `ids` (prefill of all but the last 4, then 4 decode steps) on
// a scattered block table.
std::vector<std::vector<float>> engine_logits(const LoadedModel& m, const std::vector<int32_t>& ids,
                                              int32_t bs) {
    CpuTransformer tf(m, fx().pool);
    const int32_t n = int32_t(ids.size()), V = tf.vocab_size();
    const int32_t nb = n / bs + 4;
    KvCacheStorage kv(m.config, nb, bs);
    std::vector<int32_t> table;
    for (int32_t i = 0; i < (n + bs - 1) / bs; ++i)
        table.push_back(nb - 1 - i);
    const int32_t prefill = n - 4;
    ForwardBatch b;
    b.add_sequence(std::span(ids).first(prefill), 0, table, bs, ForwardBatch::Logits::All);
    MT_REQUIRE(b.validate(bs, nb).ok());
    std::vector<float> logits(size_t(prefill) * V);
    tf.forward(b, kv, logits.data());
    std::vector<std::vector<float>> out;
    for (int32_t i = 0; i < prefill; ++i)
        out.emplace_back(logits.begin() + size_t(i) * V, logits.begin() + size_t(i + 1) * V);
    for (int32_t p = prefill; p < n; ++p) {
        b.clear();
        b.add_sequence(std::span(ids).subspan(size_t(p), 1), p, table, bs,
                       ForwardBatch::Logits::Last);
        tf.forward(b, kv, logits.data());
        out.emplace_back(logits.begin(), logits.begin() + V);
    }
    return out;
}

double worst_vs_reference(const std::vector<std::vector<float>>& got, ReferencePhi3& ref,
                          const std::vector<int32_t>& ids) {
    double worst = 0;
    for (size_t i = 0; i < ids.size(); ++i)
        worst = std::max(worst, rel_diff(got[i].data(), ref.step(ids[i])));
    return worst;
}

struct ForwardRow {
    std::string name;
    Variant variant;
    ModelFileFormat format;
    int block_size;
};
std::vector<ForwardRow> forward_rows() {
    std::vector<ForwardRow> rows;
    for (Variant v :
         {Variant::LongRopeShort, Variant::LongRopeLong, Variant::PartialLong, Variant::Window})
        for (auto [fname, format] : {std::pair{"gguf", ModelFileFormat::Gguf},
                                     std::pair{"safetensors", ModelFileFormat::Safetensors}})
            for (int bs : {8, 16})
                rows.push_back(
                    {mini_test::format("%s-%s-bs%d", variant_name(v), fname, bs), v, format, bs});
    return rows;
}

struct VariantRow {
    std::string name;
    Variant variant;
};
std::vector<VariantRow> variant_rows() {
    std::vector<VariantRow> rows;
    for (Variant v :
         {Variant::LongRopeShort, Variant::LongRopeLong, Variant::PartialLong, Variant::Window})
        rows.push_back({variant_name(v), v});
    return rows;
}

// A saved copy of a model's config.json, edited, in a fresh folder next to the model.
std::string edited_folder(const LoadedModel& m, const std::string& name,
                          const std::function<void(nlohmann::json&)>& edit) {
    namespace fs = std::filesystem;
    const fs::path out = fs::path(fx().dir.path()) / name;
    fs::remove_all(out);
    fs::copy(m.path, out, fs::copy_options::recursive);
    nlohmann::json j;
    std::ifstream(out / "config.json") >> j;
    edit(j);
    std::ofstream(out / "config.json", std::ios::trunc) << j.dump(2);
    return out.string();
}

} // namespace

// Prompt 28 + 4 decode steps (the short-set model's whole context, 32) or 40 + 4 (crossing the
// original context of 32) against the reference rotating with the set the rule names; the
// other set's reference differs, so a wrong choice fails.
MT_TEST_TABLE(phi3_forward_matches_reference, ForwardRow, forward_rows()) {
    const LoadedModel* m = model(row.variant, row.format);
    MT_REQUIRE(m);
    const ModelConfig& c = m->config;
    MT_REQUIRE_COMPARE(c.rope_style, RopeStyle::RotateHalf);
    const bool longrope = c.rope_scaling.kind == RopeScaling::Kind::LongRope;
    const bool want_long =
        row.variant == Variant::LongRopeLong || row.variant == Variant::PartialLong;
    MT_REQUIRE_COMPARE(longrope_uses_long_factors(c), want_long);
    const int n = row.variant == Variant::LongRopeShort ? 32 : 44;
    const std::vector<int32_t> ids = make_prompt(n, c.vocab_size, 5);
    const auto got = engine_logits(*m, ids, row.block_size);
    const auto set = want_long ? ReferencePhi3::FactorSet::Long : ReferencePhi3::FactorSet::Short;
    ReferencePhi3 ref(*m, set);
    const double d = worst_vs_reference(got, ref, ids);
    std::printf("%s: relative diff %.3g\n", row.name.c_str(), d);
    MT_REQUIRE_MSG(d < 1e-4, "relative diff %g", d);
    if (longrope) {
        ReferencePhi3 other(*m, want_long ? ReferencePhi3::FactorSet::Short
                                          : ReferencePhi3::FactorSet::Long);
        const double o = worst_vs_reference(got, other, ids);
        std::printf("%s: vs the other factor set %.3g\n", row.name.c_str(), o);
        // Far outside the tolerance: rotating with the wrong set fails the check above.
        MT_REQUIRE_MSG(o > 100 * 1e-4, "the other factor set gives the same logits (%g)", o);
    }
}

MT_TEST_TABLE(phi3_gguf_equals_safetensors, VariantRow, variant_rows()) {
    const LoadedModel* g = model(row.variant, ModelFileFormat::Gguf);
    const LoadedModel* s = model(row.variant, ModelFileFormat::Safetensors);
    MT_REQUIRE(g && s);
    const std::vector<int32_t> ids = make_prompt(30, g->config.vocab_size, 9);
    const auto a = engine_logits(*g, ids, 8), b = engine_logits(*s, ids, 8);
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i)
        worst =
            std::max(worst, rel_diff(a[i].data(), std::vector<double>(b[i].begin(), b[i].end())));
    std::printf("%s gguf vs safetensors: %.3g\n", row.name.c_str(), worst);
    MT_REQUIRE_MSG(worst < 1e-5, "relative diff %g", worst);
}

// Both loaders read the same config and bind the fused tensors as stored.
MT_TEST_TABLE(phi3_loaders_read_config_and_fused_weights, VariantRow, variant_rows()) {
    const ModelWriterSpec spec = phi3_spec(row.variant, ModelFileFormat::Gguf);
    for (ModelFileFormat f : {ModelFileFormat::Gguf, ModelFileFormat::Safetensors}) {
        const LoadedModel* m = model(row.variant, f);
        MT_REQUIRE(m);
        const ModelConfig& c = m->config;
        MT_COMPARE(c.arch, Architecture::Phi3);
        MT_COMPARE(c.rotary_dims(), spec.rotary_dim > 0 ? spec.rotary_dim : 16);
        MT_COMPARE(c.sliding_window, spec.sliding_window);
        MT_COMPARE(c.rope_scaling.kind, spec.rope_scaling.kind);
        MT_COMPARE(c.rope_scaling.short_factor, spec.rope_scaling.short_factor);
        MT_COMPARE(c.rope_scaling.long_factor, spec.rope_scaling.long_factor);
        if (spec.rope_scaling.kind == RopeScaling::Kind::LongRope) {
            MT_COMPARE(c.rope_scaling.original_max_position, kOriginal);
            const double want =
                spec.rope_scaling.attention_factor > 0
                    ? spec.rope_scaling.attention_factor
                    : std::sqrt(1.0 + std::log(4096.0 / kOriginal) / std::log(double(kOriginal)));
            MT_REQUIRE_MSG(std::abs(c.rope_scaling.attention_factor - want) < 1e-6,
                           "attention factor %g, want %g", c.rope_scaling.attention_factor, want);
        }
        const LayerWeights& L = m->weights.layers[1];
        MT_REQUIRE(L.wqkv.present() && L.w_gate_up.present());
        MT_REQUIRE(!L.wq.present() && !L.wk.present() && !L.wv.present());
        MT_REQUIRE(!L.w_gate.present() && !L.w_up.present());
        MT_COMPARE(L.wqkv.rows, int64_t(4 + 2 * 2) * 16);
        MT_COMPARE(L.w_gate_up.rows, int64_t(2 * 96));
        // Bytes read per token count the fused matrices (f32: 4 bytes a weight).
        CpuTransformer tf(*m, fx().pool);
        const int64_t per_layer = (8 * 16 * 64 + 64 * 64 + 2 * 96 * 64 + 64 * 96) * 4;
        MT_COMPARE(tf.weight_bytes_per_token(), 2 * per_layer + int64_t(c.vocab_size) * 64 * 4);
    }
}

// THE RULE (rope.h): one factor set per loaded model. A short sequence gives the same logits
// alone and batched with one that crosses the original context, in either order.
MT_TEST(phi3_longrope_results_do_not_depend_on_the_batch) {
    const LoadedModel* m = model(Variant::LongRopeLong, ModelFileFormat::Gguf);
    MT_REQUIRE(m);
    CpuTransformer tf(*m, fx().pool);
    const int32_t V = tf.vocab_size(), bs = 8;
    const std::vector<int32_t> a = make_prompt(12, V, 21), b = make_prompt(50, V, 22);
    const std::vector<int32_t> ta = {9, 2}, tb = {0, 7, 3, 10, 1, 4, 11};
    std::vector<float> alone(size_t(12) * V), both(size_t(62) * V);
    {
        KvCacheStorage kv(m->config, 12, bs);
        ForwardBatch batch;
        batch.add_sequence(a, 0, ta, bs, ForwardBatch::Logits::All);
        tf.forward(batch, kv, alone.data());
    }
    for (int order = 0; order < 2; ++order) {
        KvCacheStorage kv(m->config, 12, bs);
        ForwardBatch batch;
        if (order == 1)
            batch.add_sequence(b, 0, tb, bs, ForwardBatch::Logits::All);
        batch.add_sequence(a, 0, ta, bs, ForwardBatch::Logits::All);
        if (order == 0)
            batch.add_sequence(b, 0, tb, bs, ForwardBatch::Logits::All);
        MT_REQUIRE(batch.validate(bs, 12).ok());
        tf.forward(batch, kv, both.data());
        const float* got = both.data() + (order == 1 ? size_t(50) * V : 0);
        double worst = 0;
        for (size_t i = 0; i < alone.size(); ++i)
            worst = std::max(worst, double(std::abs(got[i] - alone[i])));
        std::printf("order %d: max |batched - alone| = %.3g\n", order, worst);
        MT_REQUIRE_MSG(worst <= 1e-5, "batched logits differ by %g", worst);
    }
    // And the set is the long one for this model however short the sequence: the reference
    // with the long set matches the 12-token sequence.
    ReferencePhi3 ref(*m, ReferencePhi3::FactorSet::Long);
    double d = 0;
    for (int i = 0; i < 12; ++i)
        d = std::max(d, rel_diff(alone.data() + size_t(i) * V, ref.step(a[size_t(i)])));
    MT_REQUIRE_MSG(d < 1e-4, "relative diff %g", d);
}

struct BrokenRow {
    std::string name;
    std::function<void(nlohmann::json&)> edit;
    std::string keyword; // in the error message
};
std::vector<BrokenRow> broken_rows() {
    return {
        {"short factor count",
         [](nlohmann::json& j) { j["rope_scaling"]["short_factor"].erase(0); }, "short_factor"},
        {"long factor not a number",
         [](nlohmann::json& j) { j["rope_scaling"]["long_factor"][0] = "x"; }, "long_factor"},
        {"negative factor", [](nlohmann::json& j) { j["rope_scaling"]["long_factor"][2] = -1.0; },
         "positive"},
        {"no original context",
         [](nlohmann::json& j) { j.erase("original_max_position_embeddings"); },
         "original_max_position_embeddings"},
        {"unknown scaling", [](nlohmann::json& j) { j["rope_scaling"]["type"] = "yarn"; }, "yarn"},
        {"odd rotary dims", [](nlohmann::json& j) { j["partial_rotary_factor"] = 0.3125; },
         "partial_rotary_factor"},
        {"rotary factor above 1", [](nlohmann::json& j) { j["partial_rotary_factor"] = 1.5; },
         "partial_rotary_factor"},
        {"window not an integer", [](nlohmann::json& j) { j["sliding_window"] = "wide"; },
         "sliding_window"},
        {"fused tensor shape", [](nlohmann::json& j) { j["intermediate_size"] = 100; },
         "gate_up_proj"},
    };
}

// Broken phi3 config.json files: each a clear error naming the key (or tensor).
MT_TEST_TABLE(phi3_broken_config_is_a_clear_error, BrokenRow, broken_rows()) {
    const LoadedModel* m = model(Variant::PartialLong, ModelFileFormat::Safetensors);
    MT_REQUIRE(m);
    const std::string dir = edited_folder(*m, "broken-phi3", row.edit);
    auto r = load_model(dir);
    MT_REQUIRE(!r);
    std::printf("%s: %s\n", row.name.c_str(), r.message().c_str());
    MT_REQUIRE_MSG(r.message().find(row.keyword) != std::string::npos, "error: %s",
                   r.message().c_str());
}

struct GgufBrokenRow {
    std::string name;
    std::function<void(GgufImage&)> edit;
    std::string keyword;
};
std::vector<GgufBrokenRow> gguf_broken_rows() {
    return {
        {"no short factors", [](GgufImage& g) { g.remove_tensor("rope_factors_short.weight"); },
         "missing tensor rope_factors_short.weight"},
        {"long factor count", [](GgufImage& g) { g.tensor("rope_factors_long.weight")->ne = {4}; },
         "rope_factors_long.weight: expected 6"},
        {"no original context",
         [](GgufImage& g) { g.remove_kv("phi3.rope.scaling.original_context_length"); },
         "missing key phi3.rope.scaling.original_context_length"},
        {"odd rotary dims",
         [](GgufImage& g) { g.kv("phi3.rope.dimension_count")->encoded = GgufImage::u32(11); },
         "phi3.rope.dimension_count"},
        {"rotary dims above the head",
         [](GgufImage& g) { g.kv("phi3.rope.dimension_count")->encoded = GgufImage::u32(18); },
         "phi3.rope.dimension_count"},
        {"no fused qkv", [](GgufImage& g) { g.remove_tensor("blk.1.attn_qkv.weight"); },
         "missing tensor blk.1.attn_qkv.weight"},
        {"fused gate/up rows",
         [](GgufImage& g) {
             g.tensor("blk.0.ffn_up.weight")->ne = {64, 96};
         },
         "blk.0.ffn_up.weight: shape [96, 64], expected [192, 64]"},
    };
}

// Broken phi3 GGUF files (edited from a valid one): each a clear error naming the tensor/key.
MT_TEST_TABLE(phi3_broken_gguf_is_a_clear_error, GgufBrokenRow, gguf_broken_rows()) {
    const LoadedModel* m = model(Variant::PartialLong, ModelFileFormat::Gguf);
    MT_REQUIRE(m);
    std::string bytes;
    {
        std::ifstream f(m->path, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(f), {});
    }
    const auto span = std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    auto f = GgufFile::parse(span, "valid");
    MT_REQUIRE(f.ok());
    GgufImage img = GgufImage::from(f.value(), span);
    MT_REQUIRE(img.serialize() == bytes);
    row.edit(img);
    const std::string p = fx().dir.file("broken-phi3.gguf");
    std::ofstream(p, std::ios::binary | std::ios::trunc) << img.serialize();
    auto r = load_model(p);
    MT_REQUIRE(!r.ok());
    std::printf("%s: %s\n", row.name.c_str(), r.message().c_str());
    MT_REQUIRE_MSG(r.message().find(row.keyword) != std::string::npos, "error: %s",
                   r.message().c_str());
}

MINI_TEST_MAIN()
