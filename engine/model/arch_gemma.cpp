#include "engine/model/arch_gemma.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/model/byte_reader.h"
#include "kernels/cpu/quant.h"

namespace llmwb {

namespace {

using nlohmann::json;

// Hugging Face defaults of the keys a gemma config.json may leave out (Gemma2Config,
// Gemma3TextConfig): the multimodal Gemma 3 checkpoints' text_config names only a few keys.
json gemma_hf_defaults(Architecture a) {
    json d = {{"vocab_size", 256000},
              {"hidden_size", 2304},
              {"intermediate_size", 9216},
              {"num_hidden_layers", 26},
              {"num_attention_heads", 8},
              {"num_key_value_heads", 4},
              {"head_dim", 256},
              {"max_position_embeddings", 8192},
              {"rms_norm_eps", 1e-6},
              {"rope_theta", 10000.0},
              {"attention_bias", false},
              {"hidden_activation", "gelu_pytorch_tanh"},
              {"query_pre_attn_scalar", 256},
              {"sliding_window", 4096},
              {"final_logit_softcapping", 30.0},
              {"attn_logit_softcapping", 50.0},
              {"tie_word_embeddings", true}};
    if (a == Architecture::Gemma3) {
        d["vocab_size"] = 262208;
        d["max_position_embeddings"] = 131072;
        d["rope_theta"] = 1000000.0;
        d["final_logit_softcapping"] = nullptr;
        d["attn_logit_softcapping"] = nullptr;
        d["sliding_window_pattern"] = 6;
        d["rope_local_base_freq"] = 10000.0;
    }
    return d;
}

// A positive integer key of the effective config (present after the defaults).
Status json_int(const json& j, const char* key, const std::string& file, int& out) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < 1 ||
        it->get<int64_t>() > kMaxDimension)
        return make_error(file + ": '" + key + "' must be an integer in 1.." +
                          std::to_string(kMaxDimension));
    out = int(it->get<int64_t>());
    return ok_status();
}

// A positive number, or 0 when null / absent and `nullable`.
Status json_positive(const json& j, const char* key, const std::string& file, float& out,
                     bool nullable) {
    auto it = j.find(key);
    if (nullable && (it == j.end() || it->is_null())) {
        out = 0.0f;
        return ok_status();
    }
    if (it == j.end() || !it->is_number() || !std::isfinite(it->get<double>()) ||
        it->get<double>() <= 0 || it->get<double>() > 1e30)
        return make_error(file + ": '" + key + "' must be a positive number" +
                          (nullable ? " or null" : ""));
    out = float(it->get<double>());
    return ok_status();
}

std::string with_prefix(const char* prefix, TensorRole role, int layer) {
    std::string n = gemma_hf_tensor_name(role, layer);
    if (n.rfind("model.", 0) == 0)
        return prefix + n.substr(6);
    return prefix + n; // lm_head.weight
}

} // namespace

bool is_gemma(Architecture a) {
    return a == Architecture::Gemma2 || a == Architecture::Gemma3;
}

bool is_gemma_model_type(const std::string& t) {
    return t == "gemma2" || t == "gemma3" || t == "gemma3_text";
}

bool is_gemma_gguf_arch(const std::string& a) {
    return a == "gemma2" || a == "gemma3";
}

std::vector<uint8_t> gemma_default_layer_sliding(Architecture a, int num_layers, int pattern) {
    std::vector<uint8_t> out(size_t(std::max(0, num_layers)), 0);
    for (int l = 0; l < num_layers; ++l)
        out[size_t(l)] = a == Architecture::Gemma2 ? l % 2 == 0 : (l + 1) % pattern != 0;
    return out;
}

void set_gemma_features(ModelConfig& c, float query_pre_attn_scalar) {
    c.activation = MlpActivation::GeluTanh;
    c.embedding_scale = std::sqrt(float(c.hidden_size)); // exact in fp32, as HF computes it
    c.post_norms = true;
    c.qk_norm = c.arch == Architecture::Gemma3;
    c.rope_style = RopeStyle::RotateHalf;
    const double qpas = query_pre_attn_scalar > 0 ? query_pre_attn_scalar : c.head_dim;
    c.query_scale = float(1.0 / std::sqrt(qpas));
    if (c.layer_sliding.empty())
        c.layer_sliding = gemma_default_layer_sliding(c.arch, c.num_layers);
    if (c.arch == Architecture::Gemma3 && c.rope_theta_local <= 0)
        c.rope_theta_local = 10000.0f;
}

float gemma_gguf_query_pre_attn_scalar(const ModelConfig& c) {
    if ((c.arch == Architecture::Gemma2 && c.num_layers == 46) ||
        (c.arch == Architecture::Gemma3 && c.num_layers == 62))
        return float(c.hidden_size) / float(c.num_heads);
    return float(c.head_dim);
}

