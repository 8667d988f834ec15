#include "engine/runtime/sampler.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace llmwb {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

double max_logit(std::span<const float> l) {
    float m = kNegInf;
    for (float v : l)
        m = std::max(m, v);
    return m;
}

} // namespace

// Index of the first maximum (NaNs never win unless every value is NaN: then 0). Eight
// independent running maxima, then a search for the first index holding the maximum: the
// compare chain of a one-pass argmax is ~10x slower over a 150k-entry vocabulary.
int32_t argmax_first(std::span<const float> l) {
    const size_t n = l.size();
    float m[8];
    for (float& v : m)
        v = kNegInf;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k)
            m[k] = l[i + k] > m[k] ? l[i + k] : m[k];
    float best = kNegInf;
    for (; i < n; ++i)
        best = l[i] > best ? l[i] : best;
    for (float v : m)
        best = v > best ? v : best;
    for (size_t j = 0; j < n; ++j)
        if (l[j] == best)
            return static_cast<int32_t>(j);
    return 0; // every value NaN (or -inf: then index 0 holds it and was returned above)
}

double log_softmax_at(std::span<const float> logits, int32_t id) {
    const double m = max_logit(logits);
    double z = 0.0;
    for (float v : logits)
        z += std::exp(static_cast<double>(v) - m);
    return static_cast<double>(logits[id]) - m - std::log(z);
}

std::vector<TokenLogprob> top_logprobs(std::span<const float> logits, int n) {
    n = std::min<int>(n, static_cast<int>(logits.size()));
    if (n <= 0)
        return {};
    const double m = max_logit(logits);
    double z = 0.0;
    for (float v : logits)
        z += std::exp(static_cast<double>(v) - m);
    const double log_z = m + std::log(z);
    std::vector<int32_t> ids(logits.size());
    for (size_t i = 0; i < ids.size(); ++i)
        ids[i] = static_cast<int32_t>(i);
    std::partial_sort(ids.begin(), ids.begin() + n, ids.end(), [&](int32_t a, int32_t b) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });
    std::vector<TokenLogprob> out(n);
    for (int i = 0; i < n; ++i)
        out[i] = {ids[i], static_cast<float>(static_cast<double>(logits[ids[i]]) - log_z)};
    return out;
}

Sampler::Sampler(const SamplingParams& params) : p_(params) {
    assert(params.validate().ok());
    rng_.seed(params.seed
                  ? *params.seed
                  : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}());
}

void Sampler::mark_seen(int32_t id) {
    if (id < 0)
        return;
    if (static_cast<size_t>(id) >= seen_flag_.size())
        seen_flag_.resize(id + 1, 0);
    if (!seen_flag_[id]) {
        seen_flag_[id] = 1;
        seen_ids_.push_back(id);
    }
}

void Sampler::set_prompt(std::span<const int32_t> prompt_ids) {
    for (int32_t id : seen_ids_)
        seen_flag_[id] = 0;
    seen_ids_.clear();
    out_count_.clear();
    for (int32_t id : prompt_ids)
        mark_seen(id);
}

void Sampler::accept(int32_t id) {
    mark_seen(id);
    ++out_count_[id];
}

void Sampler::apply_penalties(std::vector<float>& l) const {
    const auto vocab = static_cast<int32_t>(l.size());
    if (p_.repetition_penalty != 1.0f)
        for (int32_t id : seen_ids_) {
            if (id >= vocab)
                continue;
            l[id] = l[id] > 0.0f ? l[id] / p_.repetition_penalty : l[id] * p_.repetition_penalty;
        }
    if (p_.presence_penalty != 0.0f || p_.frequency_penalty != 0.0f)
        for (const auto& [id, count] : out_count_) {
            if (id >= vocab)
                continue;
            l[id] -= p_.frequency_penalty * static_cast<float>(count) + p_.presence_penalty;
        }
}

void Sampler::filter(const std::vector<float>& l) {
    auto better = [](const Candidate& a, const Candidate& b) {
        return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
    };
    cand_.clear();
    for (size_t i = 0; i < l.size(); ++i)
        if (l[i] != kNegInf)
            cand_.push_back({l[i], static_cast<int32_t>(i)});
    if (cand_.empty())
        return;

    // top-k: keep the k best (and every token tied with the k-th, as HF's threshold does).
    if (p_.top_k > 0 && static_cast<size_t>(p_.top_k) < cand_.size()) {
        std::nth_element(cand_.begin(), cand_.begin() + (p_.top_k - 1), cand_.end(), better);
        const float kth = cand_[p_.top_k - 1].logit;
        cand_.erase(std::remove_if(cand_.begin(), cand_.end(),
                                   [kth](const Candidate& c) { return c.logit < kth; }),
                    cand_.end());
    }
    double m = kNegInf;
    for (const Candidate& c : cand_)
        m = std::max<double>(m, c.logit);

    // top-p: the smallest best-first prefix whose probability reaches top_p.
    if (p_.top_p < 1.0f) {
        double z = 0.0;
        for (const Candidate& c : cand_)
            z += std::exp(c.logit - m);
        const double target = static_cast<double>(p_.top_p) * z;
        // Sort a small head first; most distributions reach top_p inside it.
        size_t sorted = std::min<size_t>(cand_.size(), 256);
        std::partial_sort(cand_.begin(), cand_.begin() + sorted, cand_.end(), better);
        double cum = 0.0;
        size_t keep = 0;
        for (;;) {
            while (keep < sorted && cum < target)
                cum += std::exp(cand_[keep++].logit - m);
            if (cum >= target || sorted == cand_.size())
                break;
            std::sort(cand_.begin() + sorted, cand_.end(), better);
            sorted = cand_.size();
        }
        cand_.resize(std::max<size_t>(keep, 1));
    }

    // min-p: drop tokens whose probability is below min_p times the best one's.
    if (p_.min_p > 0.0f) {
        const double thr = m + std::log(static_cast<double>(p_.min_p));
        cand_.erase(std::remove_if(cand_.begin(), cand_.end(),
                                   [thr](const Candidate& c) { return c.logit < thr; }),
                    cand_.end());
    }
}

