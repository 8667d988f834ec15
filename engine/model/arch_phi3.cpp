#include "engine/model/arch_phi3.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/model/byte_reader.h"
#include "kernels/cpu/quant.h"

namespace llmwb {

namespace {

using nlohmann::json;
constexpr int64_t kMaxWindow = int64_t(1) << 24;

// Checks a LongRoPE factor set: rotary_dim/2 finite positive numbers.
Status check_factors(const std::vector<float>& f, const ModelConfig& c, const std::string& what) {
    const size_t want = size_t(c.rotary_dims() / 2);
    if (f.size() != want)
        return make_error(what + ": " + std::to_string(f.size()) + " factors, expected " +
                          std::to_string(want) + " (rotary dimensions / 2)");
    for (float x : f)
        if (!std::isfinite(x) || x <= 0.0f)
            return make_error(what + ": every factor must be a positive finite number");
    return ok_status();
}

Status set_window(int64_t w, const std::string& what, ModelConfig& c) {
    if (w < 1 || w > kMaxWindow)
        return make_error(what + " must be an integer in 1.." + std::to_string(kMaxWindow));
    // A window that covers the whole context changes no attention: run it as full attention.
    c.sliding_window = c.max_position > 0 && w >= c.max_position ? 0 : int(w);
    return ok_status();
}

Status read_gguf_factors(const GgufFile& f, const std::string& file, const char* name,
                         const ModelConfig& c, std::vector<float>& out) {
    const GgufTensorInfo* t = f.find_tensor(name);
    if (!t)
        return make_error(file + ": missing tensor " + name + " (phi3 LongRoPE factors)");
    if (!dtype_is_float(t->type) || t->n_elements != c.rotary_dims() / 2)
        return make_error(file + ": " + name + ": expected " + std::to_string(c.rotary_dims() / 2) +
                          " float factors (rotary dimensions / 2), got " +
                          std::to_string(t->n_elements) + " of " + dtype_name(t->type));
    out.resize(size_t(t->n_elements));
    kernels::dequantize_row(t->type, t->data, out.data(), t->n_elements);
    return check_factors(out, c, file + ": " + name);
}

} // namespace

float longrope_default_attention_factor(int max_position, int original_max_position) {
    if (original_max_position <= 1 || max_position <= original_max_position)
        return 1.0f;
    const double s = double(max_position) / original_max_position;
    return float(std::sqrt(1.0 + std::log(s) / std::log(double(original_max_position))));
}

Status read_phi3_gguf(const GgufFile& f, const std::string& file, ModelConfig& c) {
    const std::string p = c.arch_name + ".";
    c.rope_style = RopeStyle::RotateHalf; // llama.cpp: phi3 is a NeoX-rope architecture
    if (const GgufValue* rd = f.find(p + "rope.dimension_count")) {
        auto n = rd->as_int();
        if (!n || *n < 2 || *n > c.head_dim || *n % 2 != 0)
            return make_error(file + ": " + p +
                              "rope.dimension_count must be an even integer in 2.." +
                              std::to_string(c.head_dim) + " (the head dimension)");
        c.rotary_dim = *n == c.head_dim ? 0 : int(*n);
    }
    if (const GgufValue* sw = f.find(p + "attention.sliding_window")) {
        auto n = sw->as_int();
        if (!n)
            return make_error(file + ": " + p + "attention.sliding_window must be an integer");
        // 0 means none in files written by some converters.
        if (*n != 0)
            if (Status s = set_window(*n, file + ": " + p + "attention.sliding_window", c); !s)
                return s;
    }
    const bool has_long = f.find_tensor("rope_factors_long.weight") != nullptr;
    const bool has_short = f.find_tensor("rope_factors_short.weight") != nullptr;
    if (!has_long && !has_short)
        return ok_status();
    RopeScaling& sc = c.rope_scaling;
    sc = RopeScaling{};
    sc.kind = RopeScaling::Kind::LongRope;
    Status s = read_gguf_factors(f, file, "rope_factors_long.weight", c, sc.long_factor);
    if (!s)
        return s;
    if (!(s = read_gguf_factors(f, file, "rope_factors_short.weight", c, sc.short_factor)))
        return s;
    const std::string ok_key = p + "rope.scaling.original_context_length";
    const GgufValue* o = f.find(ok_key);
    auto on = o ? o->as_int() : std::nullopt;
    if (!o)
        return make_error(file + ": missing key " + ok_key + " (phi3 LongRoPE)");
    if (!on || *on < 2 || *on > kMaxWindow)
        return make_error(file + ": " + ok_key + " must be an integer in 2.." +
                          std::to_string(kMaxWindow));
    sc.original_max_position = int(*on);
    sc.attention_factor =
        longrope_default_attention_factor(c.max_position, sc.original_max_position);
    if (const GgufValue* af = f.find(p + "rope.scaling.attn_factor")) {
        auto x = af->as_number();
        if (!x || !std::isfinite(*x) || *x <= 0)
            return make_error(file + ": " + p +
                              "rope.scaling.attn_factor must be a positive number");
        sc.attention_factor = float(*x);
    }
    return ok_status();
}

Status read_hf_sliding_window(const json& j, const std::string& file, ModelConfig& c) {
    auto it = j.find("sliding_window");
    if (it == j.end() || it->is_null())
        return ok_status();
    if (!it->is_number_integer())
        return make_error(file + ": 'sliding_window' must be an integer or null");
    if (it->get<int64_t>() == 0) // none, as null
        return ok_status();
    return set_window(it->get<int64_t>(), file + ": 'sliding_window'", c);
}

Status read_phi3_hf(const json& j, const std::string& file, ModelConfig& c) {
    c.rope_style = RopeStyle::RotateHalf;
    if (auto it = j.find("partial_rotary_factor"); it != j.end() && !it->is_null()) {
        const double prf = it->is_number() ? it->get<double>() : -1.0;
        if (!(prf > 0.0 && prf <= 1.0))
            return make_error(file + ": 'partial_rotary_factor' must be a number in (0, 1]");
        const int rot = int(c.head_dim * prf); // transformers: int(head_dim * factor)
        if (rot < 2 || rot % 2 != 0)
            return make_error(file + ": 'partial_rotary_factor' " + printable(it->dump()) +
                              " gives " + std::to_string(rot) +
                              " rotary dimensions per head; an even number >= 2 is needed");
        c.rotary_dim = rot == c.head_dim ? 0 : rot;
    }
    if (Status s = read_hf_sliding_window(j, file, c); !s)
        return s;
    auto rs = j.find("rope_scaling");
    if (rs == j.end() || rs->is_null())
        return ok_status();
    if (!rs->is_object())
        return make_error(file + ": 'rope_scaling' must be an object");
    std::string type;
    for (const char* k : {"rope_type", "type"})
        if (auto t = rs->find(k); type.empty() && t != rs->end() && t->is_string())
            type = t->get<std::string>();
    if (type == "default")
        return ok_status();
    if (type != "longrope" && type != "su")
        return make_error(file + ": unsupported rope_scaling type '" + printable(type) +
                          "' for phi3 (longrope)");
    RopeScaling& sc = c.rope_scaling;
    sc = RopeScaling{};
    sc.kind = RopeScaling::Kind::LongRope;
    for (const char* key : {"short_factor", "long_factor"}) {
        auto f = rs->find(key);
        if (f == rs->end() || !f->is_array())
            return make_error(file + ": rope_scaling '" + key + "' must be an array of numbers");
        if (f->size() > size_t(kMaxWindow))
            return make_error(file + ": rope_scaling '" + key + "' is too long");
        std::vector<float>& out = key[0] == 's' ? sc.short_factor : sc.long_factor;
        for (const json& x : *f) {
            if (!x.is_number())
                return make_error(file + ": rope_scaling '" + key +
                                  "' must be an array of numbers");
            out.push_back(float(x.get<double>()));
        }
        if (Status s = check_factors(out, c, file + ": rope_scaling '" + key + "'"); !s)
            return s;
    }
    // original_max_position_embeddings: top level (Phi-3 configs) or inside rope_scaling.
    const json* om = nullptr;
    if (auto top = j.find("original_max_position_embeddings"); top != j.end() && !top->is_null())
        om = &*top;
    else if (auto in = rs->find("original_max_position_embeddings");
             in != rs->end() && !in->is_null())
        om = &*in;
    if (!om)
        return make_error(file + ": missing key 'original_max_position_embeddings' (longrope)");
    if (!om->is_number_integer() || om->get<int64_t>() < 2 || om->get<int64_t>() > kMaxWindow)
        return make_error(file + ": 'original_max_position_embeddings' must be an integer in 2.." +
                          std::to_string(kMaxWindow));
    sc.original_max_position = int(om->get<int64_t>());
    sc.attention_factor =
        longrope_default_attention_factor(c.max_position, sc.original_max_position);
    if (auto af = rs->find("attention_factor"); af != rs->end() && !af->is_null()) {
        if (!af->is_number() || !std::isfinite(af->get<double>()) || af->get<double>() <= 0)
            return make_error(file + ": rope_scaling 'attention_factor' must be a positive number");
        sc.attention_factor = float(af->get<double>());
    }
    return ok_status();
}

} // namespace llmwb
