// write_model(): resolves the tokenizer and the config, then streams every planned tensor
// (generated row chunk by row chunk, permuted / converted / quantized) into a GGUF file or a
// safetensors folder.
#include "engine/model/model_writer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "engine/model/arch_gemma.h"
#include "engine/model/arch_moe.h"
#include "engine/model/arch_phi3.h"
#include "engine/model/demo_tokenizer.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/quantize.h"
#include "engine/model/rope_factors.h"
#include "engine/model/safetensors_writer.h"
#include "engine/model/weight_plan.h"
#include "kernels/cpu/quant.h"

namespace llmwb {

namespace {

constexpr int64_t kChunkElems = int64_t(1) << 21; // floats generated per chunk (8 MiB)

struct WeightTypeName {
    WeightType type;
    const char* name;
};
constexpr WeightTypeName kWeightTypes[] = {
    {WeightType::F32, "f32"},       {WeightType::F16, "f16"},       {WeightType::BF16, "bf16"},
    {WeightType::Q8_0, "q8_0"},     {WeightType::Q4_0, "q4_0"},     {WeightType::Q4_K, "q4_k"},
    {WeightType::Q6_K, "q6_k"},     {WeightType::Q4_K_M, "q4_k_m"}, {WeightType::Q4_1, "q4_1"},
    {WeightType::Q5_0, "q5_0"},     {WeightType::Q5_1, "q5_1"},     {WeightType::Q2_K, "q2_k"},
    {WeightType::Q3_K, "q3_k"},     {WeightType::Q5_K, "q5_k"},     {WeightType::IQ4_NL, "iq4_nl"},
    {WeightType::IQ4_XS, "iq4_xs"}, {WeightType::Q5_K_M, "q5_k_m"}, {WeightType::Q5_K_S, "q5_k_s"},
    {WeightType::Q4_K_S, "q4_k_s"}, {WeightType::Q3_K_M, "q3_k_m"}, {WeightType::Q3_K_S, "q3_k_s"},
    {WeightType::Q3_K_L, "q3_k_l"},
};

Result<TokenizerFiles> resolve_tokenizer(const ModelWriterSpec& spec) {
    if (spec.tokenizer_dir.empty())
        return make_demo_tokenizer();
    namespace fs = std::filesystem;
    std::string json = (fs::path(spec.tokenizer_dir) / "tokenizer.json").string();
    std::string config = (fs::path(spec.tokenizer_dir) / "tokenizer_config.json").string();
    std::error_code ec;
    if (!fs::is_regular_file(config, ec))
        config.clear();
    return read_tokenizer_files(json, config);
}

// Number of ids the tokenizer uses (vocab tokens and added tokens).
int64_t tokenizer_size(const TokenizerData& d) {
    int64_t n = int64_t(d.tokens.size());
    for (const auto& a : d.added_tokens)
        n = std::max<int64_t>(n, int64_t(a.id) + 1);
    return n;
}

Result<ModelConfig> resolve_config(const ModelWriterSpec& s, const TokenizerData& tok) {
    ModelConfig c;
    c.arch = s.arch;
    c.arch_name = architecture_name(s.arch);
    if (s.hidden_size <= 0 || s.intermediate_size <= 0 || s.num_layers <= 0 || s.num_heads <= 0 ||
        s.num_kv_heads <= 0 || s.max_position <= 0 || s.head_dim < 0) {
        return make_error("model writer: shapes must be positive");
    }
    if (s.num_heads % s.num_kv_heads != 0) {
        return make_error("model writer: num_heads must be a multiple of num_kv_heads");
    }
    if (s.head_dim == 0 && s.hidden_size % s.num_heads != 0) {
        return make_error("model writer: hidden_size must be a multiple of num_heads");
    }
    c.vocab_size = int(std::max<int64_t>(s.vocab_size, tokenizer_size(tok)));
    c.hidden_size = s.hidden_size;
    c.intermediate_size = s.intermediate_size;
    c.num_layers = s.num_layers;
    c.num_heads = s.num_heads;
    c.num_kv_heads = s.num_kv_heads;
    c.head_dim = s.head_dim > 0 ? s.head_dim : s.hidden_size / s.num_heads;
    if (c.head_dim % 2 != 0)
        return make_error("model writer: head_dim must be even");
    c.max_position = s.max_position;
    c.rope_theta = s.rope_theta;
    c.rms_norm_eps = s.rms_norm_eps;
    c.rope_scaling = s.rope_scaling;
    if (c.rope_scaling.kind == RopeScaling::Kind::Linear) {
        if (s.arch != Architecture::Gemma3)
            return make_error("model writer: linear rope scaling needs the gemma3 architecture");
    } else if (c.rope_scaling.kind == RopeScaling::Kind::Llama3 && s.arch != Architecture::Llama) {
        return make_error("model writer: llama3 rope scaling needs the llama architecture");
    }
    if (s.arch != Architecture::Llama && s.arch != Architecture::Qwen2 &&
        s.arch != Architecture::Qwen3 && s.arch != Architecture::Phi3 && !is_gemma(s.arch) &&
        s.arch != Architecture::Qwen3Moe)
        return make_error(std::string("model writer: cannot write the ") + c.arch_name +
                          " architecture");
    if (s.arch != Architecture::Phi3 &&
        (c.rope_scaling.kind == RopeScaling::Kind::LongRope || s.rotary_dim > 0))
        return make_error("model writer: longrope and partial rotary are written for the phi3 "
                          "architecture only");
    if (s.sliding_window > 0 && s.arch != Architecture::Phi3 && s.arch != Architecture::Llama &&
        !is_gemma(s.arch))
        return make_error("model writer: a sliding window is written for gemma2/3, phi3 and "
                          "llama (as a Hugging Face mistral folder) only");
    if (s.rotary_dim > 0) {
        if (s.rotary_dim % 2 != 0 || s.rotary_dim > c.head_dim)
            return make_error("model writer: rotary_dim must be even and at most head_dim");
        c.rotary_dim = s.rotary_dim == c.head_dim ? 0 : s.rotary_dim;
    }
    if (c.rope_scaling.kind == RopeScaling::Kind::LongRope) {
        RopeScaling& sc = c.rope_scaling;
        const size_t n = size_t(c.rotary_dims() / 2);
        if (sc.short_factor.size() != n || sc.long_factor.size() != n)
            return make_error("model writer: longrope needs rotary_dim/2 = " + std::to_string(n) +
                              " short and long factors");
        if (sc.original_max_position < 2)
            return make_error("model writer: longrope needs original_max_position >= 2");
        if (sc.attention_factor <= 0.0f)
            sc.attention_factor =
                longrope_default_attention_factor(c.max_position, sc.original_max_position);
    }
    if (s.sliding_window < 0)
        return make_error("model writer: sliding_window must be >= 0");
    c.sliding_window = s.sliding_window;
    c.rope_style = RopeStyle::RotateHalf;
    c.tie_word_embeddings = s.tie_word_embeddings;
    c.attention_bias = s.attention_bias < 0 ? s.arch == Architecture::Qwen2 : s.attention_bias > 0;
    if (s.arch == Architecture::Qwen2 && !c.attention_bias) {
        return make_error("model writer: qwen2 always has q/k/v biases");
    }
    c.qk_norm = s.arch == Architecture::Qwen3 || s.arch == Architecture::Qwen3Moe;
    if (is_gemma(s.arch)) {
        if (s.sliding_window < 0 || s.attn_logit_softcap < 0 || s.final_logit_softcap < 0 ||
            s.query_pre_attn_scalar < 0 || s.rope_theta_local < 0)
            return make_error("model writer: gemma window, soft-caps and scalars must be >= 0");
        if (s.arch == Architecture::Gemma3 && (s.attn_logit_softcap > 0))
            return make_error("model writer: gemma3 has no attention logit soft-cap");
        c.sliding_window = s.sliding_window;
        c.attn_logit_softcap = s.attn_logit_softcap;
        c.final_logit_softcap = s.final_logit_softcap;
        c.rope_theta_local = s.arch == Architecture::Gemma3 ? s.rope_theta_local : 0.0f;
        set_gemma_features(c, s.query_pre_attn_scalar);
    }
    if (s.arch == Architecture::Qwen3Moe) {
        if (s.num_experts < 1 || s.num_experts > kMaxExperts || s.num_experts_used < 1 ||
            s.num_experts_used > s.num_experts || s.expert_intermediate_size < 1)
            return make_error("model writer: qwen3moe needs 1 <= experts used <= experts <= " +
                              std::to_string(kMaxExperts) + " and an expert intermediate size");
        c.num_experts = s.num_experts;
        c.num_experts_used = s.num_experts_used;
        c.expert_intermediate_size = s.expert_intermediate_size;
        c.expert_norm_topk = s.expert_norm_topk;
    } else if (s.num_experts > 0) {
        return make_error("model writer: experts need the qwen3moe architecture");
    }
    return c;
}

// The GGUF token list: every id the tokenizer uses, padded to vocab_size, with token types.
void gguf_vocab(const TokenizerData& d, int vocab_size, std::vector<std::string>& tokens,
                std::vector<int32_t>& types) {
    tokens.assign(size_t(vocab_size), std::string());
    types.assign(size_t(vocab_size), 1);
    std::vector<bool> filled(size_t(vocab_size), false);
    for (size_t i = 0; i < d.tokens.size() && i < size_t(vocab_size); ++i) {
        tokens[i] = d.tokens[i];
        filled[i] = true;
        if (i < d.token_types.size()) {
            types[i] = d.token_types[i];
        } else if (d.kind == TokenizerData::Kind::SentencePieceBpe && d.tokens[i].size() == 6 &&
                   d.tokens[i].rfind("<0x", 0) == 0 && d.tokens[i].back() == '>') {
            types[i] = 6;
        }
    }
    for (const auto& a : d.added_tokens) {
        if (a.id < 0 || a.id >= vocab_size)
            continue;
        tokens[size_t(a.id)] = a.content;
        types[size_t(a.id)] = a.special ? 3 : 4;
        filled[size_t(a.id)] = true;
    }
    if (d.unk_id >= 0 && d.unk_id < vocab_size)
        types[size_t(d.unk_id)] = 2;
    for (int i = 0; i < vocab_size; ++i) {
        if (!filled[size_t(i)]) {
            tokens[size_t(i)] = "[PAD" + std::to_string(i) + "]";
            types[size_t(i)] = 5;
        }
    }
}

uint32_t gguf_file_type(WeightType wt) {
    auto t = parse_quant_target(weight_type_name(wt));
    return t ? t->file_type : 0;
}

} // namespace

void add_gguf_model_metadata(GgufWriter& w, const ModelConfig& c, const TokenizerData& d,
                             const std::optional<std::string>& chat_template,
                             const std::string& name, uint32_t file_type) {
    const std::string arch = architecture_name(c.arch);
    const std::string a = arch + ".";
    w.add_string("general.architecture", arch);
    w.add_string("general.name", name);
    w.add_u32("general.file_type", file_type);
    w.add_u32("general.quantization_version", 2);
    w.add_u32(a + "vocab_size", uint32_t(c.vocab_size));
    w.add_u32(a + "context_length", uint32_t(c.max_position));
    w.add_u32(a + "embedding_length", uint32_t(c.hidden_size));
    w.add_u32(a + "block_count", uint32_t(c.num_layers));
    w.add_u32(a + "feed_forward_length", uint32_t(c.intermediate_size));
    w.add_u32(a + "attention.head_count", uint32_t(c.num_heads));
    w.add_u32(a + "attention.head_count_kv", uint32_t(c.num_kv_heads));
    w.add_u32(a + "attention.key_length", uint32_t(c.head_dim));
    w.add_u32(a + "attention.value_length", uint32_t(c.head_dim));
    w.add_u32(a + "rope.dimension_count", uint32_t(c.rotary_dims()));
    w.add_f32(a + "rope.freq_base", c.rope_theta);
    w.add_f32(a + "attention.layer_norm_rms_epsilon", c.rms_norm_eps);
    if (is_gemma(c.arch)) { // as llama.cpp's converter writes them
        if (c.attn_logit_softcap > 0)
            w.add_f32(a + "attn_logit_softcapping", c.attn_logit_softcap);
        if (c.final_logit_softcap > 0)
            w.add_f32(a + "final_logit_softcapping", c.final_logit_softcap);
        if (c.sliding_window > 0)
            w.add_u32(a + "attention.sliding_window", uint32_t(c.sliding_window));
        if (c.rope_scaling.kind == RopeScaling::Kind::Linear) {
            w.add_string(a + "rope.scaling.type", "linear");
            w.add_f32(a + "rope.scaling.factor", c.rope_scaling.factor);
        }
    }
    if (c.arch == Architecture::Phi3 && c.sliding_window > 0)
        w.add_u32(a + "attention.sliding_window", uint32_t(c.sliding_window));
    if (c.rope_scaling.kind == RopeScaling::Kind::LongRope) { // factors: phi3_rope_factor_tensors
        w.add_u32(a + "rope.scaling.original_context_length",
                  uint32_t(c.rope_scaling.original_max_position));
        w.add_f32(a + "rope.scaling.attn_factor", c.rope_scaling.attention_factor);
    }
    if (c.is_moe()) {
        w.add_u32(a + "expert_count", uint32_t(c.num_experts));
        w.add_u32(a + "expert_used_count", uint32_t(c.num_experts_used));
        w.add_u32(a + "expert_feed_forward_length", uint32_t(c.expert_intermediate_size));
        w.add_bool(a + "expert_weights_norm", c.expert_norm_topk);
    }

    const bool spm = d.kind == TokenizerData::Kind::SentencePieceBpe;
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    gguf_vocab(d, c.vocab_size, tokens, types);
    w.add_string("tokenizer.ggml.model", spm ? "llama" : "gpt2");
    if (!spm)
        w.add_string("tokenizer.ggml.pre", d.pre_tokenizer.empty() ? "gpt2" : d.pre_tokenizer);
    w.add_string_array("tokenizer.ggml.tokens", tokens);
    w.add_i32_array("tokenizer.ggml.token_type", types);
    if (!d.scores.empty() || spm) {
        std::vector<float> scores(tokens.size(), 0.0f);
        for (size_t i = 0; i < scores.size(); ++i) {
            scores[i] = i < d.scores.size() ? d.scores[i] : -float(i);
        }
        w.add_f32_array("tokenizer.ggml.scores", scores);
    }
    if (!d.merges.empty()) {
        std::vector<std::string> merges;
        merges.reserve(d.merges.size());
        for (const auto& [x, y] : d.merges)
            merges.push_back(x + " " + y);
        w.add_string_array("tokenizer.ggml.merges", merges);
    }
    if (d.bos_id >= 0)
        w.add_u32("tokenizer.ggml.bos_token_id", uint32_t(d.bos_id));
    if (d.eos_id >= 0)
        w.add_u32("tokenizer.ggml.eos_token_id", uint32_t(d.eos_id));
    if (d.unk_id >= 0)
        w.add_u32("tokenizer.ggml.unknown_token_id", uint32_t(d.unk_id));
    if (d.pad_id >= 0)
        w.add_u32("tokenizer.ggml.padding_token_id", uint32_t(d.pad_id));
    w.add_bool("tokenizer.ggml.add_bos_token", d.add_bos);
    w.add_bool("tokenizer.ggml.add_eos_token", d.add_eos);
    if (spm)
        w.add_bool("tokenizer.ggml.add_space_prefix", d.add_space_prefix);
    if (chat_template)
        w.add_string("tokenizer.chat_template", *chat_template);
}

std::vector<std::pair<std::string, std::vector<float>>>
longrope_factor_tensors(const ModelConfig& c) {
    if (c.rope_scaling.kind != RopeScaling::Kind::LongRope)
        return {};
    return {{"rope_factors_long.weight", c.rope_scaling.long_factor},
            {"rope_factors_short.weight", c.rope_scaling.short_factor}};
}

namespace {

// Rows [a, b) of a tensor: the spec's chosen values, or the seeded random generator.
void fill_rows(const ModelWriterSpec& spec, const std::string& hf_name, int64_t a, int64_t b,
               int64_t cols, float* out) {
    if (spec.tensor_values)
        spec.tensor_values(hf_name, a, b, cols, out);
    else
        generate_rows(spec.seed, hf_name, a, b, cols, out);
    if (!spec.tensor_values && spec.embedding_std != 0.02f &&
        (hf_name == "model.embed_tokens.weight" || hf_name == "lm_head.weight")) {
        const float k = spec.embedding_std / 0.02f; // the generator's matrices have mean 0
        for (int64_t i = 0; i < (b - a) * cols; ++i)
            out[i] *= k;
    }
}

// Streams the rows of one tensor: generate (HF layout; llama Q/K rows permuted for GGUF),
// convert to `type` and hand each chunk to `sink`.
// norm_shift: added to norm values (-1: gemma's safetensors store w of the multiplier 1 + w).
template <class Sink>
Status stream_tensor(const ModelWriterSpec& spec, const ModelConfig& c, const PlannedTensor& t,
                     DType type, bool permute_qk, Sink&& sink, float norm_shift = 0.0f) {
    std::vector<float> f32;
    std::vector<uint8_t> out;
    if (t.role == TensorRole::RopeFreqs) {
        f32 = llama3_rope_factors(c);
        return sink(f32.data(), f32.size() * sizeof(float));
    }
    const bool qk = permute_qk && (t.role == TensorRole::Wq || t.role == TensorRole::Wk ||
                                   t.role == TensorRole::Bq || t.role == TensorRole::Bk);
    if (t.vector && qk) {
        // A Q/K bias: one row whose elements follow the row permutation.
        std::vector<float> src(size_t(t.cols));
        fill_rows(spec, t.hf_name, 0, 1, t.cols, src.data());
        f32.resize(size_t(t.cols));
        for (int64_t e = 0; e < t.cols; ++e) {
            f32[size_t(e)] = src[size_t(llama_qk_source_row(e, c.head_dim))];
        }
        return sink(f32.data(), f32.size() * sizeof(float));
    }
    const int64_t chunk = std::max<int64_t>(1, kChunkElems / t.cols);
    const int64_t row_bytes = dtype_row_bytes(type, t.cols);
    // Rows [a, b) of the chunk starting at r0: generate, then convert in place.
    auto work = [&](int64_t r0, int64_t a, int64_t b) {
        float* dst = f32.data() + (a - r0) * t.cols;
        if (qk) {
            for (int64_t r = a; r < b; ++r) {
                const int64_t src = llama_qk_source_row(r, c.head_dim);
                fill_rows(spec, t.hf_name, src, src + 1, t.cols, dst + (r - a) * t.cols);
            }
        } else if (t.experts > 0) {
            // Stacked experts: rows [e * per, (e + 1) * per) are expert e's tensor.
            const int64_t per = t.rows / t.experts;
            for (int64_t r = a; r < b;) {
                const int64_t e = r / per, end = std::min(b, (e + 1) * per);
                fill_rows(spec, hf_expert_tensor_name(t.role, t.layer, int(e)), r - e * per,
                          end - e * per, t.cols, dst + (r - a) * t.cols);
                r = end;
            }
        } else {
            fill_rows(spec, t.hf_name, a, b, t.cols, dst);
        }
        if (norm_shift != 0.0f && is_norm_role(t.role))
            for (int64_t i = 0; i < (b - a) * t.cols; ++i)
                dst[i] += norm_shift;
        if (type == DType::F32)
            return;
        for (int64_t r = a; r < b; ++r) {
            kernels::quantize_row(type, f32.data() + (r - r0) * t.cols,
                                  out.data() + (r - r0) * row_bytes, t.cols);
        }
    };
    const int64_t n_threads = std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, 16);
    for (int64_t r0 = 0; r0 < t.rows; r0 += chunk) {
        const int64_t r1 = std::min(t.rows, r0 + chunk);
        f32.resize(size_t((r1 - r0) * t.cols));
        if (type != DType::F32)
            out.resize(size_t((r1 - r0) * row_bytes));
        const int64_t n =
            (r1 - r0) * t.cols >= (int64_t(1) << 16) ? std::min(n_threads, r1 - r0) : 1;
        if (n == 1) {
            work(r0, r0, r1);
        } else {
            std::vector<std::thread> threads;
            for (int64_t i = 0; i < n; ++i) {
                const int64_t a = r0 + (r1 - r0) * i / n, b = r0 + (r1 - r0) * (i + 1) / n;
                threads.emplace_back(work, r0, a, b);
            }
            for (auto& th : threads)
                th.join();
        }
        Status s = type == DType::F32 ? sink(f32.data(), f32.size() * sizeof(float))
                                      : sink(out.data(), out.size());
        if (!s)
            return s;
    }
    return ok_status();
}

Status write_gguf(const ModelWriterSpec& spec, const ModelConfig& c, const TokenizerFiles& tf,
                  const std::string& path, ModelWriteReport& rep) {
    const bool llama = c.arch == Architecture::Llama;
    const bool rope_freqs = llama && c.rope_scaling.kind == RopeScaling::Kind::Llama3;
    if (is_gemma(c.arch) && spec.query_pre_attn_scalar > 0 &&
        spec.query_pre_attn_scalar != gemma_gguf_query_pre_attn_scalar(c))
        return make_error("model writer: GGUF has no query_pre_attn_scalar key; readers use " +
                          std::to_string(gemma_gguf_query_pre_attn_scalar(c)) + " for this shape");
    if (c.arch == Architecture::Gemma3 && c.rope_theta_local != 10000.0f)
        return make_error("model writer: GGUF has no key for gemma3's local RoPE base; readers use "
                          "10000");
    auto plan = plan_tensors(c, rope_freqs);
    GgufWriter w;
    const std::string name =
        spec.name.empty() ? std::string("llmwb random ") + c.arch_name : spec.name;
    add_gguf_model_metadata(w, c, tf.data, tf.chat_template, name,
                            gguf_file_type(spec.weight_type));
    std::vector<bool> fallback;
    const std::vector<DType> types = gguf_storage_types(plan, spec.weight_type, c, &fallback);
    for (size_t i = 0; i < plan.size(); ++i) {
        const PlannedTensor& t = plan[i];
        const DType ty = types[i];
        const bool fb = fallback[i];
        if (t.experts > 0)
            w.add_tensor_dims(
                t.gguf_name, ty,
                {uint64_t(t.cols), uint64_t(t.rows / t.experts), uint64_t(t.experts)});
        else
            w.add_tensor(t.gguf_name, ty, t.rows, t.cols, t.vector);
        rep.tensors.push_back({t.hf_name, t.gguf_name, t.rows, t.cols, ty, fb});
        rep.fallback_tensors += fb ? 1 : 0;
        rep.weight_bytes += t.rows * dtype_row_bytes(ty, t.cols);
        rep.parameter_count += t.rows * t.cols;
    }
    const auto factors = longrope_factor_tensors(c);
    for (const auto& [fname, values] : factors) {
        w.add_tensor(fname, DType::F32, 1, int64_t(values.size()), true);
        rep.tensors.push_back({"", fname, 1, int64_t(values.size()), DType::F32, false});
    }
    Status s = w.begin(path);
    if (!s)
        return s;
    for (size_t i = 0; i < plan.size(); ++i) {
        s = stream_tensor(spec, c, plan[i], types[i], llama,
                          [&](const void* p, size_t n) { return w.append(p, n); });
        if (!s)
            return s;
    }
    for (const auto& [fname, values] : factors)
        if (!(s = w.append(values.data(), values.size() * sizeof(float))))
            return s;
    rep.config = c;
    rep.config.rope_style = llama ? RopeStyle::Interleaved : RopeStyle::RotateHalf;
    if (llama)
        rep.config.sliding_window = 0; // no GGUF key: llama/mistral GGUF runs full attention
    if (rope_freqs)
        rep.config.rope_scaling = RopeScaling{}; // carried by rope_freqs
    return w.finish();
}

std::string hf_config_json(const ModelWriterSpec& spec, const ModelConfig& c,
                           const TokenizerData& tok) {
    nlohmann::ordered_json j;
    const char* cls = c.arch == Architecture::Llama      ? "LlamaForCausalLM"
                      : c.arch == Architecture::Qwen2    ? "Qwen2ForCausalLM"
                      : c.arch == Architecture::Gemma2   ? "Gemma2ForCausalLM"
                      : c.arch == Architecture::Gemma3   ? "Gemma3ForCausalLM"
                      : c.arch == Architecture::Phi3     ? "Phi3ForCausalLM"
                      : c.arch == Architecture::Qwen3Moe ? "Qwen3MoeForCausalLM"
                                                         : "Qwen3ForCausalLM";
    // llama with a sliding window: a mistral config.json (GGUF files carry no window key).
    const bool mistral = c.arch == Architecture::Llama && c.sliding_window > 0;
    j["architectures"] = {mistral ? "MistralForCausalLM" : cls};
    j["model_type"] = mistral                            ? std::string("mistral")
                      : c.arch == Architecture::Gemma3   ? std::string("gemma3_text")
                      : c.arch == Architecture::Qwen3Moe ? std::string("qwen3_moe")
                                                         : c.arch_name;
    if (mistral)
        j["sliding_window"] = c.sliding_window;
    j["vocab_size"] = c.vocab_size;
    j["hidden_size"] = c.hidden_size;
    j["intermediate_size"] = c.intermediate_size;
    j["num_hidden_layers"] = c.num_layers;
    j["num_attention_heads"] = c.num_heads;
    j["num_key_value_heads"] = c.num_kv_heads;
    j["head_dim"] = c.head_dim;
    j["max_position_embeddings"] = c.max_position;
    j["rope_theta"] = c.rope_theta;
    j["rms_norm_eps"] = c.rms_norm_eps;
    j["hidden_act"] = is_gemma(c.arch) ? "gelu_pytorch_tanh" : "silu";
    if (c.is_moe()) {
        j["num_experts"] = c.num_experts;
        j["num_experts_per_tok"] = c.num_experts_used;
        j["moe_intermediate_size"] = c.expert_intermediate_size;
        j["norm_topk_prob"] = c.expert_norm_topk;
        j["decoder_sparse_step"] = 1;
        j["mlp_only_layers"] = nlohmann::ordered_json::array();
    }
    j["tie_word_embeddings"] = c.tie_word_embeddings;
    if (c.arch != Architecture::Qwen2)
        j["attention_bias"] = c.attention_bias;
    if (c.rope_scaling.kind == RopeScaling::Kind::Llama3) {
        j["rope_scaling"] = {
            {"rope_type", "llama3"},
            {"factor", c.rope_scaling.factor},
            {"low_freq_factor", c.rope_scaling.low_freq_factor},
            {"high_freq_factor", c.rope_scaling.high_freq_factor},
            {"original_max_position_embeddings", c.rope_scaling.original_max_position}};
    } else if (c.rope_scaling.kind == RopeScaling::Kind::Linear) {
        j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", c.rope_scaling.factor}};
    } else if (c.rope_scaling.kind == RopeScaling::Kind::LongRope) {
        const RopeScaling& sc = c.rope_scaling;
        j["original_max_position_embeddings"] = sc.original_max_position;
        j["rope_scaling"] = {{"type", "longrope"},
                             {"short_factor", sc.short_factor},
                             {"long_factor", sc.long_factor}};
        // Written only where it differs from what a reader derives from the positions.
        if (std::abs(sc.attention_factor - longrope_default_attention_factor(
                                               c.max_position, sc.original_max_position)) > 1e-7f)
            j["rope_scaling"]["attention_factor"] = sc.attention_factor;
    } else {
        j["rope_scaling"] = nullptr;
    }
    if (c.arch == Architecture::Phi3) {
        if (c.rotary_dim > 0)
            j["partial_rotary_factor"] = double(c.rotary_dim) / c.head_dim;
        j["sliding_window"] = c.sliding_window > 0 ? nlohmann::ordered_json(c.sliding_window)
                                                   : nlohmann::ordered_json(nullptr);
    }
    if (is_gemma(c.arch)) {
        j["hidden_activation"] = "gelu_pytorch_tanh";
        const float qpas =
            spec.query_pre_attn_scalar > 0 ? spec.query_pre_attn_scalar : float(c.head_dim);
        if (qpas == std::floor(qpas))
            j["query_pre_attn_scalar"] = int64_t(qpas);
        else
            j["query_pre_attn_scalar"] = qpas;
        j["sliding_window"] = c.sliding_window > 0 ? nlohmann::ordered_json(c.sliding_window)
                                                   : nlohmann::ordered_json(nullptr);
        nlohmann::ordered_json types = nlohmann::ordered_json::array();
        for (uint8_t slides : c.layer_sliding)
            types.push_back(slides ? "sliding_attention" : "full_attention");
        j["layer_types"] = types;
        auto cap = [](float v) {
            return v > 0 ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
        };
        j["attn_logit_softcapping"] = cap(c.attn_logit_softcap);
        j["final_logit_softcapping"] = cap(c.final_logit_softcap);
        if (c.arch == Architecture::Gemma3)
            j["rope_local_base_freq"] = c.rope_theta_local;
    }
    j["torch_dtype"] = spec.weight_type == WeightType::F16    ? "float16"
                       : spec.weight_type == WeightType::BF16 ? "bfloat16"
                                                              : "float32";
    if (tok.bos_id >= 0)
        j["bos_token_id"] = tok.bos_id;
    if (tok.eos_id >= 0)
        j["eos_token_id"] = tok.eos_id;
    return j.dump(2);
}

Status write_text(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    return f ? ok_status() : make_error(path + ": write failed");
}

Status write_safetensors(const ModelWriterSpec& spec, const ModelConfig& c,
                         const TokenizerFiles& tf, const std::string& dir, ModelWriteReport& rep) {
    namespace fs = std::filesystem;
    DType type;
    switch (spec.weight_type) {
    case WeightType::F32:
        type = DType::F32;
        break;
    case WeightType::F16:
        type = DType::F16;
        break;
    case WeightType::BF16:
        type = DType::BF16;
        break;
    default:
        return make_error(std::string("model writer: weight type ") +
                          weight_type_name(spec.weight_type) +
                          " is GGUF only (safetensors: f32, f16, bf16)");
    }
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        return make_error(dir + ": cannot create folder: " + ec.message());
    // Stacked experts (one planned tensor per layer and projection) become one tensor per expert.
    std::vector<PlannedTensor> plan;
    for (PlannedTensor& t : plan_tensors(c, false)) {
        if (t.experts == 0) {
            plan.push_back(std::move(t));
            continue;
        }
        for (int64_t e = 0; e < t.experts; ++e) {
            PlannedTensor one = t;
            one.experts = 0;
            one.rows = t.rows / t.experts;
            one.hf_name = hf_expert_tensor_name(t.role, t.layer, int(e));
            plan.push_back(std::move(one));
        }
    }
    SafetensorsWriter w;
    for (const auto& t : plan) {
        std::vector<int64_t> shape =
            t.vector ? std::vector<int64_t>{t.cols} : std::vector<int64_t>{t.rows, t.cols};
        w.add_tensor(t.hf_name, type, shape);
        rep.tensors.push_back({t.hf_name, t.hf_name, t.rows, t.cols, type, false});
        rep.weight_bytes += t.rows * dtype_row_bytes(type, t.cols);
        rep.parameter_count += t.rows * t.cols;
    }
    Status s = w.begin((fs::path(dir) / "model.safetensors").string(), {{"format", "pt"}});
    if (!s)
        return s;
    for (const auto& t : plan) {
        s = stream_tensor(
            spec, c, t, type, false, [&](const void* p, size_t n) { return w.append(p, n); },
            is_gemma(c.arch) ? -1.0f : 0.0f);
        if (!s)
            return s;
    }
    if (!(s = w.finish()))
        return s;
    if (!(s = write_text((fs::path(dir) / "config.json").string(),
                         hf_config_json(spec, c, tf.data)))) {
        return s;
    }
    const fs::path tj = fs::path(dir) / "tokenizer.json";
    const fs::path tc = fs::path(dir) / "tokenizer_config.json";
    if (spec.tokenizer_dir.empty()) {
        if (!(s = write_text(tj.string(), tokenizer_json_text(tf.data))))
            return s;
        if (!(s = write_text(tc.string(), tokenizer_config_json_text(tf.data, tf.chat_template)))) {
            return s;
        }
    } else {
        for (const char* f : {"tokenizer.json", "tokenizer_config.json"}) {
            const fs::path src = fs::path(spec.tokenizer_dir) / f;
            if (!fs::exists(src, ec))
                continue;
            fs::copy_file(src, fs::path(dir) / f, fs::copy_options::overwrite_existing, ec);
            if (ec)
                return make_error(src.string() + ": cannot copy: " + ec.message());
        }
    }
    rep.config = c;
    return ok_status();
}

} // namespace

