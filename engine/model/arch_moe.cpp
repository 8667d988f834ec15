#include "engine/model/arch_moe.h"

#include <nlohmann/json.hpp>

#include "engine/model/byte_reader.h"

namespace llmwb {

namespace {

Status check_moe_sizes(const std::string& file, const ModelConfig& c, const char* count_key,
                       const char* used_key) {
    if (c.num_experts_used > c.num_experts)
        return make_error(file + ": " + used_key + " (" + std::to_string(c.num_experts_used) +
                          ") exceeds " + count_key + " (" + std::to_string(c.num_experts) + ")");
    return ok_status();
}

// GGUF integer key <arch>.<key> in [1, max]; `def` when absent (required without one).
Status gguf_int(const GgufFile& f, const std::string& file, const std::string& key, int max,
                int& out, std::optional<int> def = std::nullopt) {
    const GgufValue* v = f.find(key);
    if (!v) {
        if (def) {
            out = *def;
            return ok_status();
        }
        return make_error(file + ": missing key " + key);
    }
    auto n = v->as_int();
    if (!n || *n < 1 || *n > max)
        return make_error(file + ": " + key + " must be an integer in 1.." + std::to_string(max));
    out = int(*n);
    return ok_status();
}

Status json_int(const nlohmann::json& j, const std::string& file, const char* key, int max,
                int& out, std::optional<int> def = std::nullopt) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        if (def) {
            out = *def;
            return ok_status();
        }
        return make_error(file + ": missing key '" + key + "'");
    }
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > max)
        return make_error(file + ": '" + key + "' must be an integer in 1.." + std::to_string(max));
    out = int(it->get<int64_t>());
    return ok_status();
}

const char* expert_suffix(TensorRole role) {
    switch (role) {
    case TensorRole::ExpGate:
        return "gate_proj.weight";
    case TensorRole::ExpUp:
        return "up_proj.weight";
    default:
        return "down_proj.weight";
    }
}

// Looks up `name`, checks its 2-D view is [rows][cols], and accounts its bytes.
Status bind_matrix(LoadedModel& m, const TensorLookup& lookup, const std::string& name,
                   int64_t rows, int64_t cols, const std::string& file, RawTensor& out) {
    auto t = lookup(name);
    if (!t)
        return make_error(file + ": missing tensor " + name);
    if (t->rows != rows || t->cols != cols)
        return make_error(file + ": " + name + ": shape [" + std::to_string(t->rows) + ", " +
                          std::to_string(t->cols) + "], expected [" + std::to_string(rows) + ", " +
                          std::to_string(cols) + "] (shape mismatch)");
    m.weight_bytes += t->bytes;
    m.parameter_count += t->rows * t->cols;
    out = std::move(*t);
    return ok_status();
}

TensorView view_of(const RawTensor& t, int64_t first_row, int64_t rows) {
    TensorView v;
    v.type = t.type;
    v.rows = rows;
    v.cols = t.cols;
    v.name = t.name;
    v.data = t.data + first_row * dtype_row_bytes(t.type, t.cols);
    return v;
}

} // namespace

Status read_moe_gguf_config(const GgufFile& f, const std::string& file, ModelConfig& c) {
    const std::string p = c.arch_name + ".";
    Status s = ok_status();
    if (!(s = gguf_int(f, file, p + "expert_count", kMaxExperts, c.num_experts)))
        return s;
    if (!(s = gguf_int(f, file, p + "expert_used_count", kMaxExperts, c.num_experts_used)))
        return s;
    if (!(s = gguf_int(f, file, p + "expert_feed_forward_length", kMaxDimension,
                       c.expert_intermediate_size)))
        return s;
    c.expert_norm_topk = true;
    if (const GgufValue* v = f.find(p + "expert_weights_norm")) {
        auto b = v->as_bool();
        if (!b)
            return make_error(file + ": " + p + "expert_weights_norm must be a boolean");
        c.expert_norm_topk = *b;
    }
    if (const GgufValue* v = f.find(p + "expert_shared_count")) {
        auto n = v->as_int();
        if (!n || *n != 0)
            return make_error(file + ": " + p +
                              "expert_shared_count: shared experts are not supported for " +
                              c.arch_name);
    }
    return check_moe_sizes(file, c, (p + "expert_count").c_str(),
                           (p + "expert_used_count").c_str());
}