Status read_gemma_gguf_config(const GgufFile& f, const std::string& file, ModelConfig& c) {
    const std::string a = c.arch_name + ".";
    // An optional positive number; 0 when absent.
    auto number = [&](const std::string& key, float& out) -> Status {
        out = 0.0f;
        const GgufValue* v = f.find(a + key);
        if (!v)
            return ok_status();
        auto x = v->as_number();
        if (!x || !std::isfinite(*x) || *x <= 0 || *x > 1e30)
            return make_error(file + ": " + a + key + " must be a positive number");
        out = float(*x);
        return ok_status();
    };
    Status s = number("attn_logit_softcapping", c.attn_logit_softcap);
    if (!s)
        return s;
    if (!(s = number("final_logit_softcapping", c.final_logit_softcap)))
        return s;
    c.sliding_window = 0;
    if (const GgufValue* v = f.find(a + "attention.sliding_window")) {
        auto n = v->as_int();
        if (!n || *n < 1 || *n > kMaxDimension)
            return make_error(file + ": " + a +
                              "attention.sliding_window must be an integer in 1.." +
                              std::to_string(kMaxDimension));
        c.sliding_window = int(*n);
    }
    if (const GgufValue* st = f.find(a + "rope.scaling.type")) {
        float factor = 1.0f;
        if (!(s = number("rope.scaling.factor", factor)))
            return s;
        if (st->type == GgufType::String && std::string(st->str) == "linear" && factor > 0 &&
            factor != 1.0f) {
            c.rope_scaling = RopeScaling{};
            c.rope_scaling.kind = RopeScaling::Kind::Linear;
            c.rope_scaling.factor = factor;
        }
    }
    c.layer_sliding.clear();
    set_gemma_features(c, gemma_gguf_query_pre_attn_scalar(c));
    if (c.arch == Architecture::Gemma3 && !f.find_tensor("blk.0.attn_q_norm.weight"))
        return make_error(file + ": missing tensor blk.0.attn_q_norm.weight (gemma3 q/k norm)");
    if (!f.find_tensor("token_embd.weight"))
        return make_error(file + ": missing tensor token_embd.weight");
    return ok_status();
}

Status read_gemma_hf_config(json& j, const std::string& file, ModelConfig& c) {
    const std::string mt = j.value("model_type", std::string());
    c.arch = mt == "gemma2" ? Architecture::Gemma2 : Architecture::Gemma3;
    c.arch_name = mt == "gemma2" ? "gemma2" : "gemma3";
    const json* text = &j;
    if (mt == "gemma3") {
        auto tc = j.find("text_config");
        if (tc != j.end() && !tc->is_null()) {
            if (!tc->is_object())
                return make_error(file + ": 'text_config' must be an object");
            auto tmt = tc->find("model_type");
            if (tmt != tc->end() && (!tmt->is_string() || tmt->get<std::string>() != "gemma3_text"))
                return make_error(file + ": text_config.model_type must be \"gemma3_text\"");
            text = &*tc;
        }
    }
    json eff = gemma_hf_defaults(c.arch);
    for (auto it = text->begin(); it != text->end(); ++it)
        eff[it.key()] = it.value();
    // Token ids and tying may sit at the top level of a multimodal config.
    if (text != &j)
        for (const char* key : {"bos_token_id", "eos_token_id", "tie_word_embeddings"})
            if (j.contains(key) && !text->contains(key))
                eff[key] = j[key];
    eff["model_type"] = mt;

    Status s = json_int(eff, "hidden_size", file, c.hidden_size);
    if (!s)
        return s;
    if (!(s = json_int(eff, "num_hidden_layers", file, c.num_layers)))
        return s;
    if (!(s = json_int(eff, "head_dim", file, c.head_dim)))
        return s;
    std::string act;
    const char* act_key = eff.contains("hidden_activation") && !eff["hidden_activation"].is_null()
                              ? "hidden_activation"
                              : "hidden_act";
    if (auto it = eff.find(act_key); it != eff.end() && it->is_string())
        act = it->get<std::string>();
    if (act != "gelu_pytorch_tanh")
        return make_error(file + ": '" + act_key + "' must be \"gelu_pytorch_tanh\" for " +
                          c.arch_name + ", got " + printable(act));
    if (!(s = json_positive(eff, "attn_logit_softcapping", file, c.attn_logit_softcap, true)))
        return s;
    if (!(s = json_positive(eff, "final_logit_softcapping", file, c.final_logit_softcap, true)))
        return s;
    float qpas = 0.0f;
    if (!(s = json_positive(eff, "query_pre_attn_scalar", file, qpas, false)))
        return s;
    c.sliding_window = 0;
    if (auto it = eff.find("sliding_window"); it != eff.end() && !it->is_null())
        if (!(s = json_int(eff, "sliding_window", file, c.sliding_window)))
            return s;

    // Which layers slide: layer_types (newer configs), else the family's pattern.
    c.layer_sliding.clear();
    if (auto lt = eff.find("layer_types"); lt != eff.end() && !lt->is_null()) {
        if (!lt->is_array() || lt->size() != size_t(c.num_layers))
            return make_error(file + ": 'layer_types' must be an array of num_hidden_layers (" +
                              std::to_string(c.num_layers) + ") strings");
        for (const json& t : *lt) {
            const std::string v = t.is_string() ? t.get<std::string>() : std::string();
            if (v != "sliding_attention" && v != "full_attention")
                return make_error(file +
                                  ": 'layer_types' entries must be \"sliding_attention\" "
                                  "or \"full_attention\", got " +
                                  printable(t.dump()));
            c.layer_sliding.push_back(v == "sliding_attention");
        }
    } else if (c.arch == Architecture::Gemma3) {
        int pattern = 6;
        if (auto it = eff.find("sliding_window_pattern"); it != eff.end() && !it->is_null())
            if (!(s = json_int(eff, "sliding_window_pattern", file, pattern)))
                return s;
        c.layer_sliding = gemma_default_layer_sliding(c.arch, c.num_layers, pattern);
    }
    if (c.arch == Architecture::Gemma3 &&
        !(s = json_positive(eff, "rope_local_base_freq", file, c.rope_theta_local, false)))
        return s;

    // rope_scaling: linear (gemma3's global layers) or none; read here, hidden from the caller.
    c.rope_scaling = RopeScaling{};
    if (auto rs = eff.find("rope_scaling"); rs != eff.end() && !rs->is_null()) {
        if (!rs->is_object())
            return make_error(file + ": 'rope_scaling' must be an object");
        std::string type;
        if (auto t = rs->find("rope_type"); t != rs->end() && t->is_string())
            type = t->get<std::string>();
        else if (auto t2 = rs->find("type"); t2 != rs->end() && t2->is_string())
            type = t2->get<std::string>();
        if (type == "linear") {
            float factor = 1.0f;
            if (!(s = json_positive(*rs, "factor", file, factor, false)))
                return s;
            if (factor != 1.0f) {
                c.rope_scaling.kind = RopeScaling::Kind::Linear;
                c.rope_scaling.factor = factor;
            }
        } else if (type != "default" && !type.empty()) {
            return make_error(file + ": unsupported rope_scaling type '" + printable(type) +
                              "' for " + c.arch_name);
        }
        eff.erase("rope_scaling");
    }
    set_gemma_features(c, qpas);
    j = std::move(eff);
    return ok_status();
}

