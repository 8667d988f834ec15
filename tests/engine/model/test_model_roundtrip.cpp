// Round trip: models written by the writer (every architecture, weight type and format, tied
// and untied) load back with the config and the logical weights the writer generated; GGUF
// and safetensors of the same seed hold the same weights.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "engine/model/loaded_model.h"
#include "engine/model/model_info.h"
#include "engine/model/model_writer.h"
#include "engine/model/rope_factors.h"
#include "engine/model/weight_plan.h"
#include "kernels/cpu/quant.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

ModelWriterSpec small_spec(Architecture arch, bool llama3_scaling) {
    ModelWriterSpec s;
    s.arch = arch;
    s.seed = 1234;
    s.hidden_size = 256; // a multiple of 256 so that K-quants apply without fallback
    s.intermediate_size = 512;
    s.num_layers = 2;
    s.num_heads = 4;
    s.num_kv_heads = 2;
    s.max_position = 1024;
    s.rope_theta = 500000.0f;
    s.rms_norm_eps = 1e-5f;
    if (llama3_scaling) {
        s.rope_scaling.kind = RopeScaling::Kind::Llama3;
        s.rope_scaling.factor = 8.0f;
        s.rope_scaling.low_freq_factor = 1.0f;
        s.rope_scaling.high_freq_factor = 4.0f;
        s.rope_scaling.original_max_position = 64; // small, so some dims are scaled
    }
    if (arch == Architecture::Qwen3) { // head_dim differs from hidden / heads
        s.num_heads = 8;
        s.head_dim = 64;
    }
    return s;
}

// Relative RMS error bound of a stored type.
double tolerance(DType t) {
    switch (t) {
    case DType::F32:
        return 0.0;
    case DType::F16:
        return 1e-3;
    case DType::BF16:
        return 8e-3;
    case DType::Q8_0:
        return 0.01;
    case DType::Q6_K:
        return 0.04;
    case DType::Q4_K:
        return 0.12;
    case DType::Q4_0:
        return 0.15;
    case DType::Q4_1:
    case DType::IQ4_NL:
    case DType::IQ4_XS:
        return 0.12;
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q5_K:
        return 0.06;
    case DType::Q3_K:
        return 0.2;
    case DType::Q2_K:
        return 0.35;
    }
    return 0;
}

std::vector<float> dequantize(const TensorView& v) {
    std::vector<float> out(size_t(v.rows * v.cols));
    for (int64_t r = 0; r < v.rows; ++r) {
        kernels::dequantize_row(v.type, v.row(r), out.data() + r * v.cols, v.cols);
    }
    return out;
}

// Compares a loaded view with the writer's logical values; GGUF llama Q/K rows are mapped
// back through the converter permutation. Returns an empty string when it matches.
std::string compare(const TensorView& v, const std::vector<float>& want, DType stored,
                    bool unpermute, int head_dim) {
    auto got = dequantize(v);
    if (got.size() != want.size())
        return v.name + ": size";
    double err2 = 0, ref2 = 0;
    for (int64_t r = 0; r < v.rows; ++r) {
        for (int64_t c = 0; c < v.cols; ++c) {
            int64_t src_r = r, src_c = c;
            if (unpermute && v.rows == 1)
                src_c = llama_qk_source_row(c, head_dim);
            if (unpermute && v.rows > 1)
                src_r = llama_qk_source_row(r, head_dim);
            const double w = want[size_t(src_r * v.cols + src_c)];
            const double g = got[size_t(r * v.cols + c)];
            if (!std::isfinite(g))
                return v.name + ": not finite";
            err2 += (g - w) * (g - w);
            ref2 += w * w;
        }
    }
    const double rel = std::sqrt(err2 / std::max(ref2, 1e-30));
    if (rel > tolerance(stored)) {
        return mini_test::format("%s (%s): relative RMS error %g > %g", v.name.c_str(),
                                 dtype_name(stored), rel, tolerance(stored));
    }
    return {};
}

