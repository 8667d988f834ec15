// Hugging Face folder -> LoadedModel: config.json, safetensors (single or sharded) and the
// tokenizer files.
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/model/arch_gemma.h"
#include "engine/model/arch_moe.h"
#include "engine/model/arch_phi3.h"
#include "engine/model/byte_reader.h"
#include "engine/model/model_loaders.h"
#include "engine/model/safetensors_file.h"
#include "engine/model/weight_binding.h"
#include "engine/tokenizer/tokenizer_files.h"
#include "engine/util/json_depth.h"

namespace llmwb {

namespace {

using nlohmann::json;

class ConfigReader {
  public:
    ConfigReader(const json& j, const std::string& file) : j_(j), file_(file) {}

    Status get_int(const char* key, int& out, std::optional<int> def = std::nullopt) const {
        auto it = j_.find(key);
        if (it == j_.end() || it->is_null()) {
            if (def) {
                out = *def;
                return ok_status();
            }
            return make_error(file_ + ": missing key '" + key + "'");
        }
        if (!it->is_number_integer() || it->get<int64_t>() < 1 ||
            it->get<int64_t>() > kMaxDimension) {
            return make_error(file_ + ": '" + key + "' must be an integer in 1.." +
                              std::to_string(kMaxDimension));
        }
        out = int(it->get<int64_t>());
        return ok_status();
    }
    Status get_float(const json& obj, const char* key, float& out,
                     std::optional<float> def = std::nullopt) const {
        auto it = obj.find(key);
        if (it == obj.end() || it->is_null()) {
            if (def) {
                out = *def;
                return ok_status();
            }
            return make_error(file_ + ": missing key '" + key + "'");
        }
        if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() <= 0) {
            return make_error(file_ + ": '" + key + "' must be a positive number");
        }
        out = float(it->get<double>());
        return ok_status();
    }
    Status get_bool(const char* key, bool& out, bool def) const {
        auto it = j_.find(key);
        if (it == j_.end() || it->is_null()) {
            out = def;
            return ok_status();
        }
        if (!it->is_boolean())
            return make_error(file_ + ": '" + key + "' must be true or false");
        out = it->get<bool>();
        return ok_status();
    }

  private:
    const json& j_;
    const std::string& file_;
};

Status read_hf_config(const std::string& file, ModelConfig& c) {
    auto mf = MappedFile::open(file);
    if (!mf)
        return mf.error();
    auto bytes = mf.value()->bytes();
    if (Status st = check_json_depth(
            std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
            kMaxJsonDepth, file);
        !st)
        return st;
    json j;
    try {
        j = json::parse(bytes.begin(), bytes.end());
    } catch (const json::exception& e) {
        std::string what = e.what();
        for (char& ch : what) {
            if (ch == '\n')
                ch = ' ';
        }
        return make_error(file + ": bad JSON: " + what);
    }
    if (!j.is_object())
        return make_error(file + ": not a JSON object");
    auto mt = j.find("model_type");
    if (mt == j.end() || !mt->is_string())
        return make_error(file + ": missing key 'model_type'");
    c.arch_name = mt->get<std::string>();
    if (is_gemma_model_type(c.arch_name)) {
        // j becomes the effective text config (defaults, text_config); gemma keys read.
        if (Status gs = read_gemma_hf_config(j, file, c); !gs)
            return gs;
    } else if (c.arch_name == "llama" || c.arch_name == "mistral") {
        c.arch = Architecture::Llama;
    } else if (c.arch_name == "qwen2") {
        c.arch = Architecture::Qwen2;
    } else if (c.arch_name == "qwen3") {
        c.arch = Architecture::Qwen3;
    } else if (c.arch_name == "phi3") {
        c.arch = Architecture::Phi3;
    } else if (c.arch_name == "qwen3_moe") {
        c.arch = Architecture::Qwen3Moe;
    } else {
        return make_error(file + ": unsupported model_type '" + printable(c.arch_name) + "'");
    }
    c.rope_style = RopeStyle::RotateHalf;
    c.qk_norm = c.arch == Architecture::Qwen3 || c.arch == Architecture::Gemma3 ||
                c.arch == Architecture::Qwen3Moe;
    ConfigReader r(j, file);
    Status s = ok_status();
    if (!(s = r.get_int("vocab_size", c.vocab_size)))
        return s;
    // Special token ids (an integer or a list of them) must lie inside the vocabulary.
    for (const char* key : {"bos_token_id", "eos_token_id"}) {
        auto it = j.find(key);
        if (it == j.end() || it->is_null())
            continue;
        const json one = json::array({*it});
        for (const json& id : it->is_array() ? *it : one)
            if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
                id.get<int64_t>() >= c.vocab_size)
                return make_error(file + ": '" + key + "' must be token ids in 0.." +
                                  std::to_string(c.vocab_size - 1) + " (vocab_size), got " +
                                  printable(id.dump()));
    }
    if (!(s = r.get_int("hidden_size", c.hidden_size)))
        return s;
    if (!(s = r.get_int("intermediate_size", c.intermediate_size)))
        return s;
    if (!(s = r.get_int("num_hidden_layers", c.num_layers)))
        return s;
    if (!(s = r.get_int("num_attention_heads", c.num_heads)))
        return s;
    if (!(s = r.get_int("num_key_value_heads", c.num_kv_heads, c.num_heads)))
        return s;
    if (c.hidden_size % c.num_heads != 0 && !j.contains("head_dim")) {
        return make_error(file + ": hidden_size is not a multiple of num_attention_heads");
    }
    if (!(s = r.get_int("head_dim", c.head_dim, c.hidden_size / c.num_heads)))
        return s;
    if (c.head_dim % 2 != 0)
        return make_error(file + ": head_dim must be even");
    if (c.num_heads % c.num_kv_heads != 0) {
        return make_error(file + ": num_attention_heads is not a multiple of num_key_value_heads");
    }
    if (!(s = r.get_int("max_position_embeddings", c.max_position, 2048)))
        return s;
    if (!(s = r.get_float(j, "rope_theta", c.rope_theta, 10000.0f)))
        return s;
    if (!(s = r.get_float(j, "rms_norm_eps", c.rms_norm_eps, 1e-6f)))
        return s;
    if (!(s = r.get_bool("tie_word_embeddings", c.tie_word_embeddings, false)))
        return s;
    if (!(s = r.get_bool("attention_bias", c.attention_bias, c.arch == Architecture::Qwen2))) {
        return s;
    }
    if (c.arch == Architecture::Qwen2)
        c.attention_bias = true;      // qwen2 always has q/k/v biases
    if (c.arch == Architecture::Phi3) // partial rotary, longrope, sliding_window
        return read_phi3_hf(j, file, c);
    if (c.arch_name == "mistral") // every layer slides (GGUF mistral files carry no window)
        if (!(s = read_hf_sliding_window(j, file, c)))
            return s;
    auto rs = j.find("rope_scaling");
    if (rs != j.end() && !rs->is_null()) {
        if (!rs->is_object())
            return make_error(file + ": 'rope_scaling' must be an object");
        std::string type;
        if (auto t = rs->find("rope_type"); t != rs->end() && t->is_string()) {
            type = t->get<std::string>();
        } else if (auto t2 = rs->find("type"); t2 != rs->end() && t2->is_string()) {
            type = t2->get<std::string>();
        }
        if (type == "llama3") {
            RopeScaling& sc = c.rope_scaling;
            sc.kind = RopeScaling::Kind::Llama3;
            if (!(s = r.get_float(*rs, "factor", sc.factor)))
                return s;
            if (!(s = r.get_float(*rs, "low_freq_factor", sc.low_freq_factor, 1.0f)))
                return s;
            if (!(s = r.get_float(*rs, "high_freq_factor", sc.high_freq_factor, 4.0f)))
                return s;
            float omp = 8192;
            if (!(s = r.get_float(*rs, "original_max_position_embeddings", omp, 8192.0f))) {
                return s;
            }
            sc.original_max_position = int(omp);
            if (sc.high_freq_factor <= sc.low_freq_factor) {
                return make_error(file +
                                  ": rope_scaling high_freq_factor must exceed low_freq_factor");
            }
        } else if (type != "default" && !type.empty()) {
            return make_error(file + ": unsupported rope_scaling type '" + printable(type) + "'");
        }
    }
    if (c.arch == Architecture::Qwen3Moe)
        return read_moe_hf_config(j, file, c);
    return ok_status();
}

} // namespace

