// Everything needed to build a Tokenizer, whether it came from tokenizer.json (+
// tokenizer_config.json) or from GGUF tokenizer.ggml.* metadata.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llmwb {

struct TokenizerData {
    enum class Kind {
        ByteLevelBpe,     // GPT-2 / Llama 3 / Qwen: bytes mapped to printable code points
        SentencePieceBpe, // Llama 2 / Mistral: "▁" for spaces, <0xNN> byte fallback
    };
    Kind kind = Kind::ByteLevelBpe;

    std::vector<std::string> tokens; // id -> token text as stored in the vocab
    std::vector<float> scores;       // SentencePiece scores (may be empty)
    // GGUF token types: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
    std::vector<int32_t> token_types;
    std::vector<std::pair<std::string, std::string>> merges; // in rank order

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
    std::string pre_tokenizer_regex; // from tokenizer.json, verbatim (may be empty)

    bool add_bos = false;
    bool add_eos = false;
    bool add_space_prefix = true; // SentencePiece: prepend "▁" to the text
    int32_t bos_id = -1;
    int32_t eos_id = -1;
    int32_t unk_id = -1;
    int32_t pad_id = -1;
    std::vector<int32_t> eot_ids; // extra end-of-turn ids that stop generation (<|im_end|> ...)

    // ---- Finer Hugging Face semantics (added by the tokenizer module). The defaults suit data
    // built from GGUF metadata; read_tokenizer_files() sets them from tokenizer.json. ----

    // BPE model options. byte_fallback unset: true for SentencePieceBpe when <0x00>..<0xFF>
    // tokens exist. ignore_merges unset: true for the "llama3" pre-tokenizer (a word found whole
    // in the vocab is one token). nfc unset: true for the "qwen2" pre-tokenizer (every Qwen
    // tokenizer.json carries an NFC normalizer).
    std::optional<bool> byte_fallback;
    bool fuse_unk = false;
    std::optional<bool> ignore_merges;
    std::optional<bool> nfc;

    // Byte-level: ByteLevel pre-tokenizer add_prefix_space (a " " before each text segment that
    // does not start with one).
    bool byte_level_add_prefix_space = false;

    // SentencePiece: where "▁" is prepended when add_space_prefix is true.
    //  EverySegment: the Llama 2 "Prepend" normalizer (every non-empty text segment between
    //                added tokens); First / Always: the Metaspace pre-tokenizer (only when the
    //                segment does not already start with "▁"; First: only a segment at
    //                offset 0 of the text).
    enum class PrependScheme { EverySegment, First, Always };
    PrependScheme prepend_scheme = PrependScheme::EverySegment;
    bool metaspace_split = false; // Metaspace split: each "▁"-word is a separate BPE word

    // How ids turn back into text. Unset: ByteLevel for ByteLevelBpe; for SentencePieceBpe
    // replace "▁" with " ", byte fallback, and strip one leading space if add_space_prefix.
    struct Decoder {
        bool byte_level = false;       // GPT-2 byte table (per token; raw bytes if unmapped)
        bool replace_metaspace = true; // "▁" -> " " in every token
        bool byte_fallback = true;     // runs of <0xNN> tokens -> bytes (U+FFFD each if invalid)
        int strip_leading_spaces = 0;  // Strip decoder after Fuse: spaces cut from the start
        bool metaspace_first_token = false; // Metaspace decoder: "▁" dropped in token 0
    };
    std::optional<Decoder> decoder;

    // ---- The general pipeline (tokenizer.json files the flags above cannot express, and GGUF
    // tokenizer.ggml.pre values such as "deepseek-v3"). When pre_tokenizer_steps is set, the
    // Tokenizer normalizes with normalizer_steps (none when unset) and pre-tokenizes with
    // pre_tokenizer_steps, and ignores nfc, add_space_prefix, prepend_scheme,
    // metaspace_split, byte_level_add_prefix_space and pre_tokenizer_regex. ----
    struct NormalizerStep {
        enum class Type { NFC, NFD, NFKC, NFKD, Lowercase, Strip, Replace, Prepend };
        Type type = Type::NFC;
        std::string pattern;              // Replace: the String or Regex to find
        bool regex = false;               // Replace: pattern is a regex
        std::string content;              // Replace: replacement; Prepend: the prefix
        bool left = false, right = false; // Strip: which ends
    };
    struct PreTokenizerStep {
        enum class Type {
            Split,           // pattern (String or Regex), behavior, invert
            Digits,          // \p{N}: individual_digits ? Isolated each : Contiguous
            Punctuation,     // Unicode P or ASCII punctuation, one character each; behavior
            ByteLevel,       // add_prefix_space; use_regex: the GPT-2 split
            Metaspace,       // " " -> replacement, prepend_scheme, split before each replacement
            WhitespaceSplit, // runs of non-White_Space characters
            Whitespace,      // \w+|[^\w\s]+
        };
        enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };
        Type type = Type::Split;
        std::string pattern;
        bool regex = true;
        bool invert = false;
        Behavior behavior = Behavior::Isolated;
        bool individual_digits = false;
        bool add_prefix_space = false;
        bool use_regex = true;
        std::string replacement = "\xE2\x96\x81";
        PrependScheme prepend_scheme = PrependScheme::Always;
        bool prepend = true; // Metaspace: false for prepend_scheme "never"
        bool split = true;
    };
    std::optional<std::vector<NormalizerStep>> normalizer_steps;
    std::optional<std::vector<PreTokenizerStep>> pre_tokenizer_steps;
};

} // namespace llmwb