const char* weight_type_name(WeightType t) {
    for (const auto& e : kWeightTypes) {
        if (e.type == t)
            return e.name;
    }
    return "?";
}

Result<WeightType> parse_weight_type(const std::string& name) {
    std::string lower;
    for (char ch : name)
        lower += char(std::tolower(static_cast<unsigned char>(ch)));
    for (const auto& e : kWeightTypes) {
        if (lower == e.name)
            return e.type;
    }
    std::string names;
    for (const auto& e : kWeightTypes)
        names += (names.empty() ? "" : ", ") + std::string(e.name);
    return make_error("unknown weight type '" + name + "' (" + names + ")");
}

const std::vector<WeightType>& all_weight_types() {
    static const std::vector<WeightType> all = [] {
        std::vector<WeightType> v;
        for (const auto& e : kWeightTypes)
            v.push_back(e.type);
        return v;
    }();
    return all;
}

std::vector<float> generate_hf_tensor(const ModelWriterSpec& spec, const std::string& hf_name,
                                      int64_t rows, int64_t cols) {
    std::vector<float> out(size_t(rows * cols));
    fill_rows(spec, hf_name, 0, rows, cols, out.data());
    return out;
}

Result<ModelConfig> resolve_writer_config(const ModelWriterSpec& spec) {
    auto tf = resolve_tokenizer(spec);
    if (!tf)
        return tf.error();
    return resolve_config(spec, tf->data);
}

Status write_model(const ModelWriterSpec& spec, const std::string& out_path,
                   ModelWriteReport* report) {
    auto tf = resolve_tokenizer(spec);
    if (!tf)
        return tf.error();
    auto c = resolve_config(spec, tf->data);
    if (!c)
        return c.error();
    ModelWriteReport rep;
    Status s = spec.format == ModelFileFormat::Gguf
                   ? write_gguf(spec, c.value(), tf.value(), out_path, rep)
                   : write_safetensors(spec, c.value(), tf.value(), out_path, rep);
    if (!s)
        return s;
    if (report)
        *report = std::move(rep);
    return ok_status();
}

} // namespace llmwb
