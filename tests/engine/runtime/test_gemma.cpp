// Gemma 2 / Gemma 3 (text) on the CPU: the forward pass against the double-precision reference
// written from Hugging Face's modelling code (reference_gemma.h), in both file formats, F32 and
// Q8_0, prefill and decode over a paged cache, on sequences longer than the sliding window;
// controls showing the window, the soft-caps and the local RoPE base change the logits (so the
// comparison would catch ignoring them); writer -> loader config and stored norms (w in
// safetensors, w + 1 in GGUF) for both formats; config.json nested under text_config; loader
// errors naming the tensor or key.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "engine/model/arch_gemma.h"
#include "engine/model/safetensors_file.h"
#include "engine/model/safetensors_writer.h"
#include "engine/model/weight_plan.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/forward_batch.h"
#include "engine/runtime/kv_cache_storage.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/weight_layout.h"
#include "reference_gemma.h"
#include "runtime_test_models.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::test;

namespace {

constexpr int kWindow = 6;

// Small gemma models: head_dim 32 (the SIMD attention kernels take it), q/k projections and
// the embedding scaled up so that attention is peaked (the window and the soft-caps then move
// the logits well beyond the tolerance) and logits reach the final soft-cap.
ModelWriterSpec gemma_spec(Architecture a, ModelFileFormat f, WeightType t, int window = kWindow,
                           float qk_gain = 10.0f) {
    ModelWriterSpec s;
    s.arch = a;
    s.format = f;
    s.weight_type = t;
    s.seed = 4242;
    s.hidden_size = 64;
    s.intermediate_size = 128;
    s.num_layers = a == Architecture::Gemma2 ? 4 : 7; // gemma3: layer 5 global, the rest slide
    s.num_heads = 4;
    s.num_kv_heads = 2;
    s.head_dim = 32;
    s.max_position = 4096;
    s.rms_norm_eps = 1e-6f;
    s.tie_word_embeddings = true;
    s.sliding_window = window;
    if (a == Architecture::Gemma2) {
        s.rope_theta = 10000.0f;
        s.attn_logit_softcap = 2.0f;
        s.final_logit_softcap = 3.0f;
    } else {
        s.rope_theta = 1000000.0f;
        s.rope_theta_local = 10000.0f;
        s.rope_scaling.kind = RopeScaling::Kind::Linear;
        s.rope_scaling.factor = 8.0f;
    }
    const uint64_t seed = s.seed;
    s.tensor_values = [seed, qk_gain](const std::string& name, int64_t a0, int64_t b0, int64_t cols,
                                      float* out) {
        generate_rows(seed, name, a0, b0, cols, out);
        float k = 1.0f;
        if (name.find("q_proj") != std::string::npos || name.find("k_proj") != std::string::npos)
            k = qk_gain;
        else if (name == "model.embed_tokens.weight")
            k = 15.0f;
        for (int64_t i = 0; i < (b0 - a0) * cols; ++i)
            out[i] *= k;
    };
    return s;
}

const char* arch_key(Architecture a) {
    return a == Architecture::Gemma2 ? "gemma2" : "gemma3";
}

struct Fixture {
    mini_test::TempDir dir;
    std::map<std::string, std::unique_ptr<LoadedModel>> models;
    std::map<std::string, SafetensorsSet> hf_norm_sets;
    kernels::ThreadPool pool{2};
};

Fixture& fx() {
    static Fixture f;
    return f;
}

const LoadedModel* load(const ModelWriterSpec& spec, const std::string& key) {
    Fixture& f = fx();
    MT_REQUIRE(f.dir.valid());
    auto it = f.models.find(key);
    if (it != f.models.end())
        return it->second.get();
    std::string err;
    auto m = write_and_load(spec, f.dir.path(), key, &err);
    if (!m)
        MT_FAIL("%s", err.c_str());
    return (f.models[key] = std::move(m)).get();
}

// The norms as a Hugging Face folder stores them (w), read from the file: the model's own
// folder, or for a GGUF model an F32 folder of the same seed.
std::function<std::vector<double>(const std::string&)> hf_norms(const ModelWriterSpec& spec,
                                                                const LoadedModel& m) {
    Fixture& f = fx();
    const bool own = spec.format == ModelFileFormat::Safetensors;
    const std::string key = own ? m.path : std::string("norms-") + arch_key(spec.arch);
    if (!f.hf_norm_sets.count(key)) {
        if (!own)
            load(gemma_spec(spec.arch, ModelFileFormat::Safetensors, WeightType::F32), key);
        auto set = SafetensorsSet::open_folder(own ? m.path : f.dir.path() + "/" + key);
        if (!set)
            MT_FAIL("%s", set.message().c_str());
        f.hf_norm_sets.emplace(key, std::move(set.value()));
    }
    const SafetensorsSet* set = &f.hf_norm_sets.at(key);
    return [set](const std::string& name) {
        const SafetensorsTensor* t = set->find(name);
        if (!t)
            MT_FAIL("no tensor %s in the safetensors folder", name.c_str());
        std::vector<float> v(static_cast<size_t>(t->n_elements));
        kernels::dequantize_row(t->type, t->data, v.data(), t->n_elements);
        return std::vector<double>(v.begin(), v.end());
    };
}

std::vector<int32_t> make_prompt(int n, int32_t vocab, uint32_t seed) {
    std::vector<int32_t> ids(static_cast<size_t>(n));
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; i < n; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        ids[static_cast<size_t>(i)] =
            static_cast<int32_t>((s >> 33) % static_cast<uint64_t>(vocab));
    }
    return ids;
}