std::string gemma_hf_tensor_name(TensorRole role, int layer) {
    if (role == TensorRole::FfnNorm)
        return "model.layers." + std::to_string(layer) + ".pre_feedforward_layernorm.weight";
    return hf_tensor_name(role, layer);
}

std::string gemma_mm_hf_tensor_name(TensorRole role, int layer) {
    return with_prefix("language_model.model.", role, layer);
}

std::string gemma_mm2_hf_tensor_name(TensorRole role, int layer) {
    return with_prefix("model.language_model.", role, layer);
}

std::string hf_tensor_name_for(const ModelConfig& c, TensorRole role, int layer) {
    return is_gemma(c.arch) ? gemma_hf_tensor_name(role, layer) : hf_tensor_name(role, layer);
}

HfNaming gemma_hf_naming(const TensorLookup& lookup) {
    if (lookup(gemma_hf_tensor_name(TensorRole::TokEmbd, 0)))
        return &gemma_hf_tensor_name;
    if (lookup(gemma_mm_hf_tensor_name(TensorRole::TokEmbd, 0)))
        return &gemma_mm_hf_tensor_name;
    if (lookup(gemma_mm2_hf_tensor_name(TensorRole::TokEmbd, 0)))
        return &gemma_mm2_hf_tensor_name;
    return &gemma_hf_tensor_name; // binding names the missing tensor
}

bool is_norm_role(TensorRole role) {
    switch (role) {
    case TensorRole::AttnNorm:
    case TensorRole::FfnNorm:
    case TensorRole::PostAttnNorm:
    case TensorRole::PostFfnNorm:
    case TensorRole::QNorm:
    case TensorRole::KNorm:
    case TensorRole::OutputNorm:
        return true;
    default:
        return false;
    }
}

void shift_gemma_hf_norms(LoadedModel& m) {
    auto shift = [&m](TensorView& t) {
        if (!t.present())
            return;
        std::vector<float> buf(size_t(t.rows * t.cols));
        for (int64_t r = 0; r < t.rows; ++r)
            kernels::dequantize_row(t.type, t.row(r), buf.data() + r * t.cols, t.cols);
        for (float& x : buf)
            x += 1.0f;
        m.owned_f32.push_back(std::move(buf));
        t.type = DType::F32;
        t.data = m.owned_f32.back().data();
    };
    shift(m.weights.output_norm);
    for (LayerWeights& l : m.weights.layers)
        for (TensorView* t :
             {&l.attn_norm, &l.ffn_norm, &l.post_attn_norm, &l.post_ffn_norm, &l.q_norm, &l.k_norm})
            shift(*t);
}

} // namespace llmwb
