// tokenizer.ggml.* metadata -> TokenizerData.
#include <string_view>

#include "engine/model/byte_reader.h"
#include "engine/model/model_loaders.h"

namespace llmwb {

namespace {

// tokenizer.ggml.pre -> the engine's pre-tokenizer name: the three built-in regexes under
// the names llama.cpp gives the families using them, and the multi-step splits
// ("deepseek-v3", "gpt-4o", see gguf_pre_tokenizer_steps) as they are. Any other value stays
// as written and Tokenizer::create refuses it ("unknown pre-tokenizer").
std::string pre_tokenizer_name(const std::string& pre) {
    if (pre == "llama-bpe" || pre == "llama3" || pre == "smaug-bpe" || pre == "dbrx")
        return "llama3";
    if (pre == "qwen2" || pre == "stablelm2" || pre == "deepseek-r1-qwen")
        return "qwen2";
    if (pre == "default" || pre == "gpt2" || pre == "gpt-2" || pre == "phi-2")
        return "gpt2";
    return pre;
}

} // namespace

Result<TokenizerData> tokenizer_from_gguf(const GgufFile& f, const std::string& file) {
    auto err = [&](const std::string& m) { return make_error(file + ": " + m); };
    TokenizerData t;
    const GgufValue* model = f.find("tokenizer.ggml.model");
    if (!model || model->type != GgufType::String) {
        return err("missing key tokenizer.ggml.model");
    }
    const std::string kind(model->str);
    if (kind == "gpt2") {
        t.kind = TokenizerData::Kind::ByteLevelBpe;
        t.add_space_prefix = false;
    } else if (kind == "llama") {
        t.kind = TokenizerData::Kind::SentencePieceBpe;
        t.add_bos = true; // llama.cpp's default for SentencePiece vocabularies
    } else {
        return err("unsupported tokenizer.ggml.model '" + printable(kind) + "'");
    }

    const GgufValue* tokens = f.find("tokenizer.ggml.tokens");
    if (!tokens || !tokens->is_array_of(GgufType::String) || tokens->count == 0) {
        return err("missing key tokenizer.ggml.tokens (a string array)");
    }
    if (tokens->count > uint64_t(INT32_MAX))
        return err("tokenizer.ggml.tokens is too large");
    const size_t n = tokens->strings.size();
    t.tokens.reserve(n);
    for (auto s : tokens->strings)
        t.tokens.emplace_back(s);

    if (const GgufValue* v = f.find("tokenizer.ggml.scores")) {
        if (v->type != GgufType::Array || v->count != n || v->elem_type == GgufType::String) {
            return err("tokenizer.ggml.scores must be a numeric array of " + std::to_string(n));
        }
        t.scores.resize(n);
        for (size_t i = 0; i < n; ++i)
            t.scores[i] = float(v->array_number(i));
    }
    if (const GgufValue* v = f.find("tokenizer.ggml.token_type")) {
        if (v->type != GgufType::Array || v->count != n || v->elem_type == GgufType::String ||
            v->elem_type == GgufType::F32 || v->elem_type == GgufType::F64) {
            return err("tokenizer.ggml.token_type must be an integer array of " +
                       std::to_string(n));
        }
        t.token_types.resize(n);
        for (size_t i = 0; i < n; ++i)
            t.token_types[i] = int32_t(v->array_int(i));
    }
    if (const GgufValue* v = f.find("tokenizer.ggml.merges")) {
        if (!v->is_array_of(GgufType::String)) {
            return err("tokenizer.ggml.merges must be a string array");
        }
        t.merges.reserve(v->strings.size());
        for (auto m : v->strings) {
            size_t sp = m.find(' ', 1);
            if (sp == std::string_view::npos || sp + 1 >= m.size()) {
                return err("tokenizer.ggml.merges: bad merge '" + printable(m) + "'");
            }
            t.merges.emplace_back(std::string(m.substr(0, sp)), std::string(m.substr(sp + 1)));
        }
    }
    if (const GgufValue* v = f.find("tokenizer.ggml.pre")) {
        if (v->type != GgufType::String)
            return err("tokenizer.ggml.pre must be a string");
        t.pre_tokenizer = pre_tokenizer_name(std::string(v->str));
    } else if (t.kind == TokenizerData::Kind::ByteLevelBpe) {
        t.pre_tokenizer = "gpt2";
    }

    auto read_id = [&](const char* key, int32_t& out) -> Status {
        const GgufValue* v = f.find(key);
        if (!v)
            return ok_status();
        auto id = v->as_int();
        if (!id)
            return err(std::string(key) + " must be an integer");
        if (*id < 0 || uint64_t(*id) >= n) {
            // llama.cpp writes -1 (as uint32 0xFFFFFFFF) for "none" in some files; a model
            // without an end-of-sequence token never stops by itself, so eos must be real.
            if ((*id == 0xFFFFFFFFll || *id == -1) &&
                std::string_view(key) != "tokenizer.ggml.eos_token_id")
                return ok_status();
            return err(std::string(key) + " " + std::to_string(*id) + " is out of range (" +
                       std::to_string(n) + " tokens)");
        }
        out = int32_t(*id);
        return ok_status();
    };
    for (auto [key, out] : {std::pair{"tokenizer.ggml.bos_token_id", &t.bos_id},
                            std::pair{"tokenizer.ggml.eos_token_id", &t.eos_id},
                            std::pair{"tokenizer.ggml.unknown_token_id", &t.unk_id},
                            std::pair{"tokenizer.ggml.padding_token_id", &t.pad_id}}) {
        Status s = read_id(key, *out);
        if (!s)
            return s.error();
    }
    auto read_bool = [&](const char* key, bool& out) -> Status {
        const GgufValue* v = f.find(key);
        if (!v)
            return ok_status();
        auto b = v->as_bool();
        if (!b)
            return err(std::string(key) + " must be a bool");
        out = *b;
        return ok_status();
    };
    for (auto [key, out] : {std::pair{"tokenizer.ggml.add_bos_token", &t.add_bos},
                            std::pair{"tokenizer.ggml.add_eos_token", &t.add_eos},
                            std::pair{"tokenizer.ggml.add_space_prefix", &t.add_space_prefix}}) {
        Status s = read_bool(key, *out);
        if (!s)
            return s.error();
    }

    // Control (3) and user-defined (4) tokens are matched in raw text as added tokens. So is
    // the unknown token (2): Hugging Face lists "<unk>" among the special added tokens.
    for (size_t i = 0; i < t.token_types.size(); ++i) {
        const int32_t ty = t.token_types[i];
        if (ty == 2 || ty == 3 || ty == 4) {
            TokenizerData::AddedToken a;
            a.id = int32_t(i);
            a.content = t.tokens[i];
            a.special = ty != 4;
            t.added_tokens.push_back(std::move(a));
        }
    }
    // End-of-turn tokens besides eos.
    auto add_eot = [&](int32_t id) {
        if (id < 0 || id == t.eos_id)
            return;
        for (int32_t e : t.eot_ids) {
            if (e == id)
                return;
        }
        t.eot_ids.push_back(id);
    };
    int32_t eot_key = -1;
    {
        Status s = read_id("tokenizer.ggml.eot_token_id", eot_key);
        if (!s)
            return s.error();
        add_eot(eot_key);
    }
    for (const char* name : {"<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|endoftext|>"}) {
        for (size_t i = 0; i < t.tokens.size(); ++i) {
            if (t.tokens[i] == name)
                add_eot(int32_t(i));
        }
    }
    return t;
}

} // namespace llmwb