double rel_diff(const float* got, const std::vector<double>& ref) {
    double md = 0, mr = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        md = std::max(md, std::abs(static_cast<double>(got[i]) - ref[i]));
        mr = std::max(mr, std::abs(ref[i]));
    }
    return mr > 0 ? md / mr : md;
}

double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double md = 0, mr = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        md = std::max(md, std::abs(double(a[i]) - double(b[i])));
        mr = std::max(mr, std::abs(double(b[i])));
    }
    return mr > 0 ? md / mr : md;
}

// Engine logits [n][V] of ids: one batched prefill (all rows), or one token per step.
std::vector<float> engine_logits(const LoadedModel& m, const std::vector<int32_t>& ids,
                                 int32_t block_size, bool token_by_token) {
    CpuTransformer tf(m, fx().pool);
    const auto n = static_cast<int32_t>(ids.size());
    const int32_t num_blocks = n / block_size + 4;
    KvCacheStorage kv(m.config, num_blocks, block_size);
    std::vector<int32_t> table; // scattered: blocks from the end backwards
    for (int32_t i = 0; i < (n + block_size - 1) / block_size; ++i)
        table.push_back(num_blocks - 1 - i);
    const int32_t V = tf.vocab_size();
    std::vector<float> out(static_cast<size_t>(n) * V);
    ForwardBatch batch;
    if (!token_by_token) {
        batch.add_sequence(ids, 0, table, block_size, ForwardBatch::Logits::All);
        if (Status st = batch.validate(block_size, num_blocks); !st)
            MT_FAIL("%s", st.message().c_str());
        tf.forward(batch, kv, out.data());
        return out;
    }
    for (int32_t i = 0; i < n; ++i) {
        batch.clear();
        batch.add_sequence(std::span<const int32_t>(&ids[static_cast<size_t>(i)], 1), i, table,
                           block_size, ForwardBatch::Logits::Last);
        tf.forward(batch, kv, out.data() + static_cast<size_t>(i) * V);
    }
    return out;
}