Status read_moe_hf_config(const nlohmann::json& j, const std::string& file, ModelConfig& c) {
    Status s = ok_status();
    if (!(s = json_int(j, file, "num_experts", kMaxExperts, c.num_experts)))
        return s;
    if (!(s = json_int(j, file, "num_experts_per_tok", kMaxExperts, c.num_experts_used)))
        return s;
    if (!(s = json_int(j, file, "moe_intermediate_size", kMaxDimension,
                       c.expert_intermediate_size)))
        return s;
    c.expert_norm_topk = false; // transformers' default for qwen3_moe
    if (auto it = j.find("norm_topk_prob"); it != j.end() && !it->is_null()) {
        if (!it->is_boolean())
            return make_error(file + ": 'norm_topk_prob' must be true or false");
        c.expert_norm_topk = it->get<bool>();
    }
    // Dense MLP layers mixed in (a layer l is sparse when (l + 1) % decoder_sparse_step == 0 and
    // l is not in mlp_only_layers): not supported, refused by name.
    int step = 1;
    if (!(s = json_int(j, file, "decoder_sparse_step", kMaxDimension, step, 1)))
        return s;
    if (step != 1)
        return make_error(file + ": 'decoder_sparse_step' " + std::to_string(step) +
                          " mixes dense MLP layers with MoE layers (unsupported; only 1)");
    if (auto it = j.find("mlp_only_layers"); it != j.end() && !it->is_null()) {
        if (!it->is_array())
            return make_error(file + ": 'mlp_only_layers' must be a list");
        if (!it->empty())
            return make_error(file + ": 'mlp_only_layers' lists dense MLP layers (unsupported; "
                                     "only an empty list)");
    }
    if (auto it = j.find("shared_expert_intermediate_size");
        it != j.end() && !it->is_null() && !(it->is_number_integer() && it->get<int64_t>() == 0))
        return make_error(file + ": 'shared_expert_intermediate_size': shared experts are not "
                                 "supported for qwen3_moe");
    return check_moe_sizes(file, c, "'num_experts'", "'num_experts_per_tok'");
}

std::string hf_expert_tensor_name(TensorRole role, int layer, int expert) {
    return "model.layers." + std::to_string(layer) + ".mlp.experts." + std::to_string(expert) +
           "." + expert_suffix(role);
}

Status bind_moe_layer(LoadedModel& m, const TensorLookup& lookup, bool stacked, int layer,
                      const std::string& file) {
    const ModelConfig& c = m.config;
    LayerWeights& L = m.weights.layers.at(size_t(layer));
    const int64_t hidden = c.hidden_size, inter = c.expert_intermediate_size;
    const int64_t n_expert = c.num_experts;
    const auto naming = stacked ? &gguf_tensor_name : &hf_tensor_name;
    RawTensor raw;
    Status s =
        bind_matrix(m, lookup, naming(TensorRole::Router, layer), n_expert, hidden, file, raw);
    if (!s)
        return s;
    L.router = view_of(raw, 0, n_expert);

    struct Proj {
        TensorRole role;
        TensorView ExpertWeights::*member;
        int64_t rows, cols; // per expert
    };
    const Proj projs[] = {{TensorRole::ExpGate, &ExpertWeights::w_gate, inter, hidden},
                          {TensorRole::ExpUp, &ExpertWeights::w_up, inter, hidden},
                          {TensorRole::ExpDown, &ExpertWeights::w_down, hidden, inter}};
    L.experts.clear();
    if (stacked) {
        // The stacked tensors' shapes are checked before one record per expert is allocated:
        // the expert count is then what the file holds.
        RawTensor t[3];
        for (int i = 0; i < 3; ++i) {
            const Proj& p = projs[i];
            const std::string name = naming(p.role, layer);
            if (!(s = bind_matrix(m, lookup, name, n_expert * p.rows, p.cols, file, t[i])))
                return s;
            if (t[i].n_dims != 3)
                return make_error(file + ": " + name + ": expected a 3-D [" +
                                  std::to_string(n_expert) + ", " + std::to_string(p.rows) + ", " +
                                  std::to_string(p.cols) + "] tensor, got " +
                                  std::to_string(t[i].n_dims) + "-D");
        }
        L.experts.resize(size_t(n_expert));
        for (int64_t e = 0; e < n_expert; ++e)
            for (int i = 0; i < 3; ++i)
                L.experts[size_t(e)].*projs[i].member =
                    view_of(t[i], e * projs[i].rows, projs[i].rows);
        return ok_status();
    }
    // One tensor per expert: the last expert must exist before records are allocated, and
    // records grow only as experts are bound.
    const std::string last = hf_expert_tensor_name(TensorRole::ExpGate, layer, int(n_expert - 1));
    if (!lookup(last))
        return make_error(file + ": the config claims " + std::to_string(n_expert) +
                          " experts but the file has no tensor " + last + " (missing tensor)");
    for (int e = 0; e < n_expert; ++e) {
        ExpertWeights& ew = L.experts.emplace_back();
        for (const Proj& p : projs) {
            if (!(s = bind_matrix(m, lookup, hf_expert_tensor_name(p.role, layer, e), p.rows,
                                  p.cols, file, raw)))
                return s;
            ew.*p.member = view_of(raw, 0, p.rows);
        }
    }
    return ok_status();
}

} // namespace llmwb