Result<ModelConfig> hf_model_config(const std::string& config_json) {
    ModelConfig c;
    if (Status s = read_hf_config(config_json, c); !s)
        return s.error();
    return c;
}

Result<std::unique_ptr<LoadedModel>> load_hf_model(const std::string& dir) {
    namespace fs = std::filesystem;
    auto m = std::make_unique<LoadedModel>();
    m->path = dir;
    m->format = "safetensors";
    std::string trimmed = dir;
    while (trimmed.size() > 1 && trimmed.back() == '/')
        trimmed.pop_back();
    m->name = fs::path(trimmed).filename().string();
    const std::string config_path = (fs::path(dir) / "config.json").string();
    Status s = read_hf_config(config_path, m->config);
    if (!s)
        return s.error();

    const std::string tok_json = (fs::path(dir) / "tokenizer.json").string();
    std::string tok_config = (fs::path(dir) / "tokenizer_config.json").string();
    std::error_code ec;
    if (!fs::is_regular_file(tok_json, ec))
        return make_error(dir + ": missing tokenizer.json");
    if (!fs::is_regular_file(tok_config, ec))
        tok_config.clear();
    auto tok = read_tokenizer_files(tok_json, tok_config);
    if (!tok)
        return tok.error();
    m->tokenizer = std::move(tok->data);
    m->chat_template = std::move(tok->chat_template);
    int64_t max_id = int64_t(m->tokenizer.tokens.size()) - 1;
    for (const auto& a : m->tokenizer.added_tokens)
        max_id = std::max<int64_t>(max_id, a.id);
    if (max_id >= m->config.vocab_size) {
        return make_error(config_path + ": vocab_size " + std::to_string(m->config.vocab_size) +
                          " is smaller than the tokenizer (" + std::to_string(max_id + 1) +
                          " ids)");
    }

    auto set = SafetensorsSet::open_folder(dir);
    if (!set)
        return set.error();
    const SafetensorsSet& st = set.value();
    TensorLookup lookup = [&st](const std::string& name) -> std::optional<RawTensor> {
        const SafetensorsTensor* t = st.find(name);
        if (!t)
            return std::nullopt;
        RawTensor r;
        r.name = name;
        r.type = t->type;
        r.data = t->data;
        r.cols = t->cols();
        r.rows = t->rows();
        r.n_dims = int(t->shape.size());
        r.bytes = t->bytes;
        return r;
    };
    const bool gemma = is_gemma(m->config.arch);
    if (!(s = bind_weights(*m, lookup, gemma ? gemma_hf_naming(lookup) : &hf_tensor_name, false,
                           dir)))
        return s.error();
    if (gemma)
        shift_gemma_hf_norms(*m); // x / rms * (1 + w)
    m->mappings = st.mappings();
    return m;
}

} // namespace llmwb
