#include "engine/serving/speculative_tuner.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace llmwb {

namespace {

constexpr double kRequestDecay = 0.9;  // per verify of that request
constexpr double kGlobalDecay = 0.995; // per verify of any request
constexpr double kStepDecay = 0.97;    // per step
constexpr double kPriorTrials = 4;     // weight of the engine-wide rate in a request's estimate
constexpr double kMinTokenCost = 0.02; // the least an extra token costs, as a share of a step

} // namespace

int32_t SpeculationTuner::drafts_to_ask(SpecTrack& t, int32_t k) const {
    t.probe = false;
    if (t.last_chosen < 0 || k <= 0)
        return std::max(0, k);
    if (t.last_chosen == 0) {
        if (++t.idle_steps < t.probe_every)
            return 0;
        t.idle_steps = 0;
        t.probe = true;
        return 1;
    }
    return std::min(k, t.last_chosen + 1 + kJitter);
}

void SpeculationTuner::observe_verify(SpecTrack& t, int32_t drafts, int32_t accepted) {
    if (drafts <= 0)
        return;
    const double trials = accepted < drafts ? accepted + 1 : accepted;
    // A lone rejected draft (a probe, or a choice of one): wait longer before the next probe.
    t.probe_every = accepted > 0  ? kProbeEvery
                    : drafts == 1 ? std::min(kMaxProbeEvery, t.probe_every * 2)
                                  : t.probe_every;
    t.accepted = t.accepted * kRequestDecay + accepted;
    t.trials = t.trials * kRequestDecay + trials;
    g_accepted_ = g_accepted_ * kGlobalDecay + accepted;
    g_trials_ = g_trials_ * kGlobalDecay + trials;
}

double SpeculationTuner::global_alpha() const {
    // Before any evidence: an even chance (the first steps then draft and measure).
    return (g_accepted_ + 1.0) / (g_trials_ + 2.0);
}

double SpeculationTuner::alpha(const SpecTrack& t) const {
    return (t.accepted + kPriorTrials * global_alpha()) / (t.trials + kPriorTrials);
}

void SpeculationTuner::fix_cost(double a_ms, double b_ms) {
    a_ = a_ms;
    b_ = b_ms;
    c_ = 0;
    fitted_ = fixed_ = true;
}

void SpeculationTuner::observe_step(int32_t tokens, int32_t logits_rows, double ms) {
    if (fixed_ || tokens <= 0 || !(ms > 0) || !std::isfinite(ms))
        return;
    const double n = tokens, r = std::max(0, logits_rows);
    const double d = kStepDecay;
    sw_ = sw_ * d + 1;
    sn_ = sn_ * d + n;
    sr_ = sr_ * d + r;
    st_ = st_ * d + ms;
    snn_ = snn_ * d + n * n;
    srr_ = srr_ * d + r * r;
    snr_ = snr_ * d + n * r;
    snt_ = snt_ * d + n * ms;
    srt_ = srt_ * d + r * ms;
    refit();
}

void SpeculationTuner::refit() {
    const double mn = sn_ / sw_, mr = sr_ / sw_, mt = st_ / sw_;
    const double vnn = std::max(0.0, snn_ / sw_ - mn * mn);
    const double vrr = std::max(0.0, srr_ / sw_ - mr * mr);
    const double vnr = snr_ / sw_ - mn * mr;
    const double cnt = snt_ / sw_ - mn * mt, crt = srt_ / sw_ - mr * mt;
    // Ridge toward a prior until the steps vary: an extra token (with its row) costs 1/32 of a
    // one-token step, split evenly (the order of a quantized matrix-vector step on a CPU).
    const double prior = mt / (32.0 + mn + mr) / 2;
    const double lambda = 0.5;
    const double p11 = vnn + lambda, p22 = vrr + lambda, p12 = vnr;
    const double q1 = cnt + lambda * prior, q2 = crt + lambda * prior;
    const double det = p11 * p22 - p12 * p12;
    b_ = det > 1e-12 ? (q1 * p22 - q2 * p12) / det : prior;
    c_ = det > 1e-12 ? (p11 * q2 - p12 * q1) / det : prior;
    if (b_ < 0) { // keep the cost non-negative: refit the other alone
        b_ = 0;
        c_ = q2 / p22;
    }
    if (c_ < 0) {
        c_ = 0;
        b_ = std::max(0.0, q1 / p11);
    }
    a_ = std::max(1e-3, mt - b_ * mn - c_ * mr);
    // No token is free: timing noise on a fast step must not make drafts that are almost never
    // accepted look worth verifying.
    if (b_ + c_ < kMinTokenCost * a_)
        b_ = kMinTokenCost * a_ - c_;
    fitted_ = true;
}

void SpeculationTuner::choose(std::span<Candidate> candidates, int32_t base_tokens,
                              int32_t base_decodes) {
    ++choices_;
    struct Gain {
        double gain;
        size_t index;
    };
    std::vector<Gain> gains;
    for (size_t i = 0; i < candidates.size(); ++i) {
        Candidate& c = candidates[i];
        c.chosen = 0;
        if (c.track->probe)
            continue;
        const double al = alpha(*c.track);
        double g = 1.0;
        for (int32_t j = 0; j < c.available; ++j) {
            g *= al;
            gains.push_back({g, i});
        }
    }
    // planned: the choice before the jitter (what the next step may grow from).
    std::vector<int32_t> planned(candidates.size(), 0);
    auto finish = [&] {
        for (size_t i = 0; i < candidates.size(); ++i) {
            Candidate& c = candidates[i];
            if (c.track->probe)
                c.chosen = planned[i] = std::min(1, c.available);
            c.track->probe = false;
            c.track->last_chosen = planned[i];
            if (planned[i] > 0)
                c.track->idle_steps = 0;
        }
    };
    if (gains.empty()) {
        finish();
        return;
    }
    std::stable_sort(gains.begin(), gains.end(),
                     [](const Gain& x, const Gain& y) { return x.gain > y.gain; });
    // A draft adds a batch token and a logits row; the base step has a row per decode.
    const double b = fitted_ ? b_ + c_ : 0.0;
    double t = fitted_ ? a_ + b_ * std::max(1, base_tokens) + c_ * std::max(1, base_decodes) : 1.0;
    double s = std::max(1, base_decodes);
    size_t taken = 0;
    for (const Gain& g : gains) {
        if (!(g.gain * t > s * b) && fitted_)
            break;
        s += g.gain;
        t += b;
        ++taken;
    }
    for (size_t i = 0; i < taken; ++i)
        ++planned[gains[i].index];
    // Jitter the total so the step-time fit sees several batch sizes.
    const int64_t phase = choices_ % 4;
    if (phase == 1)
        taken = taken > static_cast<size_t>(kJitter) ? taken - kJitter : 0;
    else if (phase == 3 && taken > 0) // never adds drafts where none pay
        taken = std::min(gains.size(), taken + kJitter);
    // Gains of one request are in position order, so taking the first `taken` gains gives each
    // request a prefix of its drafts.
    for (size_t i = 0; i < taken; ++i)
        ++candidates[gains[i].index].chosen;
    finish();
}

} // namespace llmwb
