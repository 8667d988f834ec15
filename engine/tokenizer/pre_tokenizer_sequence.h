// The general pre-tokenizer: a sequence of Split / Digits / Punctuation / ByteLevel /
// Metaspace / WhitespaceSplit / Whitespace steps (TokenizerData::PreTokenizerStep), each
// applied to every piece the previous step produced, with Hugging Face's Split behaviours
// (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous) and invert.
//
// A Split whose regex is one of the built-in patterns (GPT-2 / Llama 3 / Qwen 2) uses the
// hand-written splitter (pre_tokenizer.h); any other regex uses PCRE2 (hf_regex.h). Work is
// iterative: each step maps a list of pieces to a new list; the number of pieces never exceeds
// the number of bytes of the text plus one prefix per piece.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/tokenizer_data.h"
#include "engine/util/result.h"

namespace llmwb {

class HfRegex;

class PreTokenizerSequence {
  public:
    static constexpr std::size_t kMaxSteps = 256;
    using StepSpec = TokenizerData::PreTokenizerStep;
    static Result<std::unique_ptr<PreTokenizerSequence>> create(const std::vector<StepSpec>& steps);
    ~PreTokenizerSequence();

    // Splits `text` (one normalized segment between added tokens) into the words BPE merges
    // within. `at_text_start`: the segment begins at offset 0 of the input (Metaspace "first").
    void split(std::string_view text, bool at_text_start, std::vector<std::string>& out) const;

    // True when some step needs PCRE2 / is a Metaspace step (for the tokenizer kind checks).
    bool has_metaspace() const;
    bool has_byte_level() const;

    struct Step;

  private:
    PreTokenizerSequence() = default;
    std::vector<std::unique_ptr<Step>> steps_;
};

// The pre-tokenizer steps a GGUF tokenizer.ggml.pre value stands for when no single built-in
// regex does ("deepseek-v3", "deepseek-llm", "gpt-4o"), as llama.cpp splits them; nullopt
// for other names.
std::optional<std::vector<TokenizerData::PreTokenizerStep>>
gguf_pre_tokenizer_steps(std::string_view pre);

// The GGUF tokenizer.ggml.pre value whose steps equal `steps`, or "" when none does.
std::string gguf_pre_tokenizer_name(const std::vector<TokenizerData::PreTokenizerStep>& steps);

} // namespace llmwb
