// GGUF file -> LoadedModel: <arch>.* hyper-parameters, tokenizer.ggml.* and tensors.
#include <cmath>

#include "engine/model/arch_gemma.h"
#include "engine/model/arch_moe.h"
#include "engine/model/arch_phi3.h"
#include "engine/model/byte_reader.h"
#include "engine/model/model_loaders.h"
#include "engine/model/weight_binding.h"

namespace llmwb {

namespace {

class Keys {
  public:
    Keys(const GgufFile& f, std::string prefix, const std::string& file)
        : f_(f), prefix_(std::move(prefix)), file_(file) {}

    // Integer key in [1, kMaxDimension] (required unless a default is given).
    Status get_int(const char* key, int& out, std::optional<int> def = std::nullopt) {
        const std::string k = prefix_ + key;
        const GgufValue* v = f_.find(k);
        if (!v) {
            if (def) {
                out = *def;
                return ok_status();
            }
            return make_error(file_ + ": missing key " + k);
        }
        auto n = v->as_int();
        if (!n || *n < 1 || *n > kMaxDimension) {
            return make_error(file_ + ": " + k + " must be an integer in 1.." +
                              std::to_string(kMaxDimension));
        }
        out = int(*n);
        return ok_status();
    }
    Status get_float(const char* key, float& out, std::optional<float> def = std::nullopt) {
        const std::string k = prefix_ + key;
        const GgufValue* v = f_.find(k);
        if (!v) {
            if (def) {
                out = *def;
                return ok_status();
            }
            return make_error(file_ + ": missing key " + k);
        }
        auto x = v->as_number();
        if (!x || !std::isfinite(*x) || *x <= 0) {
            return make_error(file_ + ": " + k + " must be a positive number");
        }
        out = float(*x);
        return ok_status();
    }
    const GgufValue* find(const char* key) const { return f_.find(prefix_ + key); }