// Prefill n_prompt tokens, then n_decode greedy steps (the reference's argmax), against the
// reference; the worst relative difference over all rows.
double run_vs_reference(const LoadedModel& m, const ModelWriterSpec& spec, int32_t block_size,
                        int n_prompt, int n_decode) {
    CpuTransformer tf(m, fx().pool);
    const int32_t num_blocks = (n_prompt + n_decode) / block_size + 4;
    KvCacheStorage kv(m.config, num_blocks, block_size);
    std::vector<int32_t> table;
    for (int32_t i = 0; i < (n_prompt + n_decode + block_size - 1) / block_size; ++i)
        table.push_back(num_blocks - 1 - i);
    ReferenceGemma ref(m, spec, hf_norms(spec, m));
    const int32_t V = tf.vocab_size();
    std::vector<int32_t> ids = make_prompt(n_prompt, V, 11);
    ForwardBatch batch;
    batch.add_sequence(ids, 0, table, block_size, ForwardBatch::Logits::All);
    if (Status st = batch.validate(block_size, num_blocks); !st)
        MT_FAIL("%s", st.message().c_str());
    std::vector<float> logits(static_cast<size_t>(n_prompt) * V);
    tf.forward(batch, kv, logits.data());
    double worst = 0;
    std::vector<double> r;
    for (int i = 0; i < n_prompt; ++i) {
        r = ref.step(ids[static_cast<size_t>(i)]);
        worst = std::max(worst, rel_diff(logits.data() + static_cast<size_t>(i) * V, r));
    }
    for (int s = 0; s < n_decode; ++s) {
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
    Architecture arch;
    ModelFileFormat format;
    WeightType type;
    int block_size;
    double tolerance;
    float qk_gain = 10.0f;
};

std::vector<ForwardRow> forward_rows() {
    std::vector<ForwardRow> rows;
    for (Architecture a : {Architecture::Gemma2, Architecture::Gemma3}) {
        for (int bs : {8, 16}) {
            rows.push_back({mini_test::format("%s-gguf-f32-bs%d", arch_key(a), bs), a,
                            ModelFileFormat::Gguf, WeightType::F32, bs, 1e-4});
            rows.push_back({mini_test::format("%s-safetensors-f32-bs%d", arch_key(a), bs), a,
                            ModelFileFormat::Safetensors, WeightType::F32, bs, 1e-4});
        }
        // Integer types quantize the activations too (the reference does not). The bound is
        // looser than the other families' 3e-2: the post norms bring every block's output into
        // the residual at full scale (a random llama's blocks add ~1% of it), so each layer's
        // activation rounding reaches the logits undamped (measured: gemma2 0.039, gemma3
        // under 0.03; F32 rows stay under 1e-4). The q/k gain is lower there: peaked attention
        // amplifies the rounding further.
        rows.push_back({mini_test::format("%s-gguf-q8_0-bs16", arch_key(a)), a,
                        ModelFileFormat::Gguf, WeightType::Q8_0, 16, 5e-2, 3.0f});
        rows.push_back({mini_test::format("%s-safetensors-bf16-bs16", arch_key(a)), a,
                        ModelFileFormat::Safetensors, WeightType::BF16, 16, 1e-4});
    }
    return rows;
}

std::string model_key(const ModelWriterSpec& s, const std::string& extra = "") {
    return mini_test::format("%s-%s-%s%s", arch_key(s.arch),
                             s.format == ModelFileFormat::Gguf ? "gguf" : "st",
                             weight_type_name(s.weight_type), extra.c_str());
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Replaces the first `from` in the file by `to` (same length: offsets stay valid).
void patch_file(const std::string& path, const std::string& from, const std::string& to) {
    MT_REQUIRE(from.size() == to.size());
    std::string b = read_file(path);
    const size_t at = b.find(from);
    MT_REQUIRE_MSG(at != std::string::npos, "%s not in %s", from.c_str(), path.c_str());
    b.replace(at, from.size(), to);
    write_file(path, b);
}

// A fresh copy of a written model (file or folder) to break.
std::string fresh_model(const ModelWriterSpec& spec, const std::string& name) {
    Fixture& f = fx();
    std::string err;
    ModelWriterSpec s = spec;
    const std::string key = "broken-" + name;
    auto m = write_and_load(s, f.dir.path(), key, &err);
    if (!m)
        MT_FAIL("%s", err.c_str());
    return f.dir.path() + "/" + key + (spec.format == ModelFileFormat::Gguf ? ".gguf" : "");
}

void expect_load_error(const std::string& path, const std::string& needle) {
    auto m = load_model(path);
    MT_REQUIRE_MSG(!m, "loading %s succeeded", path.c_str());
    MT_CHECK_MSG(m.message().find(needle) != std::string::npos, "error '%s' does not name '%s'",
                 m.message().c_str(), needle.c_str());
}

} // namespace

MT_TEST_TABLE(forward_matches_reference, ForwardRow, forward_rows()) {
    const ModelWriterSpec spec = gemma_spec(row.arch, row.format, row.type, kWindow, row.qk_gain);
    const LoadedModel* m = load(spec, model_key(spec, mini_test::format("-g%g", row.qk_gain)));
    MT_REQUIRE(m);
    // 26 prompt tokens and 8 decode steps: over four times the window of 6.
    const double d = run_vs_reference(*m, spec, row.block_size, 26, 8);
    // BF16 with the CPU's bf16 dot products (kernels/cpu/simd.h; panel layout) rounds the
    // activations to bf16 as well, which the post norms carry to the logits like the integer
    // types' activation rounding (measured 0.013 gemma2, 0.0055 gemma3): the Q8_0 rows' bound.
    const bool bf16_dot = kernels::bf16_dot_active() && kernels::panel_layout_enabled();
    const double tolerance = row.type == WeightType::BF16 && bf16_dot ? 5e-2 : row.tolerance;
    MT_REQUIRE_MSG(d < tolerance, "relative diff %g", d);
}

MT_TEST(batched_prefill_equals_token_by_token) {
    for (Architecture a : {Architecture::Gemma2, Architecture::Gemma3}) {
        MT_SCOPE("%s", arch_key(a));
        const ModelWriterSpec spec = gemma_spec(a, ModelFileFormat::Gguf, WeightType::F32);
        const LoadedModel* m = load(spec, model_key(spec));
        MT_REQUIRE(m);
        const auto ids = make_prompt(20, m->config.vocab_size, 5);
        const double d =
            rel_diff(engine_logits(*m, ids, 8, false), engine_logits(*m, ids, 8, true));
        MT_CHECK_MSG(d < 1e-5, "relative diff %g", d);
    }
}

// Each feature changed alone: the logits move well beyond the reference tolerance, and the
// engine still matches the reference (which follows the changed spec).
struct ControlRow {
    std::string name;
    Architecture arch;
    std::function<void(ModelWriterSpec&)> change;
    ModelFileFormat format = ModelFileFormat::Gguf;
};
std::vector<ControlRow> control_rows() {
    return {
        {"gemma2-no-window", Architecture::Gemma2,
         [](ModelWriterSpec& s) { s.sliding_window = 0; }},
        {"gemma3-no-window", Architecture::Gemma3,
         [](ModelWriterSpec& s) { s.sliding_window = 0; }},
        {"gemma2-no-attn-softcap", Architecture::Gemma2,
         [](ModelWriterSpec& s) { s.attn_logit_softcap = 0; }},
        {"gemma2-no-final-softcap", Architecture::Gemma2,
         [](ModelWriterSpec& s) { s.final_logit_softcap = 0; }},
        {"gemma3-local-base-as-global", Architecture::Gemma3,
         [](ModelWriterSpec& s) { s.rope_theta_local = s.rope_theta; },
         ModelFileFormat::Safetensors}, // GGUF has no key for it (readers use 10000)
        {"gemma3-no-linear-scaling", Architecture::Gemma3,
         [](ModelWriterSpec& s) { s.rope_scaling = RopeScaling{}; }},
    };
}

MT_TEST_TABLE(each_feature_changes_logits, ControlRow, control_rows()) {
    const ModelWriterSpec base = gemma_spec(row.arch, row.format, WeightType::F32);
    ModelWriterSpec changed = base;
    row.change(changed);
    const LoadedModel* a = load(base, model_key(base));
    const LoadedModel* b = load(changed, model_key(changed, "-" + row.name));
    MT_REQUIRE(a && b);
    const auto ids = make_prompt(24, a->config.vocab_size, 3);
    const double d = rel_diff(engine_logits(*a, ids, 16, false), engine_logits(*b, ids, 16, false));
    MT_CHECK_MSG(d > 1e-2, "logits moved by only %g", d);
    const double r = run_vs_reference(*b, changed, 16, 24, 2);
    MT_CHECK_MSG(r < 1e-4, "changed model vs reference: relative diff %g", r);
}

struct RoundTripRow {
    std::string name;
    Architecture arch;
    ModelFileFormat format;
};
std::vector<RoundTripRow> roundtrip_rows() {
    std::vector<RoundTripRow> rows;
    for (Architecture a : {Architecture::Gemma2, Architecture::Gemma3})
        for (auto f : {ModelFileFormat::Gguf, ModelFileFormat::Safetensors})
            rows.push_back({mini_test::format("%s-%s", arch_key(a),
                                              f == ModelFileFormat::Gguf ? "gguf" : "safetensors"),
                            a, f});
    return rows;
}

void check_gemma_config(const ModelConfig& got, const ModelConfig& want) {
    MT_CHECK(got.arch == want.arch);
    MT_COMPARE(got.arch_name, want.arch_name);
    MT_COMPARE(got.vocab_size, want.vocab_size);
    MT_COMPARE(got.hidden_size, want.hidden_size);
    MT_COMPARE(got.intermediate_size, want.intermediate_size);
    MT_COMPARE(got.num_layers, want.num_layers);
    MT_COMPARE(got.num_heads, want.num_heads);
    MT_COMPARE(got.num_kv_heads, want.num_kv_heads);
    MT_COMPARE(got.head_dim, want.head_dim);
    MT_COMPARE(got.rope_theta, want.rope_theta);
    MT_COMPARE(got.rms_norm_eps, want.rms_norm_eps);
    MT_CHECK(got.rope_style == RopeStyle::RotateHalf);
    MT_CHECK(got.rope_scaling.kind == want.rope_scaling.kind);
    MT_COMPARE(got.rope_scaling.factor, want.rope_scaling.factor);
    MT_COMPARE(got.tie_word_embeddings, true);
    MT_COMPARE(got.qk_norm, want.arch == Architecture::Gemma3);
    MT_CHECK(got.activation == MlpActivation::GeluTanh);
    MT_COMPARE(got.embedding_scale, std::sqrt(float(want.hidden_size)));
    MT_COMPARE(got.post_norms, true);
    MT_COMPARE(got.attn_logit_softcap, want.attn_logit_softcap);
    MT_COMPARE(got.final_logit_softcap, want.final_logit_softcap);
    MT_COMPARE(got.query_scale, want.query_scale);
    MT_COMPARE(got.sliding_window, want.sliding_window);
    MT_CHECK(got.layer_sliding == want.layer_sliding);
    MT_COMPARE(got.rope_theta_local, want.rope_theta_local);
}

MT_TEST_TABLE(writer_loader_roundtrip, RoundTripRow, roundtrip_rows()) {
    const ModelWriterSpec spec = gemma_spec(row.arch, row.format, WeightType::F32);
    const LoadedModel* m = load(spec, model_key(spec));
    MT_REQUIRE(m);
    auto want = resolve_writer_config(spec);
    MT_REQUIRE(want.ok());
    check_gemma_config(m->config, want.value());
    // The published layer rule: gemma2 even layers slide, gemma3 all but layer 5.
    for (int l = 0; l < spec.num_layers; ++l)
        MT_COMPARE(m->config.window_for_layer(l),
                   (row.arch == Architecture::Gemma2 ? l % 2 == 0 : (l + 1) % 6 != 0) ? kWindow
                                                                                      : 0);
    MT_COMPARE(m->config.query_scale, float(1.0 / std::sqrt(32.0)));
    // Norms: loaded = the multiplier 1 + w = the writer's logical value; stored as w + 1 in
    // GGUF (as llama.cpp's converter writes) and w in safetensors.
    const std::string file = fx().dir.path() + "/" + model_key(spec) +
                             (row.format == ModelFileFormat::Gguf ? ".gguf" : "");
    std::optional<SafetensorsSet> st;
    if (row.format == ModelFileFormat::Safetensors) {
        auto s = SafetensorsSet::open_folder(file);
        MT_REQUIRE(s.ok());
        st.emplace(std::move(s.value()));
    }
    int norms = 0;
    for (const PlannedTensor& p : plan_tensors(m->config, false)) {
        if (!is_norm_role(p.role))
            continue;
        ++norms;
        const TensorView* v = planned_view(m->weights, p);
        MT_REQUIRE_MSG(v && v->present() && v->type == DType::F32, "%s", p.hf_name.c_str());
        const auto logical = generate_hf_tensor(spec, p.hf_name, 1, p.cols);
        const float* got = static_cast<const float*>(v->data);
        for (int64_t i = 0; i < p.cols; ++i)
            MT_REQUIRE_MSG(std::abs(got[i] - logical[size_t(i)]) < 1e-6f, "%s[%lld]",
                           p.hf_name.c_str(), static_cast<long long>(i));
        if (st) {
            const SafetensorsTensor* t = st->find(p.hf_name);
            MT_REQUIRE_MSG(t, "%s", p.hf_name.c_str());
            const float* stored = reinterpret_cast<const float*>(t->data);
            for (int64_t i = 0; i < p.cols; ++i)
                MT_REQUIRE(std::abs(stored[i] - (logical[size_t(i)] - 1.0f)) < 1e-6f);
        }
    }
    // Four per layer (+ q/k norms on gemma3) and the final norm.
    MT_COMPARE(norms, spec.num_layers * (row.arch == Architecture::Gemma3 ? 6 : 4) + 1);
}

// What GGUF cannot carry is refused by the writer (a reader would load something else).
MT_TEST(writer_refuses_what_gguf_cannot_hold) {
    ModelWriterSpec s = gemma_spec(Architecture::Gemma3, ModelFileFormat::Gguf, WeightType::F32);
    s.rope_theta_local = 50000.0f;
    Status st = write_model(s, fx().dir.path() + "/refused-local.gguf");
    MT_REQUIRE(!st);
    MT_CHECK(st.message().find("local RoPE base") != std::string::npos);
    s = gemma_spec(Architecture::Gemma2, ModelFileFormat::Gguf, WeightType::F32);
    s.query_pre_attn_scalar = 64.0f; // head_dim is 32
    st = write_model(s, fx().dir.path() + "/refused-qpas.gguf");
    MT_REQUIRE(!st);
    MT_CHECK(st.message().find("query_pre_attn_scalar") != std::string::npos);
    s.format = ModelFileFormat::Safetensors; // config.json holds it
    MT_CHECK(write_model(s, fx().dir.path() + "/qpas-folder").ok());
    s = gemma_spec(Architecture::Gemma3, ModelFileFormat::Gguf, WeightType::F32);
    s.attn_logit_softcap = 50.0f;
    MT_CHECK(!write_model(s, fx().dir.path() + "/refused-cap.gguf"));
}

// Gemma 3's multimodal checkpoints: model_type "gemma3", the text settings under text_config
// (keys left out take Gemma3TextConfig's defaults; no layer_types: sliding_window_pattern).
MT_TEST(gemma3_text_config_nested) {
    const ModelWriterSpec spec =
        gemma_spec(Architecture::Gemma3, ModelFileFormat::Safetensors, WeightType::F32);
    const std::string dir = fresh_model(spec, "nested");
    nlohmann::json flat = nlohmann::json::parse(read_file(dir + "/config.json"));
    nlohmann::json text = flat;
    text.erase("layer_types");
    text.erase("rope_local_base_freq");  // default 10000
    text.erase("query_pre_attn_scalar"); // written as 32; the default 256 must then apply
    text["model_type"] = "gemma3_text";
    nlohmann::json mm = {{"model_type", "gemma3"},
                         {"architectures", {"Gemma3ForConditionalGeneration"}},
                         {"text_config", text}};
    write_file(dir + "/config.json", mm.dump(2));
    auto m = load_model(dir);
    MT_REQUIRE_MSG(m.ok(), "%s", m.ok() ? "" : m.message().c_str());
    auto want = resolve_writer_config(spec);
    MT_REQUIRE(want.ok());
    ModelConfig w = want.value();
    w.query_scale = float(1.0 / std::sqrt(256.0));
    check_gemma_config(m.value()->config, w);

    // The multimodal checkpoints' tensor names (language_model.model.layers.N...), with a
    // vision tensor the text model ignores: same weights, same logits as the plain folder.
    {
        const std::string mmdir = fx().dir.path() + "/nested-mm-names";
        std::filesystem::create_directories(mmdir);
        auto plain = SafetensorsSet::open_folder(dir);
        MT_REQUIRE(plain.ok());
        SafetensorsWriter w;
        std::vector<const SafetensorsTensor*> all = plain->all();
        for (const SafetensorsTensor* t : all)
            w.add_tensor("language_model." + t->name, t->type, t->shape);
        w.add_tensor("vision_tower.patch_embedding.weight", DType::F32, {2, 2});
        MT_REQUIRE(w.begin(mmdir + "/model.safetensors", {{"format", "pt"}}).ok());
        for (const SafetensorsTensor* t : all)
            MT_REQUIRE(w.append(t->data, size_t(t->bytes)).ok());
        const float vision[4] = {1, 2, 3, 4};
        MT_REQUIRE(w.append(vision, sizeof vision).ok());
        MT_REQUIRE(w.finish().ok());
        for (const char* f : {"config.json", "tokenizer.json", "tokenizer_config.json"})
            std::filesystem::copy_file(dir + "/" + f, mmdir + "/" + f);
        auto mm = load_model(mmdir);
        MT_REQUIRE_MSG(mm.ok(), "%s", mm.ok() ? "" : mm.message().c_str());
        const auto ids = make_prompt(12, m.value()->config.vocab_size, 9);
        const double d = rel_diff(engine_logits(*mm.value(), ids, 8, false),
                                  engine_logits(*m.value(), ids, 8, false));
        MT_CHECK_MSG(d == 0.0, "relative diff %g", d);
    }

    // A bad text_config is named.
    mm["text_config"]["model_type"] = "llama";
    write_file(dir + "/config.json", mm.dump(2));
    expect_load_error(dir, "text_config.model_type");
    mm["text_config"] = 3;
    write_file(dir + "/config.json", mm.dump(2));
    expect_load_error(dir, "'text_config' must be an object");
}

MT_TEST(loader_errors_name_tensor_or_key) {
    // Missing post-feedforward norm of layer 1.
    {
        const std::string p = fresh_model(
            gemma_spec(Architecture::Gemma2, ModelFileFormat::Gguf, WeightType::F32), "g2-post");
        patch_file(p, "blk.1.post_ffw_norm.weight", "blk.1.post_ffw_norm.weighx");
        expect_load_error(p, "missing tensor blk.1.post_ffw_norm.weight");
    }
    {
        const std::string p = fresh_model(
            gemma_spec(Architecture::Gemma3, ModelFileFormat::Safetensors, WeightType::F32),
            "g3-post");
        patch_file(p + "/model.safetensors", "model.layers.1.post_attention_layernorm.weight",
                   "model.layers.1.post_attention_layernorm.weighx");
        expect_load_error(p, "missing tensor model.layers.1.post_attention_layernorm.weight");
    }
    // Bad soft-cap values.
    {
        const std::string p = fresh_model(
            gemma_spec(Architecture::Gemma2, ModelFileFormat::Gguf, WeightType::F32), "g2-cap");
        std::string b = read_file(p);
        const std::string key = "gemma2.attn_logit_softcapping";
        const size_t at = b.find(key);
        MT_REQUIRE(at != std::string::npos);
        uint32_t type = 0;
        std::memcpy(&type, b.data() + at + key.size(), 4);
        MT_REQUIRE_COMPARE(type, 6u); // F32
        const float bad = -1.0f;
        std::memcpy(b.data() + at + key.size() + 4, &bad, 4);
        write_file(p, b);
        expect_load_error(p, "gemma2.attn_logit_softcapping must be a positive number");
    }
    for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping",
                            "query_pre_attn_scalar", "rope_local_base_freq", "sliding_window",
                            "layer_types", "hidden_activation", "rope_scaling"}) {
        MT_SCOPE("%s", key);
        const std::string p = fresh_model(
            gemma_spec(Architecture::Gemma3, ModelFileFormat::Safetensors, WeightType::F32),
            std::string("g3-") + key);
        nlohmann::json j = nlohmann::json::parse(read_file(p + "/config.json"));
        j[key] = std::string(key) == "rope_scaling"        ? nlohmann::json{{"rope_type", "yarn"}}
                 : std::string(key) == "layer_types"       ? nlohmann::json{"sliding_attention"}
                 : std::string(key) == "hidden_activation" ? nlohmann::json("gelu")
                                                           : nlohmann::json(-5);
        write_file(p + "/config.json", j.dump(2));
        expect_load_error(p, std::string(key) == "rope_scaling" ? "rope_scaling type 'yarn'"
                                                                : "'" + std::string(key) + "'");
    }
}

MINI_TEST_MAIN()
