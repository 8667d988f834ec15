// Everything needed to build a Tokenizer, whether it came from tokenizer.json (+
// tokenizer_config.json) or from GGUF tokenizer.ggml.* metadata.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace llmwb {

struct TokenizerData {
    enum class Kind {
        ByteLevelBpe,      // GPT-2 / Llama 3 / Qwen: bytes mapped to printable code points
        SentencePieceBpe,  // Llama 2 / Mistral: "▁" for spaces, <0xNN> byte fallback
    };
    Kind kind = Kind::ByteLevelBpe;

    std::vector<std::string> tokens;  // id -> token text as stored in the vocab
    std::vector<float> scores;        // SentencePiece scores (may be empty)
    // GGUF token types: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
    std::vector<int32_t> token_types;
    std::vector<std::pair<std::string, std::string>> merges;  // in rank order

    struct AddedToken {
        int32_t id = -1;
        std::string content;
        bool special = false;
        bool lstrip = false, rstrip = false, normalized = false, single_word = false;
    };
    std::vector<AddedToken> added_tokens;

    // Pre-tokenizer name: "gpt2", "llama3", "qwen2" for byte-level BPE (GGUF tokenizer.ggml.pre
    // naming); the regex itself when it came from tokenizer.json and matches none of them.
    std::string pre_tokenizer;
    std::string pre_tokenizer_regex;  // from tokenizer.json, verbatim (may be empty)

    bool add_bos = false;
    bool add_eos = false;
    bool add_space_prefix = true;  // SentencePiece: prepend "▁" to the text
    int32_t bos_id = -1;
    int32_t eos_id = -1;
    int32_t unk_id = -1;
    int32_t pad_id = -1;
    std::vector<int32_t> eot_ids;  // extra end-of-turn ids that stop generation (<|im_end|> ...)
};

}  // namespace llmwb
