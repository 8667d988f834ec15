// SpeculationTuner: `--num-speculative-tokens auto`. Before each step it chooses how many of
// each request's drafts to verify, to maximise the expected tokens per second of that step:
//
//   expected tokens of a request verifying k drafts  E_r(k) = sum_{j=0..k} alpha_r^j
//     alpha_r: the request's acceptance probability per draft position. Each verified position
//     is a Bernoulli trial given that the ones before it were accepted, so alpha_r =
//     accepted / trials, with exponential forgetting and shrunk toward the engine-wide rate.
//   step time  t = a + b * tokens + c * logits_rows   fitted online by weighted least squares
//     over recent steps (a prefill chunk adds tokens without logits rows; a draft adds both, and
//     its logits row — the whole lm_head — is what makes drafts dear on a compute-bound device).
//
// A draft at position j of request r adds alpha_r^j expected tokens and b + c ms. Drafts are taken
// in decreasing order of gain while gain * t > S * b (S: expected tokens so far, t: step time
// so far), which maximises S / t because every request's gains decrease with j. A request whose
// drafts do not pay gets none; after kProbeEvery decode steps without drafts it verifies one
// (a probe), so that a change in its acceptance is noticed; each rejected probe doubles the wait
// (up to kMaxProbeEvery), an accepted one resets it. Every other step a non-zero total
// is nudged by ±kJitter drafts so that the fit sees more than one batch size.
#pragma once

#include <cstdint>
#include <span>

namespace llmwb {

// Per-request acceptance record (kept on the Request).
struct SpecTrack {
    double accepted = 0; // accepted drafts (decayed)
    double trials = 0;   // verified positions: accepted + one per rejection (decayed)
    int32_t idle_steps = 0;
    int32_t last_chosen = -1; // drafts verified at its last choice (-1: none yet)
    int32_t probe_every = 16; // decode steps between probes while drafts do not pay
    bool probe = false;       // this step verifies one draft whatever it costs
};

class SpeculationTuner {
  public:
    static constexpr int32_t kProbeEvery = 16;
    static constexpr int32_t kMaxProbeEvery = 256;
    static constexpr int32_t kJitter = 2;

    struct Candidate {
        SpecTrack* track = nullptr;
        int32_t available = 0; // drafts the proposer offered
        int32_t chosen = 0;    // out: how many of them to verify
    };

    // How many drafts to ask the proposer for (of at most k), before choose(): none while the
    // request's drafts do not pay (one, a probe, every kProbeEvery steps), else up to its last
    // choice plus room to grow — so that a model proposer computes few drafts that are dropped.
    int32_t drafts_to_ask(SpecTrack& t, int32_t k) const;
    // A verify outcome: `drafts` verified, the first `accepted` of them accepted.
    void observe_verify(SpecTrack& t, int32_t drafts, int32_t accepted);
    // A finished step: `tokens` in its batch, `logits_rows` of them with logits, `ms` wall time.
    void observe_step(int32_t tokens, int32_t logits_rows, double ms);
    // Sets every candidate's `chosen` (a probe's is 1). base_tokens: tokens of the next step
    // without drafts; base_decodes: requests of it that sample a token.
    void choose(std::span<Candidate> candidates, int32_t base_tokens, int32_t base_decodes);

    // Replaces the measured step cost with a fixed one, b_ms per draft (tests: choices that do
    // not depend on the machine's timing).
    void fix_cost(double a_ms, double b_ms);

    double alpha(const SpecTrack& t) const;
    double global_alpha() const;
    double cost_intercept_ms() const { return a_; }
    double cost_per_token_ms() const { return b_; }      // per batch token
    double cost_per_logits_row_ms() const { return c_; } // per row with logits
    double cost_per_draft_ms() const { return b_ + c_; }

  private:
    void refit();

    // Engine-wide acceptance (decayed counts).
    double g_accepted_ = 0, g_trials_ = 0;
    // Weighted sums for the step-time fit.
    double sw_ = 0, sn_ = 0, sr_ = 0, st_ = 0, snn_ = 0, srr_ = 0, snr_ = 0, snt_ = 0, srt_ = 0;
    double a_ = 0, b_ = 0, c_ = 0;
    bool fitted_ = false, fixed_ = false;
    int64_t choices_ = 0;
};

} // namespace llmwb