// Every tensor view of a loaded model with the HF name it stands for.
std::vector<std::pair<const TensorView*, std::string>> views_with_hf_names(const LoadedModel& m) {
    std::vector<std::pair<const TensorView*, std::string>> out;
    const ModelWeights& w = m.weights;
    out.push_back({&w.tok_embd, hf_tensor_name(TensorRole::TokEmbd, 0)});
    out.push_back({&w.output_norm, hf_tensor_name(TensorRole::OutputNorm, 0)});
    if (!m.config.tie_word_embeddings)
        out.push_back({&w.output, hf_tensor_name(TensorRole::Output, 0)});
    for (int l = 0; l < int(w.layers.size()); ++l) {
        const LayerWeights& L = w.layers[size_t(l)];
        const std::pair<const TensorView*, TensorRole> items[] = {
            {&L.attn_norm, TensorRole::AttnNorm},
            {&L.wq, TensorRole::Wq},
            {&L.wk, TensorRole::Wk},
            {&L.wv, TensorRole::Wv},
            {&L.wo, TensorRole::Wo},
            {&L.bq, TensorRole::Bq},
            {&L.bk, TensorRole::Bk},
            {&L.bv, TensorRole::Bv},
            {&L.q_norm, TensorRole::QNorm},
            {&L.k_norm, TensorRole::KNorm},
            {&L.ffn_norm, TensorRole::FfnNorm},
            {&L.w_gate, TensorRole::WGate},
            {&L.w_up, TensorRole::WUp},
            {&L.w_down, TensorRole::WDown},
        };
        for (auto [v, role] : items) {
            if (v->present())
                out.push_back({v, hf_tensor_name(role, l)});
        }
    }
    return out;
}

bool is_qk(const std::string& hf) {
    return hf.find("q_proj") != std::string::npos || hf.find("k_proj") != std::string::npos;
}

} // namespace

namespace {

struct RoundTripRow {
    std::string name;
    Architecture arch;
    bool llama3;
    ModelFileFormat format;
    WeightType type;
    bool tied;
};

std::vector<RoundTripRow> round_trip_rows() {
    std::vector<RoundTripRow> rows;
    const std::pair<Architecture, bool> archs[] = {{Architecture::Llama, false},
                                                   {Architecture::Llama, true},
                                                   {Architecture::Qwen2, false},
                                                   {Architecture::Qwen3, false}};
    int i = 0;
    for (auto [arch, l3] : archs) {
        const std::string an = std::string(architecture_name(arch)) + (l3 ? "-llama3rope" : "");
        for (WeightType t :
             {WeightType::F32, WeightType::F16, WeightType::BF16, WeightType::Q8_0,
              WeightType::Q4_0, WeightType::Q4_K, WeightType::Q6_K, WeightType::Q4_K_M}) {
            const bool tied = (i++ % 2) == 1;
            rows.push_back({an + " gguf " + weight_type_name(t) + (tied ? " tied" : " untied"),
                            arch, l3, ModelFileFormat::Gguf, t, tied});
        }
        for (WeightType t : {WeightType::F32, WeightType::F16, WeightType::BF16}) {
            const bool tied = (i++ % 2) == 1;
            rows.push_back(
                {an + " safetensors " + weight_type_name(t) + (tied ? " tied" : " untied"), arch,
                 l3, ModelFileFormat::Safetensors, t, tied});
        }
    }
    return rows;
}

struct ArchRow {
    std::string name;
    Architecture arch;
    bool llama3;
};

std::vector<ArchRow> arch_rows() {
    return {{"llama", Architecture::Llama, false},
            {"llama3 rope", Architecture::Llama, true},
            {"qwen2", Architecture::Qwen2, false},
            {"qwen3", Architecture::Qwen3, false}};
}

} // namespace

