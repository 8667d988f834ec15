#include "engine/serving/speculative.h"

#include <algorithm>

namespace llmwb {

const char* speculative_method_name(SpeculativeMethod m) {
    switch (m) {
    case SpeculativeMethod::Off:
        return "off";
    case SpeculativeMethod::Ngram:
        return "ngram";
    case SpeculativeMethod::Draft:
        return "draft";
    case SpeculativeMethod::SelfQ4:
        return "self-q4";
    }
    return "off";
}

Status SpeculativeConfig::validate() const {
    if (method == SpeculativeMethod::Draft && draft_model.empty())
        return make_error("speculative method draft needs a draft model");
    if (num_speculative_tokens < 0 || num_speculative_tokens > kMaxSpeculativeTokens)
        return make_error("num_speculative_tokens must be in [0, " +
                          std::to_string(kMaxSpeculativeTokens) + "], got " +
                          std::to_string(num_speculative_tokens));
    if (prompt_lookup_min < 1)
        return make_error("prompt_lookup_min must be >= 1, got " +
                          std::to_string(prompt_lookup_min));
    if (prompt_lookup_max < prompt_lookup_min || prompt_lookup_max > 64)
        return make_error("prompt_lookup_max must be in [prompt_lookup_min (" +
                          std::to_string(prompt_lookup_min) + "), 64], got " +
                          std::to_string(prompt_lookup_max));
    return ok_status();
}

std::vector<int32_t> propose_ngram(std::span<const int32_t> tokens, int32_t min_n, int32_t max_n,
                                   int32_t k) {
    const auto len = static_cast<int64_t>(tokens.size());
    if (k <= 0)
        return {};
    for (int64_t n = std::min<int64_t>(max_n, len - 1); n >= std::max(1, min_n); --n) {
        const auto suffix = tokens.subspan(static_cast<size_t>(len - n));
        // Earliest start i < len - n whose n tokens equal the suffix (the suffix itself
        // excluded), so that at least one token follows the match.
        for (int64_t i = 0; i + n < len; ++i) {
            if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + i))
                continue;
            const int64_t from = i + n;
            const int64_t take = std::min<int64_t>(k, len - from);
            return std::vector<int32_t>(tokens.begin() + from, tokens.begin() + from + take);
        }
    }
    return {};
}

} // namespace llmwb
