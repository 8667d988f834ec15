// Fidelity of one model to another (a quantized model to its float base), measured as
// quantizers' users measure it: both models run over the same token ids and, at every position,
// the next-token distributions are compared. KL(P_base || P_model), top-1 agreement and both
// perplexities. Everything is computed in double over the full vocabulary with a stable
// log-softmax (max subtracted before exp).
//
// The driver streams: each window of `ctx` tokens starts from an empty KV cache (as the common
// perplexity / KL tools evaluate long texts) and is run in chunks, so at most 2 x chunk logits
// rows are held at any time, whatever the text's length (a 151936-entry vocabulary makes a row
// 600 KB).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/runtime/model_executor.h"
#include "engine/util/result.h"

namespace llmwb {

// One position: the two logits rows over the same vocabulary and the token that came next.
struct KldPosition {
    double kld = 0;           // KL(P_base || P_model) in nats, >= 0
    double base_logprob = 0;  // log P_base(next)
    double model_logprob = 0; // log P_model(next)
    int32_t base_top1 = -1;   // argmax (lowest id on ties)
    int32_t model_top1 = -1;
    double base_margin = 0; // P_base(top-1) - P_base(top-2); 1 for a one-token vocabulary
};

// Preconditions (asserted): both rows have the same non-zero length, next is inside it.
// Errors: a non-finite logit (names which model and which token id).
Result<KldPosition> kld_position(std::span<const float> base_logits,
                                 std::span<const float> model_logits, int32_t next);

// Statistics over positions (accumulate, then summarize()).
struct KldResult {
    int64_t tokens = 0; // token ids evaluated
    int64_t positions =
        0; // positions scored (tokens - windows: the last of a window predicts none)
    int64_t windows = 0;
    double mean_kld = 0, median_kld = 0, p99_kld = 0, max_kld = 0;
    double top1_agreement = 0;           // percent of positions where both argmaxes agree
    int64_t confident_positions = 0;     // positions where the base's top-2 margin > margin
    double top1_agreement_confident = 0; // percent over those (0 when there are none)
    double margin = 0.1;
    double ppl_base = 0, ppl_model = 0, ppl_ratio = 0; // ratio = ppl_model / ppl_base
    double seconds = 0;
};

class KldAccumulator {
  public:
    explicit KldAccumulator(double margin = 0.1) : margin_(margin) {}
    void add(const KldPosition& p);
    int64_t positions() const { return static_cast<int64_t>(klds_.size()); }
    // Sorts the KL values (percentiles by linear interpolation between order statistics, as
    // numpy's default). `tokens`, `windows` and `seconds` are left to the caller.
    KldResult summarize();

  private:
    double margin_;
    std::vector<double> klds_; // one per position: 8 bytes, bounded by the token count
    double sum_base_lp_ = 0, sum_model_lp_ = 0;
    int64_t agree_ = 0, confident_ = 0, confident_agree_ = 0;
};

struct KldOptions {
    int32_t ctx = 0;     // tokens per window; 0 = the largest both KV pools and contexts allow
    int32_t chunk = 0;   // tokens per forward; 0 = up to 512, limited to ~64 MB of logits per model
    double margin = 0.1; // the base's top-2 probability margin for the "confident" agreement
    // Tokens per forward of `model` inside each chunk (0: the chunk): e.g. one KV block, so that
    // a model whose cache changes when a block fills (a simulated int8 variant) is read as a
    // decode would read it. Chunks start at multiples of model_chunk inside each window.
    int32_t model_chunk = 0;
};

// Runs `base` and `model` over `ids` and compares them. Both executors must already have KV pools
// (resize_kv) of at least ctx slots; blocks 0.. are used in order and overwritten.
// Errors: fewer than 2 tokens, vocabularies of different sizes, ids outside the vocabulary,
// ctx < 2 or beyond a pool or a model's context, backend failures, non-finite logits.
Result<KldResult> kl_divergence(ModelExecutor& base, ModelExecutor& model,
                                std::span<const int32_t> ids, const KldOptions& options = {});

} // namespace llmwb