MT_TEST_TABLE(roundTrip, RoundTripRow, round_trip_rows()) {
    const Architecture arch = row.arch;
    const bool llama3 = row.llama3;
    const ModelFileFormat format = row.format;
    const WeightType type = row.type;
    const bool tied = row.tied;
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    ModelWriterSpec spec = small_spec(arch, llama3);
    spec.format = format;
    spec.weight_type = type;
    spec.tie_word_embeddings = tied;
    const bool gguf = format == ModelFileFormat::Gguf;
    const std::string path = dir.file(gguf ? "m.gguf" : "m");
    ModelWriteReport rep;
    Status s = write_model(spec, path, &rep);
    MT_REQUIRE_MSG(s.ok(), s.ok() ? "" : s.message());
    MT_COMPARE(rep.fallback_tensors, 0);

    auto loaded = load_model(path);
    MT_REQUIRE_MSG(loaded.ok(), loaded.ok() ? "" : loaded.message());
    const LoadedModel& m = *loaded.value();
    const ModelConfig& c = m.config;
    const ModelConfig& e = rep.config;
    MT_COMPARE(m.format, std::string(gguf ? "gguf" : "safetensors"));
    MT_COMPARE(c.arch, arch);
    MT_COMPARE(c.arch_name, std::string(architecture_name(arch)));
    MT_COMPARE(c.vocab_size, e.vocab_size);
    MT_CHECK(c.vocab_size >= int(m.tokenizer.tokens.size()));
    MT_COMPARE(c.hidden_size, spec.hidden_size);
    MT_COMPARE(c.intermediate_size, spec.intermediate_size);
    MT_COMPARE(c.num_layers, spec.num_layers);
    MT_COMPARE(c.num_heads, spec.num_heads);
    MT_COMPARE(c.num_kv_heads, spec.num_kv_heads);
    MT_COMPARE(c.head_dim, spec.head_dim ? spec.head_dim : spec.hidden_size / spec.num_heads);
    MT_COMPARE(c.max_position, spec.max_position);
    MT_COMPARE(c.rope_theta, spec.rope_theta);
    MT_COMPARE(c.rms_norm_eps, spec.rms_norm_eps);
    MT_COMPARE(c.tie_word_embeddings, tied);
    MT_COMPARE(c.attention_bias, arch == Architecture::Qwen2);
    MT_COMPARE(c.qk_norm, arch == Architecture::Qwen3);
    const bool interleaved = gguf && arch == Architecture::Llama;
    MT_COMPARE(c.rope_style, interleaved ? RopeStyle::Interleaved : RopeStyle::RotateHalf);
    MT_COMPARE(c.rope_style, e.rope_style);
    MT_REQUIRE_COMPARE(int(m.weights.layers.size()), spec.num_layers);
    MT_COMPARE(m.weight_bytes, rep.weight_bytes);
    MT_COMPARE(m.parameter_count, rep.parameter_count);
    MT_CHECK(m.chat_template.has_value());
    MT_CHECK(m.tokenizer.eos_id >= 0);

    // Llama 3 rope scaling: GGUF carries it as rope_freqs, safetensors as config.
    if (llama3) {
        ModelConfig scaled = c;
        scaled.rope_scaling = spec.rope_scaling;
        const auto factors = llama3_rope_factors(scaled);
        bool some_scaled = false;
        for (float f : factors)
            some_scaled |= f > 1.5f;
        MT_CHECK(some_scaled);
        if (gguf) {
            MT_REQUIRE(m.weights.rope_freqs.present());
            MT_REQUIRE_COMPARE(m.weights.rope_freqs.cols, int64_t(factors.size()));
            const float* rf = static_cast<const float*>(m.weights.rope_freqs.data);
            for (size_t i = 0; i < factors.size(); ++i)
                MT_COMPARE(rf[i], factors[i]);
            MT_COMPARE(c.rope_scaling.kind, RopeScaling::Kind::None);
        } else {
            MT_CHECK(!m.weights.rope_freqs.present());
            MT_COMPARE(c.rope_scaling.kind, RopeScaling::Kind::Llama3);
            MT_COMPARE(c.rope_scaling.factor, spec.rope_scaling.factor);
            MT_COMPARE(c.rope_scaling.original_max_position,
                       spec.rope_scaling.original_max_position);
        }
    } else {
        MT_CHECK(!m.weights.rope_freqs.present());
        MT_COMPARE(c.rope_scaling.kind, RopeScaling::Kind::None);
    }

    if (tied) {
        MT_COMPARE(m.weights.output.data, m.weights.tok_embd.data);
    } else {
        MT_CHECK(m.weights.output.data != m.weights.tok_embd.data);
    }

    // Every tensor holds the generated values (within the stored type's error).
    std::map<std::string, DType> stored;
    for (const auto& t : rep.tensors)
        stored[t.file_name] = t.type;
    int compared = 0;
    for (auto [view, hf] : views_with_hf_names(m)) {
        MT_SCOPE("%s", hf.c_str());
        MT_REQUIRE_MSG(stored.count(view->name), view->name);
        MT_CHECK(view->type == stored[view->name] || view->type == DType::F32);
        if (view->rows == 1)
            MT_COMPARE(view->type, DType::F32); // norms/biases as F32
        const auto want = generate_hf_tensor(spec, hf, view->rows, view->cols);
        const std::string err =
            compare(*view, want, stored[view->name], interleaved && is_qk(hf), c.head_dim);
        MT_CHECK_MSG(err.empty(), err);
        ++compared;
    }
    MT_CHECK(compared >= 2 + 9 * spec.num_layers);
}

