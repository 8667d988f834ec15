// The quantization targets and their recipes. The tensor-type choices follow llama.cpp's
// src/llama-quant.cpp (llama_tensor_get_type_impl and tensor_type_fallback) at the commit named
// by quantize_recipe_version(), for the dense llama / qwen2 / qwen3 models this engine runs
// (the MoE, Falcon and 70B-specific rules of that file do not apply to them and are left out).
#include "engine/model/quant_recipe.h"

#include <cctype>

namespace llmwb {

namespace {

// name, base type, file_type (LLAMA_FTYPE), pure, description; menu order.
struct TargetRow {
    const char* name;
    DType base;
    uint32_t file_type;
    bool preset;
    bool pure;
    const char* description;
};
constexpr TargetRow kTargets[] = {
    {"Q8_0", DType::Q8_0, 7, true, false, "8.5 bpw, Q8_0"},
    {"Q6_K", DType::Q6_K, 18, true, false, "6.6 bpw, Q6_K"},
    {"Q5_K_M", DType::Q5_K, 17, true, false, "5.7 bpw, Q5_K + Q6_K"},
    {"Q5_K_S", DType::Q5_K, 16, true, false, "5.5 bpw, Q5_K (output Q6_K)"},
    {"Q5_1", DType::Q5_1, 9, true, false, "6.0 bpw, Q5_1 (output Q6_K)"},
    {"Q5_0", DType::Q5_0, 8, true, false, "5.5 bpw, Q5_0 (output Q6_K)"},
    {"Q4_K_M", DType::Q4_K, 15, true, false, "4.9 bpw, Q4_K + Q6_K"},
    {"Q4_K_S", DType::Q4_K, 14, true, false, "4.6 bpw, Q4_K + Q5_K"},
    {"Q4_1", DType::Q4_1, 3, true, false, "5.0 bpw, Q4_1 (output Q6_K)"},
    {"Q4_0", DType::Q4_0, 2, true, false, "4.5 bpw, Q4_0 (output Q6_K)"},
    {"IQ4_XS", DType::IQ4_XS, 30, true, false, "4.3 bpw, IQ4_XS + Q5_K"},
    {"IQ4_NL", DType::IQ4_NL, 25, true, false, "4.5 bpw, IQ4_NL + Q5_K"},
    {"Q3_K_L", DType::Q3_K, 13, true, false, "4.3 bpw, Q3_K + Q5_K"},
    {"Q3_K_M", DType::Q3_K, 12, true, false, "3.9 bpw, Q3_K + Q4_K + Q5_K"},
    {"Q3_K_S", DType::Q3_K, 11, true, false, "3.5 bpw, Q3_K (output Q6_K)"},
    {"Q2_K", DType::Q2_K, 10, true, false, "3.2 bpw, Q2_K + Q3_K + Q4_K"},
    {"Q5_K", DType::Q5_K, 16, false, true, "5.5 bpw, every matrix Q5_K"},
    {"Q4_K", DType::Q4_K, 14, false, true, "4.5 bpw, every matrix Q4_K"},
    {"Q3_K", DType::Q3_K, 11, false, true, "3.4 bpw, every matrix Q3_K"},
    {"F16", DType::F16, 1, false, true, "16 bpw, no quantization"},
    {"BF16", DType::BF16, 32, false, true, "16 bpw bfloat16, no quantization"},
    {"F32", DType::F32, 0, false, true, "32 bpw, no quantization"},
};

// Types and mixes of the common quantizer this engine does not implement yet.
constexpr const char* kOutOfScope[] = {"IQ1_S", "IQ1_M",   "IQ2_XXS", "IQ2_XS",   "IQ2_S",
                                       "IQ2_M", "IQ3_XXS", "IQ3_XS",  "IQ3_S",    "IQ3_M",
                                       "TQ1_0", "TQ2_0",   "MXFP4",   "MXFP4_MOE"};

std::string upper(const std::string& s) {
    std::string out;
    for (char c : s)
        out += char(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

bool starts_with(const std::string& s, const char* p) {
    return s.rfind(p, 0) == 0;
}

// llama.cpp's use_more_bits: the first and last eighth of the layers and every third between.
bool use_more_bits(int i, int n) {
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

// The recipe's type before fallbacks (llama_tensor_get_type_impl for a dense model).
DType mix_type(const std::string& t, DType base, TensorKind kind, int64_t cols, int i,
               const RecipeModel& m) {
    const int n_gqa = m.n_head_kv > 0 ? m.n_head / m.n_head_kv : 1;
    const bool iq4 = t == "IQ4_NL" || t == "IQ4_XS";
    if (kind == TensorKind::Output || (m.tied_embeddings && kind == TensorKind::TokenEmbd)) {
        if (cols % dtype_block_elems(base) != 0)
            return DType::Q8_0;
        return base == DType::Q8_0 ? DType::Q8_0 : DType::Q6_K;
    }
    switch (kind) {
    case TensorKind::AttnV:
        if (t == "Q2_K")
            return n_gqa >= 4 ? DType::Q4_K : DType::Q3_K;
        if (t == "Q3_K_M")
            return i < 2 ? DType::Q5_K : DType::Q4_K;
        if (t == "Q3_K_L")
            return DType::Q5_K;
        if (iq4 && n_gqa >= 4)
            return DType::Q5_K;
        if ((t == "Q4_K_M" || t == "Q5_K_M") && use_more_bits(i, m.n_attn_v))
            return DType::Q6_K;
        if (t == "Q4_K_S" && i < 4)
            return DType::Q5_K;
        return base;
    case TensorKind::FfnDown: {
        const int n = m.n_ffn_down;
        if (t == "Q2_K")
            return DType::Q3_K;
        if (t == "Q3_K_M")
            return i < n / 16 ? DType::Q5_K : DType::Q4_K;
        if (t == "Q3_K_L")
            return DType::Q5_K;
        if (t == "Q4_K_M")
            return use_more_bits(i, n) ? DType::Q6_K : base;
        if (iq4 && i < n / 8 && !m.has_imatrix)
            return DType::Q5_K;
        if (t == "Q5_K_M" && use_more_bits(i, n))
            return DType::Q6_K;
        if (t == "Q4_K_S" && i < n / 8)
            return DType::Q5_K;
        if ((t == "Q4_0" || t == "Q5_0") && m.has_imatrix && i < n / 8)
            return t == "Q4_0" ? DType::Q4_1 : DType::Q5_1;
        return base;
    }
    case TensorKind::AttnQkv: // the fused q/k/v matrix holds V: a step up, as llama.cpp does
        if (t == "Q3_K_M" || t == "Q3_K_L")
            return DType::Q4_K;
        if (t == "Q4_K_M")
            return DType::Q5_K;
        if (t == "Q5_K_M")
            return DType::Q6_K;
        return base;
    case TensorKind::AttnOutput:
        if (t == "Q2_K")
            return DType::Q3_K;
        if (t == "Q3_K_M")
            return DType::Q4_K;
        if (t == "Q3_K_L")
            return DType::Q5_K;
        return base;
    default:
        return base;
    }
}

} // namespace

const char* quantize_recipe_version() {
    return "llama.cpp src/llama-quant.cpp at commit 007dbbf3 (master, 2026)";
}

const std::vector<QuantTarget>& quantize_targets() {
    static const std::vector<QuantTarget> targets = [] {
        std::vector<QuantTarget> v;
        for (const auto& r : kTargets) {
            QuantTarget t;
            t.name = r.name;
            t.preset = r.preset;
            t.base = r.base;
            t.description = r.description;
            t.file_type = r.file_type;
            t.pure = r.pure;
            v.push_back(std::move(t));
        }
        return v;
    }();
    return targets;
}

Result<QuantTarget> parse_quant_target(const std::string& name) {
    const std::string u = upper(name);
    for (const auto& t : quantize_targets()) {
        if (t.name == u)
            return t;
    }
    for (const char* o : kOutOfScope) {
        if (u == o)
            return make_error("quantization type '" + name + "' is out of scope for now");
    }
    if (starts_with(u, "IQ1") || starts_with(u, "IQ2") || starts_with(u, "IQ3") ||
        starts_with(u, "TQ") || starts_with(u, "MXFP4")) {
        return make_error("quantization type '" + name + "' is out of scope for now");
    }
    std::string names;
    for (const auto& t : quantize_targets())
        names += (names.empty() ? "" : ", ") + t.name;
    return make_error("unknown quantization type '" + name + "' (valid: " + names + ")");
}

TensorKind tensor_kind_of(const std::string& n) {
    if (n == "token_embd.weight")
        return TensorKind::TokenEmbd;
    if (n == "output.weight")
        return TensorKind::Output;
    auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
    if (has("attn_v.weight"))
        return TensorKind::AttnV;
    if (has("attn_k.weight"))
        return TensorKind::AttnK;
    if (has("attn_q.weight"))
        return TensorKind::AttnQ;
    if (has("attn_qkv.weight"))
        return TensorKind::AttnQkv;
    if (has("attn_output.weight"))
        return TensorKind::AttnOutput;
    if (has("ffn_down"))
        return TensorKind::FfnDown;
    if (has("ffn_gate"))
        return TensorKind::FfnGate;
    if (has("ffn_up"))
        return TensorKind::FfnUp;
    return TensorKind::Other;
}

bool tensor_is_quantizable(const std::string& name, int n_dims) {
    // MoE routers (ffn_gate_inp) stay as they are, as the common quantizer keeps them.
    return n_dims >= 2 && name.ends_with("weight") &&
           name.find("_norm.weight") == std::string::npos &&
           name.find("ffn_gate_inp.weight") == std::string::npos;
}

DType recipe_fallback_type(DType t) {
    switch (t) {
    case DType::IQ4_XS:
        return DType::IQ4_NL;
    case DType::Q2_K:
    case DType::Q3_K:
        return DType::Q4_0;
    case DType::Q4_K:
        return DType::Q5_0;
    case DType::Q5_K:
        return DType::Q5_1;
    case DType::Q6_K:
        return DType::Q8_0;
    default:
        return DType::F32;
    }
}

RecipeChoice recipe_tensor_type(const QuantTarget& target, const std::string& name, int n_dims,
                                int64_t cols, int index, const RecipeModel& model) {
    RecipeChoice c;
    c.quantizable = tensor_is_quantizable(name, n_dims);
    if (!c.quantizable) {
        c.type = c.wanted = DType::F32;
        return c;
    }
    if (dtype_is_float(target.base)) {
        c.type = c.wanted = target.base;
        return c;
    }
    c.wanted = target.pure
                   ? target.base
                   : mix_type(target.name, target.base, tensor_kind_of(name), cols, index, model);
    c.type = c.wanted;
    if (cols % dtype_block_elems(c.wanted) == 0)
        return c;
    const std::string why = "row length " + std::to_string(cols) + " is not a multiple of " +
                            std::to_string(dtype_block_elems(c.wanted)) + " (" +
                            dtype_name(c.wanted) + ")";
    const DType fb = recipe_fallback_type(c.wanted);
    if (fb == DType::F32) {
        c.unsupported = true;
        c.reason =
            why + " and the common quantizer defines no fallback for " + dtype_name(c.wanted);
        return c;
    }
    c.fallback = true;
    c.type = cols % dtype_block_elems(fb) == 0 ? fb : DType::F16;
    c.reason = why + ": " + dtype_name(c.type) +
               (c.type == DType::F16 ? std::string(" (not a multiple of 32 either)") : "");
    return c;
}

std::vector<RecipeChoice> recipe_plan(const QuantTarget& target,
                                      const std::vector<RecipeTensor>& tensors, int n_head,
                                      int n_head_kv, bool has_imatrix) {
    RecipeModel m;
    m.n_head = n_head;
    m.n_head_kv = n_head_kv;
    m.has_imatrix = has_imatrix;
    m.tied_embeddings = true;
    for (const auto& t : tensors) {
        const TensorKind k = tensor_kind_of(t.name);
        m.n_attn_v += k == TensorKind::AttnV;
        m.n_ffn_down += k == TensorKind::FfnDown;
        if (k == TensorKind::Output)
            m.tied_embeddings = false;
    }
    int i_attn_v = 0, i_ffn_down = 0;
    std::vector<RecipeChoice> out;
    out.reserve(tensors.size());
    for (const auto& t : tensors) {
        const TensorKind k = tensor_kind_of(t.name);
        int index = 0;
        if (k == TensorKind::AttnV)
            index = i_attn_v++;
        else if (k == TensorKind::FfnDown)
            index = i_ffn_down++;
        out.push_back(recipe_tensor_type(target, t.name, t.n_dims, t.cols, index, m));
    }
    return out;
}

} // namespace llmwb
