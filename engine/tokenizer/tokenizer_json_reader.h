// Internal to the tokenizer module: the pieces read_tokenizer_files() shares with the readers
// of tokenizer.json's pipeline (tokenizer_json_pipeline.cpp): field access with errors naming
// the file and field, Sequence flattening, and what the readers found.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "engine/tokenizer/tokenizer_data.h"
#include "engine/util/result.h"

namespace llmwb::tokenizer_json {

using json = nlohmann::json;

inline const char* const kMetaspace = "\xE2\x96\x81"; // U+2581 "▁"

// Field access with type checks; errors name file and field path.
class Reader {
  public:
    explicit Reader(std::string file) : file_(std::move(file)) {}

    Error error(const std::string& field, const std::string& what) const {
        return make_error(file_ + ": " + field + ": " + what);
    }
    // nullptr when absent or null.
    const json* find(const json& obj, const char* key) const {
        if (!obj.is_object())
            return nullptr;
        auto it = obj.find(key);
        if (it == obj.end() || it->is_null())
            return nullptr;
        return &*it;
    }
    Result<std::string> string_or(const json& obj, const char* key, const std::string& field,
                                  std::string dflt) const {
        const json* v = find(obj, key);
        if (!v)
            return dflt;
        if (!v->is_string())
            return error(field + "." + key, "expected a string");
        return v->get<std::string>();
    }
    Result<bool> bool_or(const json& obj, const char* key, const std::string& field,
                         bool dflt) const {
        const json* v = find(obj, key);
        if (!v)
            return dflt;
        if (!v->is_boolean())
            return error(field + "." + key, "expected true/false");
        return v->get<bool>();
    }
    const std::string& file() const { return file_; }

  private:
    std::string file_;
};

inline std::string type_of(const json& j) {
    if (j.is_object()) {
        auto it = j.find("type");
        if (it != j.end() && it->is_string())
            return it->get<std::string>();
    }
    return "";
}

// Elements of a "Sequence" (key `list_key`), nested Sequences flattened in order, or the object
// itself. Iterative: the nesting depth is the file's choice (and bounded by kMaxJsonDepth).
inline std::vector<const json*> flatten(const json& j, const char* list_key) {
    std::vector<const json*> out;
    std::vector<std::pair<const json*, std::size_t>> stack; // (Sequence array, next index)
    auto visit = [&](const json& e) {
        if (type_of(e) == "Sequence" && e.contains(list_key) && e[list_key].is_array()) {
            stack.emplace_back(&e[list_key], 0);
        } else {
            out.push_back(&e);
        }
    };
    visit(j);
    while (!stack.empty()) {
        auto& [arr, idx] = stack.back();
        if (idx >= arr->size()) {
            stack.pop_back();
            continue;
        }
        const json& e = (*arr)[idx++];
        visit(e);
    }
    return out;
}

struct Parsed {
    bool byte_level = false;    // some ByteLevel pre-tokenizer/decoder
    bool sentencepiece = false; // Prepend/Replace "▁" normalizer or Metaspace
    bool general = false;       // needs TokenizerData::normalizer_steps / pre_tokenizer_steps
    std::vector<TokenizerData::NormalizerStep> normalizer_steps;
    std::vector<TokenizerData::PreTokenizerStep> pre_tokenizer_steps;
};

// normalizer -> Parsed::normalizer_steps and, where they express it, the flags of d.
Status read_normalizer(const Reader& r, const json& root, TokenizerData& d, Parsed& p);
// pre_tokenizer -> Parsed::pre_tokenizer_steps and, where they express it, the flags of d.
Status read_pre_tokenizer(const Reader& r, const json& root, TokenizerData& d, Parsed& p);
// decoder -> d.decoder.
Status read_decoder(const Reader& r, const json& root, TokenizerData& d, Parsed& p);

} // namespace llmwb::tokenizer_json