MT_TEST_TABLE(ggufAndSafetensorsHoldSameWeights, ArchRow, arch_rows()) {
    const Architecture arch = row.arch;
    const bool llama3 = row.llama3;
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    ModelWriterSpec spec = small_spec(arch, llama3);
    spec.weight_type = WeightType::F32;
    spec.format = ModelFileFormat::Gguf;
    const std::string gp = dir.file("m.gguf");
    const std::string sp = dir.file("hf");
    MT_REQUIRE(write_model(spec, gp).ok());
    spec.format = ModelFileFormat::Safetensors;
    MT_REQUIRE(write_model(spec, sp).ok());
    auto g = load_model(gp);
    auto h = load_model(sp);
    MT_REQUIRE_MSG(g.ok(), g.ok() ? "" : g.message());
    MT_REQUIRE_MSG(h.ok(), h.ok() ? "" : h.message());
    auto gv = views_with_hf_names(*g.value());
    auto hv = views_with_hf_names(*h.value());
    MT_REQUIRE_COMPARE(gv.size(), hv.size());
    const bool interleaved = arch == Architecture::Llama;
    const int hd = g.value()->config.head_dim;
    for (size_t i = 0; i < gv.size(); ++i) {
        MT_REQUIRE_COMPARE(gv[i].second, hv[i].second);
        const TensorView& a = *gv[i].first;
        const TensorView& b = *hv[i].first;
        MT_REQUIRE_COMPARE(a.rows, b.rows);
        MT_REQUIRE_COMPARE(a.cols, b.cols);
        const float* pa = static_cast<const float*>(a.data);
        const float* pb = static_cast<const float*>(b.data);
        const bool perm = interleaved && is_qk(gv[i].second);
        for (int64_t r = 0; r < a.rows; ++r) {
            for (int64_t cc = 0; cc < a.cols; ++cc) {
                int64_t br = r, bc = cc;
                if (perm && a.rows > 1)
                    br = llama_qk_source_row(r, hd);
                if (perm && a.rows == 1)
                    bc = llama_qk_source_row(cc, hd);
                if (pa[r * a.cols + cc] != pb[br * b.cols + bc]) {
                    MT_FAIL("%s differs at [%lld, %lld]", a.name.c_str(), static_cast<long long>(r),
                            static_cast<long long>(cc));
                }
            }
        }
    }
    // The rope scaling is the same: rope_freqs in GGUF == factors from config.json.
    if (llama3) {
        const auto f = llama3_rope_factors(h.value()->config);
        const float* rf = static_cast<const float*>(g.value()->weights.rope_freqs.data);
        for (size_t i = 0; i < f.size(); ++i)
            MT_COMPARE(rf[i], f[i]);
    }
}

