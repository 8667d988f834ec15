// The general normalizer of tokenizer.json: a sequence of NFC / NFD / NFKC / NFKD / Lowercase /
// Strip / Replace (String or Regex) / Prepend steps applied in order to each text segment
// between added tokens. NFC uses the engine's own tables (nfc.h); NFD / NFKC / NFKD and
// Lowercase use ICU (LLMWB_HAVE_ICU; without it, creating such a step is an error).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/tokenizer_data.h"
#include "engine/util/result.h"

namespace llmwb {

class HfRegex;

class Normalizer {
  public:
    static constexpr std::size_t kMaxSteps = 256;
    // The normalized text stops growing (later steps are skipped) past
    // kMaxGrowth * input + kMaxExtraBytes bytes.
    static constexpr std::size_t kMaxGrowth = 16;
    static constexpr std::size_t kMaxExtraBytes = 4096;

    static Result<std::unique_ptr<Normalizer>>
    create(const std::vector<TokenizerData::NormalizerStep>& steps);
    ~Normalizer();

    std::string normalize(std::string_view text) const;
    bool empty() const { return steps_.empty(); }

  private:
    Normalizer() = default;
    struct Step {
        TokenizerData::NormalizerStep spec;
        std::unique_ptr<HfRegex> regex; // Replace with a Regex pattern
    };
    std::vector<Step> steps_;
};

// Unicode normalization forms and Rust's per-character lowercase (char::to_lowercase) of UTF-8
// text; invalid bytes pass through unchanged. False (and `out` untouched) without ICU.
enum class NormalForm { NFD, NFKC, NFKD };
bool unicode_normalize(std::string_view text, NormalForm form, std::string& out);
bool unicode_lowercase(std::string_view text, std::string& out);
bool normalizer_has_icu();

} // namespace llmwb