  private:
    const GgufFile& f_;
    std::string prefix_;
    const std::string& file_;
};

Status read_config(const GgufFile& f, const std::string& file, ModelConfig& c) {
    const GgufValue* a = f.find("general.architecture");
    if (!a || a->type != GgufType::String)
        return make_error(file + ": missing key general.architecture");
    c.arch_name = std::string(a->str);
    if (c.arch_name == "llama" || c.arch_name == "mistral") {
        c.arch = Architecture::Llama;
        c.rope_style = RopeStyle::Interleaved;
    } else if (c.arch_name == "qwen2") {
        c.arch = Architecture::Qwen2;
        c.rope_style = RopeStyle::RotateHalf;
    } else if (c.arch_name == "qwen3") {
        c.arch = Architecture::Qwen3;
        c.rope_style = RopeStyle::RotateHalf;
    } else if (is_gemma_gguf_arch(c.arch_name)) {
        c.arch = c.arch_name == "gemma2" ? Architecture::Gemma2 : Architecture::Gemma3;
        c.rope_style = RopeStyle::RotateHalf;
    } else if (c.arch_name == "phi3") {
        c.arch = Architecture::Phi3; // rope style, partial rotary, LongRoPE: read_phi3_gguf
    } else if (c.arch_name == "qwen3moe") {
        c.arch = Architecture::Qwen3Moe;
        c.rope_style = RopeStyle::RotateHalf;
    } else {
        return make_error(file + ": unsupported architecture '" + printable(c.arch_name) + "'");
    }
    Keys k(f, c.arch_name + ".", file);
    Status s = ok_status();
    if (!(s = k.get_int("block_count", c.num_layers)))
        return s;
    if (!(s = k.get_int("embedding_length", c.hidden_size)))
        return s;
    if (!(s = k.get_int("feed_forward_length", c.intermediate_size)))
        return s;
    if (!(s = k.get_int("attention.head_count", c.num_heads)))
        return s;
    if (!(s = k.get_int("attention.head_count_kv", c.num_kv_heads, c.num_heads)))
        return s;
    if (c.hidden_size % c.num_heads != 0 && !k.find("attention.key_length")) {
        return make_error(file + ": embedding_length is not a multiple of head_count");
    }
    if (!(s = k.get_int("attention.key_length", c.head_dim, c.hidden_size / c.num_heads)))
        return s;
    int value_length = c.head_dim;
    if (!(s = k.get_int("attention.value_length", value_length, c.head_dim)))
        return s;
    if (value_length != c.head_dim) {
        return make_error(file + ": attention.value_length differs from key_length (unsupported)");
    }
    if (c.head_dim % 2 != 0)
        return make_error(file + ": head dimension must be even");
    if (c.num_heads % c.num_kv_heads != 0) {
        return make_error(file + ": head_count is not a multiple of head_count_kv");
    }
    // Partial rotary embeddings are not supported: the rotated dimensions are the whole head.
    if (const GgufValue* rd = k.find("rope.dimension_count"); rd && c.arch != Architecture::Phi3) {
        auto n = rd->as_int();
        if (!n || *n != c.head_dim)
            return make_error(file + ": " + c.arch_name +
                              ".rope.dimension_count must equal the head dimension (" +
                              std::to_string(c.head_dim) + "), got " +
                              (n ? std::to_string(*n) : std::string("a non-integer")));
    }
    if (!(s = k.get_int("context_length", c.max_position, 2048)))
        return s;
    if (!(s = k.get_float("rope.freq_base", c.rope_theta, 10000.0f)))
        return s;
    if (!(s = k.get_float("attention.layer_norm_rms_epsilon", c.rms_norm_eps, 1e-6f)))
        return s;
    if (const GgufValue* st = k.find("rope.scaling.type")) {
        if (st->type != GgufType::String) {
            return make_error(file + ": " + c.arch_name + ".rope.scaling.type must be a string");
        }
        std::string type(st->str);
        float factor = 1.0f;
        if (!(s = k.get_float("rope.scaling.factor", factor, 1.0f)))
            return s;
        // llama3 scaling lives in the rope_freqs tensor; "none" or a factor of 1 changes nothing.
        // linear: gemma3's global layers (read_gemma_gguf_config).
        if (type != "none" && type != "llama3" && factor != 1.0f &&
            !(type == "linear" && is_gemma(c.arch))) {
            return make_error(file + ": unsupported rope scaling type '" + printable(type) + "'");
        }
    }
    if (is_gemma(c.arch))
        return read_gemma_gguf_config(f, file, c);
    if (c.arch == Architecture::Phi3)
        return read_phi3_gguf(f, file, c);
    if (c.arch == Architecture::Qwen3Moe)
        return read_moe_gguf_config(f, file, c);
    return ok_status();
}

} // namespace

Result<ModelConfig> gguf_model_config(const GgufFile& f, const std::string& file) {
    ModelConfig c;
    if (Status s = read_config(f, file, c); !s)
        return s.error();
    if (const GgufTensorInfo* embd = f.find_tensor("token_embd.weight");
        embd && embd->n_dims == 2 && embd->rows() <= kMaxDimension)
        c.vocab_size = int(embd->rows());
    c.tie_word_embeddings = f.find_tensor("output.weight") == nullptr;
    return c;
}

Result<std::unique_ptr<LoadedModel>> load_gguf_model(const std::string& path) {
    auto gf = GgufFile::open(path);
    if (!gf)
        return gf.error();
    const GgufFile& f = gf.value();
    auto m = std::make_unique<LoadedModel>();
    m->path = path;
    m->format = "gguf";
    if (const GgufValue* n = f.find("general.name"); n && n->type == GgufType::String) {
        m->name = std::string(n->str);
    } else {
        auto slash = path.find_last_of('/');
        m->name = slash == std::string::npos ? path : path.substr(slash + 1);
    }
    ModelConfig& c = m->config;
    Status s = read_config(f, path, c);
    if (!s)
        return s.error();

    const GgufTensorInfo* embd = f.find_tensor("token_embd.weight");
    if (!embd)
        return make_error(path + ": missing tensor token_embd.weight");
    if (embd->n_dims != 2 || embd->rows() > kMaxDimension) {
        return make_error(path + ": token_embd.weight must be a 2-D [vocab, hidden] tensor");
    }
    c.vocab_size = int(embd->rows());
    // An optional <arch>.vocab_size must agree with the embedding rows.
    if (const GgufValue* vs = f.find(c.arch_name + ".vocab_size")) {
        auto n = vs->as_int();
        if (!n || *n != c.vocab_size)
            return make_error(path + ": " + c.arch_name + ".vocab_size must equal the rows of " +
                              "token_embd.weight (" + std::to_string(c.vocab_size) + "), got " +
                              (n ? std::to_string(*n) : std::string("a non-integer")));
    }
    c.tie_word_embeddings = f.find_tensor("output.weight") == nullptr;
    // qwen2 always has q/k/v biases (as Hugging Face's Qwen2 config): a qwen2 file without them
    // is broken, not a bias-free model (binding then names the missing tensor).
    c.attention_bias =
        c.arch == Architecture::Qwen2 || f.find_tensor("blk.0.attn_q.bias") != nullptr;
    c.qk_norm = f.find_tensor("blk.0.attn_q_norm.weight") != nullptr;
    if ((c.arch == Architecture::Qwen3 || c.arch == Architecture::Qwen3Moe) && !c.qk_norm) {
        return make_error(path + ": missing tensor blk.0.attn_q_norm.weight (qwen3 q/k norm)");
    }

    auto tok = tokenizer_from_gguf(f, path);
    if (!tok)
        return tok.error();
    m->tokenizer = std::move(tok.value());
    if (m->tokenizer.tokens.size() > size_t(c.vocab_size)) {
        return make_error(path + ": tokenizer has " + std::to_string(m->tokenizer.tokens.size()) +
                          " tokens but token_embd.weight only " + std::to_string(c.vocab_size) +
                          " rows");
    }
    if (const GgufValue* t = f.find("tokenizer.chat_template")) {
        if (t->type != GgufType::String) {
            return make_error(path + ": tokenizer.chat_template must be a string");
        }
        m->chat_template = std::string(t->str);
    }

    TensorLookup lookup = [&f](const std::string& name) -> std::optional<RawTensor> {
        const GgufTensorInfo* t = f.find_tensor(name);
        if (!t)
            return std::nullopt;
        RawTensor r;
        r.name = name;
        r.type = t->type;
        r.data = t->data;
        r.cols = t->cols();
        r.rows = t->rows();
        r.n_dims = int(t->n_dims);
        r.bytes = t->bytes;
        return r;
    };
    if (!(s = bind_weights(*m, lookup, &gguf_tensor_name, true, path)))
        return s.error();
    m->mappings.push_back(f.mapping);
    return m;
}

} // namespace llmwb