MT_TEST(quantFallbackIsRecorded) {
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    ModelWriterSpec spec = small_spec(Architecture::Qwen2, false);
    spec.hidden_size = 96;        // not a multiple of 256 (K-quants) but of 32
    spec.intermediate_size = 200; // not even a multiple of 32
    spec.num_heads = 3;
    spec.num_kv_heads = 1;
    spec.weight_type = WeightType::Q4_K;
    const std::string path = dir.file("fb.gguf");
    ModelWriteReport rep;
    MT_REQUIRE(write_model(spec, path, &rep).ok());
    MT_CHECK(rep.fallback_tensors > 0);
    auto m = load_model(path);
    MT_REQUIRE_MSG(m.ok(), m.ok() ? "" : m.message());
    const LayerWeights& L = m.value()->weights.layers[0];
    MT_COMPARE(L.wq.type, DType::Q5_0);    // 96 columns: Q4_K falls back to Q5_0
    MT_COMPARE(L.w_down.type, DType::F16); // 200 columns: no block fits
    for (const auto& t : rep.tensors) {
        if (t.file_name == "blk.0.attn_q.weight")
            MT_CHECK(t.fallback);
        if (t.file_name == "blk.0.attn_norm.weight")
            MT_CHECK(!t.fallback);
    }
    spec.weight_type = WeightType::Q6_K;
    MT_REQUIRE(write_model(spec, path, &rep).ok());
    auto m2 = load_model(path);
    MT_REQUIRE(m2.ok());
    MT_COMPARE(m2.value()->weights.layers[0].wq.type, DType::Q8_0);
}

// The GGUF row permutation turns rotate-half RoPE into interleaved RoPE: rotating the
// permuted vector with interleaved pairs equals permuting the rotate-half result.
MT_TEST(permutationMatchesInterleavedRope) {
    const int hd = 16;
    std::vector<float> q(hd);
    for (int i = 0; i < hd; ++i)
        q[i] = float(i + 1) * 0.37f - 2.0f;
    const double pos = 7;
    auto angle = [&](int i) { return pos / std::pow(10000.0, 2.0 * i / hd); };
    std::vector<double> half(hd), inter(hd), qp(hd);
    for (int i = 0; i < hd / 2; ++i) {
        const double c = std::cos(angle(i)), s = std::sin(angle(i));
        half[i] = q[i] * c - q[i + hd / 2] * s;
        half[i + hd / 2] = q[i + hd / 2] * c + q[i] * s;
    }
    for (int r = 0; r < hd; ++r)
        qp[r] = q[size_t(llama_qk_source_row(r, hd))];
    for (int i = 0; i < hd / 2; ++i) {
        const double c = std::cos(angle(i)), s = std::sin(angle(i));
        inter[2 * i] = qp[2 * i] * c - qp[2 * i + 1] * s;
        inter[2 * i + 1] = qp[2 * i + 1] * c + qp[2 * i] * s;
    }
    for (int r = 0; r < hd; ++r) {
        MT_CHECK_MSG(std::abs(inter[r] - half[size_t(llama_qk_source_row(r, hd))]) < 1e-9, "row %d",
                     r);
    }
}

