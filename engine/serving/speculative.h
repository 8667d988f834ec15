// Speculative decoding (the way vLLM v1 does it: drafts verified inside the continuous batch).
// A proposer suggests k draft tokens for a request after each step; the next step feeds the
// request's last token and its drafts as one chunk of the varlen batch, takes logits for every
// one of those k + 1 positions, and the output processor accepts the longest run of drafts the
// target agrees with (greedy: equal to its argmax; sampling: exact rejection sampling, so the
// output distribution is the target's) plus one token of the target's own. Rejected drafts'
// KV slots are rolled back and never enter the prefix cache.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/util/result.h"

namespace llmwb {

// ngram: prompt lookup (built in). draft / self-q4: a draft model (draft_proposer.h) that the
// caller attaches with Engine::set_draft_proposer; without one these methods draft nothing.
enum class SpeculativeMethod : uint8_t { Off, Ngram, Draft, SelfQ4 };
const char* speculative_method_name(SpeculativeMethod m); // "off", "ngram", "draft", "self-q4"

inline constexpr int32_t kMaxSpeculativeTokens = 16;
// The most drafts `auto` proposes per request and step.
inline constexpr int32_t kAutoSpeculativeTokens = 8;

struct SpeculativeConfig {
    SpeculativeMethod method = SpeculativeMethod::Off;
    int32_t num_speculative_tokens = 0; // k, 0..16 (0: off); with auto_k the most per step
    // `auto`: k chosen per request and step (SpeculationTuner, speculative_tuner.h) from the
    // measured acceptance and step cost, 0 where drafts do not pay.
    bool auto_k = false;
    // ngram (prompt lookup): the last n tokens, n from prompt_lookup_max down to
    // prompt_lookup_min, are looked up in the request's prompt + output.
    int32_t prompt_lookup_min = 2;
    int32_t prompt_lookup_max = 5;
    // draft: the draft model's file or folder (the caller loads it, draft_proposer.h).
    std::string draft_model;

    bool enabled() const { return method != SpeculativeMethod::Off && num_speculative_tokens > 0; }
    // Errors name the field and its range.
    Status validate() const;
};

// Prompt lookup: for n from max_n down to min_n, the earliest earlier occurrence of the last n
// tokens of `tokens`; returns up to k tokens that followed it (the longest match wins, then the
// earliest). Empty: no match (or k <= 0).
std::vector<int32_t> propose_ngram(std::span<const int32_t> tokens, int32_t min_n, int32_t max_n,
                                   int32_t k);

// Suggests draft tokens for a request about to decode: up to k tokens to follow `tokens` (the
// prompt then the output so far; num_prompt_tokens of them are the prompt). The engine's
// built-in proposer is prompt lookup (NgramProposer); a benchmark or a test can plug in its own
// (Engine::set_draft_proposer).
class DraftProposer {
  public:
    struct Call {
        int64_t request_id = -1;
        std::span<const int32_t> tokens;
        int32_t num_prompt_tokens = 0;
        int32_t k = 0;
        std::vector<int32_t>* out = nullptr;
    };
    virtual ~DraftProposer() = default;
    virtual void propose(int64_t request_id, std::span<const int32_t> tokens,
                         int32_t num_prompt_tokens, int32_t k, std::vector<int32_t>& out) = 0;
    // Every request about to decode in one step (a model proposer batches them).
    virtual void propose_batch(std::span<const Call> calls) {
        for (const Call& c : calls)
            propose(c.request_id, c.tokens, c.num_prompt_tokens, c.k, *c.out);
    }
    // The request finished or was aborted: drop whatever the proposer keeps for it.
    virtual void release(int64_t /*request_id*/) {}
};

class NgramProposer final : public DraftProposer {
  public:
    NgramProposer(int32_t min_n, int32_t max_n) : min_n_(min_n), max_n_(max_n) {}
    void propose(int64_t, std::span<const int32_t> tokens, int32_t, int32_t k,
                 std::vector<int32_t>& out) override {
        out = propose_ngram(tokens, min_n_, max_n_, k);
    }

  private:
    int32_t min_n_, max_n_;
};

// Counters with vLLM's meaning (vllm:spec_decode_num_drafts, _num_draft_tokens,
// _num_accepted_tokens, _num_accepted_tokens_per_pos).
struct SpeculativeStats {
    int64_t num_drafts = 0;       // request-steps that carried drafts
    int64_t num_draft_tokens = 0; // draft tokens verified
    int64_t num_accepted_tokens = 0;
    std::vector<int64_t> accepted_per_pos; // [position] accepted drafts at that position

    double acceptance_rate() const {
        return num_draft_tokens > 0 ? double(num_accepted_tokens) / double(num_draft_tokens) : 0;
    }
    // 1 + accepted / drafts: tokens a verify step yields per request on average.
    double mean_acceptance_length() const {
        return num_drafts > 0 ? 1.0 + double(num_accepted_tokens) / double(num_drafts) : 0;
    }
};

} // namespace llmwb