double Sampler::uniform01() {
    return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

std::vector<float> Sampler::processed_logits(std::span<const float> logits) {
    work_.assign(logits.begin(), logits.end());
    apply_penalties(work_);
    if (p_.temperature == 0.0f)
        return work_;
    for (float& v : work_)
        v /= p_.temperature;
    filter(work_);
    std::vector<float> out(work_.size(), kNegInf);
    for (const Candidate& c : cand_)
        out[c.id] = c.logit;
    return out;
}

SampledToken Sampler::verify(std::span<const float> logits, int32_t draft, bool* accepted) {
    if (p_.temperature == 0.0f) {
        SampledToken t = sample(logits);
        *accepted = t.id == draft;
        return t;
    }
    assert(!logits.empty());
    SampledToken out;
    work_.assign(logits.begin(), logits.end());
    apply_penalties(work_);
    for (float& v : work_)
        v /= p_.temperature;
    filter(work_);
    *accepted = false;
    if (cand_.empty()) {
        out.id = 0; // every logit was -inf: nothing sensible to draw (as sample())
    } else {
        double m = kNegInf;
        for (const Candidate& c : cand_)
            m = std::max<double>(m, c.logit);
        double z = 0.0, p_draft = 0.0;
        for (const Candidate& c : cand_) {
            const double e = std::exp(c.logit - m);
            z += e;
            if (c.id == draft)
                p_draft = e;
        }
        p_draft /= z;
        if (p_draft > 0.0 && uniform01() < p_draft) {
            out.id = draft;
            *accepted = true;
        } else {
            // The residual max(0, p - q) of a one-hot q: p without the draft.
            const double rest = z * (1.0 - p_draft);
            const double u = uniform01() * rest;
            double cum = 0.0;
            out.id = -1;
            for (const Candidate& c : cand_) {
                if (c.id == draft)
                    continue;
                cum += std::exp(c.logit - m);
                out.id = c.id;
                if (u < cum)
                    break;
            }
            if (out.id < 0) // the draft was the only candidate (p(draft) = 1: accepted above)
                out.id = draft;
        }
    }
    if (p_.logprobs > 0) {
        out.logprob = static_cast<float>(log_softmax_at(logits, out.id));
        out.top = top_logprobs(logits, p_.logprobs);
    }
    return out;
}

SampledToken Sampler::sample(std::span<const float> logits) {
    assert(!logits.empty());
    SampledToken out;
    const bool penalties = p_.repetition_penalty != 1.0f || p_.presence_penalty != 0.0f ||
                           p_.frequency_penalty != 0.0f;
    if (p_.temperature == 0.0f) {
        // Greedy: first maximum = lowest id on ties. No copy of the row without penalties.
        std::span<const float> l = logits;
        if (penalties) {
            work_.assign(logits.begin(), logits.end());
            apply_penalties(work_);
            l = work_;
        }
        out.id = argmax_first(l);
    } else {
        work_.assign(logits.begin(), logits.end());
        apply_penalties(work_);
        for (float& v : work_)
            v /= p_.temperature;
        filter(work_);
        if (cand_.empty()) {
            out.id = 0; // every logit was -inf: nothing sensible to draw
        } else {
            double m = kNegInf;
            for (const Candidate& c : cand_)
                m = std::max<double>(m, c.logit);
            double z = 0.0;
            for (const Candidate& c : cand_)
                z += std::exp(c.logit - m);
            const double u = uniform01() * z;
            double cum = 0.0;
            out.id = cand_.back().id;
            for (const Candidate& c : cand_) {
                cum += std::exp(c.logit - m);
                if (u < cum) {
                    out.id = c.id;
                    break;
                }
            }
        }
    }
    if (p_.logprobs > 0) {
        out.logprob = static_cast<float>(log_softmax_at(logits, out.id));
        out.top = top_logprobs(logits, p_.logprobs);
    }
    return out;
}

} // namespace llmwb