MT_TEST(deterministicForSeed) {
    ModelWriterSpec a = small_spec(Architecture::Qwen2, false);
    auto x = generate_hf_tensor(a, "model.layers.0.mlp.up_proj.weight", 8, 256);
    auto y = generate_hf_tensor(a, "model.layers.0.mlp.up_proj.weight", 8, 256);
    MT_COMPARE(x, y);
    a.seed = 99;
    auto z = generate_hf_tensor(a, "model.layers.0.mlp.up_proj.weight", 8, 256);
    MT_CHECK(x != z);
    auto w = generate_hf_tensor(a, "model.layers.1.mlp.up_proj.weight", 8, 256);
    MT_CHECK(w != z);
    // Statistics: matrices ~N(0, 0.02), norms ~1.
    double sum = 0, sq = 0;
    auto big = generate_hf_tensor(a, "model.layers.0.mlp.gate_proj.weight", 64, 256);
    for (float v : big) {
        sum += v;
        sq += double(v) * v;
    }
    const double mean = sum / big.size(), sd = std::sqrt(sq / big.size() - mean * mean);
    MT_CHECK(std::abs(mean) < 0.002);
    MT_CHECK(std::abs(sd - 0.02) < 0.002);
    auto norm = generate_hf_tensor(a, "model.norm.weight", 1, 256);
    for (float v : norm)
        MT_CHECK_MSG(v > 0.7f && v < 1.3f, "%g", double(v));
}

MT_TEST(modelInfo) {
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    ModelWriterSpec spec = small_spec(Architecture::Llama, false);
    spec.weight_type = WeightType::Q4_K_M;
    spec.num_layers = 8;
    const std::string path = dir.file("i.gguf");
    MT_REQUIRE(write_model(spec, path).ok());
    auto m = load_model(path);
    MT_REQUIRE(m.ok());
    auto groups = tensor_group_types(*m.value());
    std::map<std::string, TensorGroupTypes> by;
    int64_t bytes = 0;
    for (auto& g : groups) {
        by[g.group] = g;
        bytes += g.bytes;
    }
    MT_COMPARE(bytes, m.value()->weight_bytes);
    MT_COMPARE(by["output"].dtype_counts["Q6_K"], 1);
    MT_CHECK(by["ffn"].dtype_counts["Q6_K"] > 0); // some ffn_down get more bits
    MT_CHECK(by["ffn"].dtype_counts["Q4_K"] > by["ffn"].dtype_counts["Q6_K"]);
    MT_COMPARE(by["norm"].dtype_counts["F32"], 2 * 8 + 1);
    MT_COMPARE(kv_bytes_per_token(m.value()->config), int64_t(2 * 8 * 2 * 64 * 4));
}

MT_TEST(writerRejectsBadSpecs) {
    MT_COMPARE(parse_weight_type("Q4_K_M").value(), WeightType::Q4_K_M);
    MT_COMPARE(parse_weight_type("bf16").value(), WeightType::BF16);
    MT_CHECK(!parse_weight_type("q7_k").ok());
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    ModelWriterSpec spec = small_spec(Architecture::Llama, false);
    spec.format = ModelFileFormat::Safetensors;
    spec.weight_type = WeightType::Q8_0;
    Status s = write_model(spec, dir.file("q"));
    MT_REQUIRE(!s.ok());
    MT_CHECK(s.message().find("GGUF only") != std::string::npos);
    spec = small_spec(Architecture::Qwen2, false);
    spec.num_kv_heads = 3; // 4 heads are not a multiple of 3
    MT_CHECK(!write_model(spec, dir.file("k.gguf")).ok());
    spec = small_spec(Architecture::Qwen2, true); // llama3 scaling on qwen2
    MT_CHECK(!write_model(spec, dir.file("r.gguf")).ok());
    spec = small_spec(Architecture::Qwen2, false);
    spec.tokenizer_dir = dir.file("no-such-tokenizer");
    MT_CHECK(!write_model(spec, dir.file("t.gguf")).ok());
}

MINI_TEST_MAIN()
