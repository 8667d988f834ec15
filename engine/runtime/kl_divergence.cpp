#include "engine/runtime/kl_divergence.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <string>
#include <tuple>

#include "engine/runtime/forward_batch.h"
#include "engine/runtime/kv_cache_storage.h"

namespace llmwb {

namespace {

// The log-sum-exp of a row (in double, max subtracted first), its two largest entries, or the
// first entry that is not finite.
struct RowStats {
    double log_z = 0;             // log-sum-exp = max + log(sum exp(x - max))
    int32_t top1 = -1, top2 = -1; // top2 < 0: a one-token row
    int32_t bad = -1;             // the first non-finite entry
};

RowStats row_stats(std::span<const float> row) {
    RowStats s;
    int32_t top1 = -1, top2 = -1;
    for (size_t i = 0; i < row.size(); ++i) {
        const float v = row[i];
        if (!std::isfinite(v)) {
            s.bad = static_cast<int32_t>(i);
            return s;
        }
        if (top1 < 0 || v > row[top1]) {
            top2 = top1;
            top1 = static_cast<int32_t>(i);
        } else if (top2 < 0 || v > row[top2]) {
            top2 = static_cast<int32_t>(i); // a tie with top1 lands here: margin 0
        }
    }
    s.top1 = top1;
    s.top2 = top2;
    const double m = row[top1];
    double z = 0;
    for (float v : row)
        z += std::exp(static_cast<double>(v) - m);
    s.log_z = m + std::log(z);
    return s;
}

} // namespace

Result<KldPosition> kld_position(std::span<const float> base_logits,
                                 std::span<const float> model_logits, int32_t next) {
    assert(!base_logits.empty() && base_logits.size() == model_logits.size());
    assert(next >= 0 && static_cast<size_t>(next) < base_logits.size());
    const RowStats b = row_stats(base_logits);
    if (b.bad >= 0)
        return make_error("the base model's logit for token " + std::to_string(b.bad) +
                          " is not finite");
    const RowStats m = row_stats(model_logits);
    if (m.bad >= 0)
        return make_error("the model's logit for token " + std::to_string(m.bad) +
                          " is not finite");
    KldPosition p;
    // KL(P || Q) = sum_i p_i (log p_i - log q_i), with log p_i = b_i - lse_b.
    double kld = 0;
    for (size_t i = 0; i < base_logits.size(); ++i) {
        const double lp = static_cast<double>(base_logits[i]) - b.log_z;
        const double lq = static_cast<double>(model_logits[i]) - m.log_z;
        kld += std::exp(lp) * (lp - lq);
    }
    p.kld = std::max(0.0, kld); // rounding can leave -1e-17 where the rows agree
    p.base_logprob = static_cast<double>(base_logits[next]) - b.log_z;
    p.model_logprob = static_cast<double>(model_logits[next]) - m.log_z;
    p.base_top1 = b.top1;
    p.model_top1 = m.top1;
    if (b.top2 < 0) {
        p.base_margin = 1.0;
    } else {
        p.base_margin = std::exp(static_cast<double>(base_logits[b.top1]) - b.log_z) -
                        std::exp(static_cast<double>(base_logits[b.top2]) - b.log_z);
    }
    return p;
}

void KldAccumulator::add(const KldPosition& p) {
    klds_.push_back(p.kld);
    sum_base_lp_ += p.base_logprob;
    sum_model_lp_ += p.model_logprob;
    const bool agree = p.base_top1 == p.model_top1;
    agree_ += agree;
    if (p.base_margin > margin_) {
        ++confident_;
        confident_agree_ += agree;
    }
}

KldResult KldAccumulator::summarize() {
    KldResult r;
    r.margin = margin_;
    const auto n = static_cast<int64_t>(klds_.size());
    r.positions = n;
    if (n == 0)
        return r;
    std::sort(klds_.begin(), klds_.end());
    double sum = 0;
    for (double k : klds_)
        sum += k;
    r.mean_kld = sum / static_cast<double>(n);
    auto quantile = [&](double q) {
        const double at = q * static_cast<double>(n - 1);
        const auto lo = static_cast<size_t>(std::floor(at));
        const size_t hi = std::min(lo + 1, klds_.size() - 1);
        return klds_[lo] + (klds_[hi] - klds_[lo]) * (at - static_cast<double>(lo));
    };
    r.median_kld = quantile(0.5);
    r.p99_kld = quantile(0.99);
    r.max_kld = klds_.back();
    r.top1_agreement = 100.0 * static_cast<double>(agree_) / static_cast<double>(n);
    r.confident_positions = confident_;
    if (confident_ > 0)
        r.top1_agreement_confident =
            100.0 * static_cast<double>(confident_agree_) / static_cast<double>(confident_);
    r.ppl_base = std::exp(-sum_base_lp_ / static_cast<double>(n));
    r.ppl_model = std::exp(-sum_model_lp_ / static_cast<double>(n));
    r.ppl_ratio = r.ppl_base > 0 ? r.ppl_model / r.ppl_base : 0;
    return r;
}

namespace {

int64_t context_limit(ModelExecutor& e) {
    int64_t lim = static_cast<int64_t>(e.num_blocks()) * e.block_size();
    if (e.config().max_position > 0)
        lim = std::min<int64_t>(lim, e.config().max_position);
    return lim;
}

} // namespace

Result<KldResult> kl_divergence(ModelExecutor& base, ModelExecutor& model,
                                std::span<const int32_t> ids, const KldOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto n = static_cast<int64_t>(ids.size());
    if (n < 2)
        return make_error("kld: needs at least 2 tokens, got " + std::to_string(n));
    const int32_t vocab = base.vocab_size();
    if (model.vocab_size() != vocab)
        return make_error("kld: the vocabularies differ in size (base " + std::to_string(vocab) +
                          ", model " + std::to_string(model.vocab_size()) + ")");
    if (vocab <= 0)
        return make_error("kld: the base model has an empty vocabulary");
    for (int32_t id : ids)
        if (id < 0 || id >= vocab)
            return make_error("kld: token id " + std::to_string(id) +
                              " is outside the vocabulary (size " + std::to_string(vocab) + ")");
    const int64_t limit = std::min(context_limit(base), context_limit(model));
    int64_t ctx = options.ctx > 0 ? options.ctx : std::min(limit, n);
    if (ctx < 2)
        return make_error("kld: a window of " + std::to_string(ctx) +
                          " tokens is too short (at least 2)");
    if (ctx > limit)
        return make_error("kld: a window of " + std::to_string(ctx) +
                          " tokens does not fit a context of " + std::to_string(limit));
    int64_t chunk = options.chunk > 0 ? options.chunk
                                      : std::clamp<int64_t>((int64_t{16} << 20) / vocab, 1, 512);
    const int64_t model_chunk =
        options.model_chunk > 0 ? std::min<int64_t>(options.model_chunk, chunk) : chunk;
    chunk -= chunk % model_chunk; // the model's forwards stay aligned to model_chunk
    const int64_t rows = std::min(chunk, ctx);
    std::vector<float> lb(static_cast<size_t>(rows * vocab)); // [rows][vocab] base logits
    std::vector<float> lm(static_cast<size_t>(rows * vocab)); // [rows][vocab] model logits

    KldAccumulator acc(options.margin);
    ForwardBatch batch;
    int64_t windows = 0;
    for (int64_t w0 = 0; w0 + 1 < n; w0 += ctx) {
        const int64_t wlen = std::min(ctx, n - w0); // tokens in this window (>= 2)
        if (wlen < 2)
            break; // a lone last token predicts nothing
        ++windows;
        const std::span<const int32_t> win = ids.subspan(w0, wlen);
        SequenceBlocks bb(base.block_size(), base.num_blocks());
        SequenceBlocks mb(model.block_size(), model.num_blocks());
        // Positions 0 .. wlen-2 of the window predict the next token; the last needs no logits.
        for (int64_t pos = 0; pos < wlen - 1; pos += chunk) {
            const int64_t len = std::min(chunk, wlen - 1 - pos);
            bool fits = bb.reserve(pos + len) && mb.reserve(pos + len);
            assert(fits); // ctx <= both pools
            (void)fits;
            for (auto [exec, blocks, out, step] :
                 {std::tuple{&base, &bb, lb.data(), chunk},
                  std::tuple{&model, &mb, lm.data(), model_chunk}}) {
                for (int64_t sub = 0; sub < len; sub += step) {
                    const int64_t sl = std::min(step, len - sub);
                    batch.clear();
                    batch.add_sequence(win.subspan(pos + sub, sl), static_cast<int32_t>(pos + sub),
                                       blocks->table(), exec->block_size(),
                                       ForwardBatch::Logits::All);
                    if (Status st = exec->forward(batch, out + sub * vocab); !st)
                        return make_error("kld: " + std::string(exec == &base ? "base" : "model") +
                                          ": " + st.message());
                }
            }
            for (int64_t i = 0; i < len; ++i) {
                const std::span<const float> rb(lb.data() + i * vocab, vocab);
                const std::span<const float> rm(lm.data() + i * vocab, vocab);
                auto p = kld_position(rb, rm, win[pos + i + 1]);
                if (!p)
                    return make_error("kld: position " + std::to_string(w0 + pos + i) + ": " +
                                      p.message());
                acc.add(*p);
            }
        }
    }
    KldResult r = acc.summarize();
    r.tokens = n;
    r.windows = windows;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

} // namespace llmwb
