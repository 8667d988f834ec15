// Pre-tokenization: splitting text into the pieces that BPE merges within ("words").
//
// The three regexes byte-level models use (GPT-2, Llama 3, Qwen 2) are implemented by a
// hand-written splitter over a generated Unicode category table, so the engine needs no regex
// library; it reproduces find-all with leftmost-first alternation, and every byte of the text
// lands in exactly one piece (the Split "Isolated" behaviour). Any other regex needs PCRE2
// (hf_regex.h, with Oniguruma's \s); without it, creating the pre-tokenizer is an error naming
// the regex.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/util/result.h"

namespace llmwb {

class HfRegex;

enum class BuiltinPattern { Gpt2, Llama3, Qwen2 };

// The regex text of a built-in pattern, exactly as tokenizer.json files spell it.
const char* builtin_regex(BuiltinPattern p);
// "gpt2", "llama3", "qwen2".
const char* builtin_name(BuiltinPattern p);
std::optional<BuiltinPattern> builtin_from_name(std::string_view name);
std::optional<BuiltinPattern> builtin_from_regex(std::string_view regex);

// Which characters \s matches: Hugging Face tokenizers (Oniguruma) use the White_Space
// property; PCRE2 with UCP also counts U+180E. Only that one code point differs.
enum class SpaceSemantics { WhiteSpace, Pcre2 };

// Appends the pieces of `text` (views into it) to `out`. Invalid UTF-8 bytes act as
// one-byte "other" characters (neither letter, number nor space).
void split_builtin(BuiltinPattern p, std::string_view text, std::vector<std::string_view>& out,
                   SpaceSemantics spaces = SpaceSemantics::WhiteSpace);

class PreTokenizer {
  public:
    // `name` is "gpt2" / "llama3" / "qwen2", or empty / anything else to use `regex`.
    static Result<std::shared_ptr<const PreTokenizer>> create(std::string_view name,
                                                              std::string_view regex);
    ~PreTokenizer();

    void split(std::string_view text, std::vector<std::string_view>& out) const;

    std::optional<BuiltinPattern> builtin() const { return builtin_; }

  private:
    PreTokenizer() = default;
    std::optional<BuiltinPattern> builtin_;
    std::unique_ptr<HfRegex> regex_; // any other regex (PCRE2, hf_regex.h)
};

// True when the library was built with PCRE2 (unknown pre-tokenizer regexes are supported).
bool pre_tokenizer_has_pcre2();

} // namespace llmwb
