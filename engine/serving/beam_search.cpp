#include "engine/serving/beam_search.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "engine/tokenizer/tokenizer.h"

namespace llmwb {

const char* early_stopping_name(EarlyStopping e) {
    switch (e) {
    case EarlyStopping::True:
        return "true";
    case EarlyStopping::False:
        return "false";
    case EarlyStopping::Never:
        return "never";
    }
    return "false";
}

Result<EarlyStopping> parse_early_stopping(std::string_view text) {
    if (text == "true")
        return EarlyStopping::True;
    if (text == "false")
        return EarlyStopping::False;
    if (text == "never")
        return EarlyStopping::Never;
    return make_error("early_stopping must be true, false or never, got \"" + std::string(text) +
                      "\"");
}

namespace {

struct Beam {
    RequestId id = -1;
    double sum = 0;
    std::vector<int32_t> ids;
};

struct Candidate {
    double score;
    size_t beam;
    int32_t token;
    double logprob;
};

// The w best finished hypotheses (Hugging Face's BeamHypotheses).
class Hypotheses {
  public:
    Hypotheses(size_t width, float length_penalty)
        : width_(width), length_penalty_(length_penalty) {}

    double score_of(double sum, int64_t length) const {
        return sum / std::pow(static_cast<double>(std::max<int64_t>(1, length)), length_penalty_);
    }
    void add(std::vector<int32_t> ids, double sum, int64_t length, FinishReason finish) {
        const double score = score_of(sum, length);
        if (list_.size() >= width_ && score <= worst())
            return;
        BeamHypothesis h;
        h.ids = std::move(ids);
        h.sum_logprob = sum;
        h.score = score;
        h.finish = finish;
        // Best first; an equal score goes after those already there.
        auto at =
            std::upper_bound(list_.begin(), list_.end(), score,
                             [](double s, const BeamHypothesis& other) { return s > other.score; });
        list_.insert(at, std::move(h));
        if (list_.size() > width_)
            list_.pop_back();
    }
    double worst() const { return list_.back().score; }
    size_t size() const { return list_.size(); }
    // Hugging Face's is_done: whether no live beam can still enter the kept hypotheses.
    bool is_done(double best_sum, int64_t cur_len, int64_t max_len, EarlyStopping es) const {
        if (list_.size() < width_)
            return false;
        switch (es) {
        case EarlyStopping::True:
            return true;
        case EarlyStopping::False:
            return worst() >= score_of(best_sum, cur_len);
        case EarlyStopping::Never:
            return worst() >= score_of(best_sum, length_penalty_ > 0 ? max_len : cur_len);
        }
        return false;
    }
    std::vector<BeamHypothesis> take() { return std::move(list_); }

  private:
    size_t width_;
    float length_penalty_;
    std::vector<BeamHypothesis> list_;
};

} // namespace

Result<BeamSearchResult> beam_search(Engine& engine, std::vector<int32_t> prompt_ids,
                                     const BeamSearchParams& bp) {
    if (bp.width < 1 || bp.width > 64)
        return make_error("beam width must be in [1, 64], got " + std::to_string(bp.width));
    if (!std::isfinite(bp.length_penalty))
        return make_error("length_penalty must be finite");
    if (!bp.params.stop.empty())
        return make_error("beam search takes no stop strings (stop_token_ids end a beam)");
    auto max_tokens = resolve_max_tokens(bp.params, static_cast<int64_t>(prompt_ids.size()),
                                         engine.executor().config().max_position);
    if (!max_tokens)
        return make_error("add_request: " + max_tokens.message());
    const auto w = static_cast<size_t>(bp.width);
    SamplingParams params = bp.params;
    params.max_tokens = *max_tokens;
    params.max_tokens_set = true;
    params.logprobs = 0;
    const auto top_k =
        static_cast<int32_t>(std::min<int64_t>(2 * bp.width, engine.executor().vocab_size()));
    auto first = engine.add_scoring_request(std::move(prompt_ids), params, top_k);
    if (!first)
        return first.error();

    BeamSearchResult res;
    Hypotheses hyps(w, bp.length_penalty);
    std::vector<Beam> live{Beam{*first, 0, {}}};
    auto abort_live = [&] {
        for (const Beam& b : live)
            engine.abort(b.id);
        live.clear();
    };
    std::unordered_map<RequestId, std::vector<TokenLogprob>> reported;
    StepOutputs out;
    std::vector<Candidate> cands;
    bool done = false;
    for (int64_t t = 0; !done && !live.empty(); ++t) {
        // Step until every live beam reported its next token's logprobs.
        reported.clear();
        while (reported.size() < live.size()) {
            engine.step(out);
            res.peak_used_blocks =
                std::max<int64_t>(res.peak_used_blocks, engine.kv_manager().pool().num_used());
            for (RequestOutput& o : out.outputs) {
                const bool ours = std::any_of(live.begin(), live.end(),
                                              [&](const Beam& b) { return b.id == o.id; });
                if (!ours)
                    continue;
                if (o.finished) { // a backend failure (a beam never finishes in a step)
                    live.erase(std::remove_if(live.begin(), live.end(),
                                              [&](const Beam& b) { return b.id == o.id; }),
                               live.end());
                    abort_live();
                    return make_error("beam search: " + (engine.last_error().empty()
                                                             ? std::string("a beam was aborted")
                                                             : engine.last_error()));
                }
                if (!o.logprobs.empty())
                    reported[o.id] = std::move(o.logprobs.front().top);
            }
            if (out.step_index < 0 && reported.size() < live.size()) {
                abort_live();
                return make_error("beam search: the engine lost a beam");
            }
        }
        ++res.steps;
        // Every beam's best 2w extensions; the 2w best of all of them.
        cands.clear();
        for (size_t b = 0; b < live.size(); ++b)
            for (const TokenLogprob& tl : reported[live[b].id])
                cands.push_back({live[b].sum + tl.logprob, b, tl.id, tl.logprob});
        std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& c) {
            if (a.score != c.score)
                return a.score > c.score;
            if (a.beam != c.beam)
                return a.beam < c.beam;
            return a.token < c.token;
        });
        if (cands.size() > 2 * w)
            cands.resize(2 * w);
        std::vector<const Candidate*> next;
        for (size_t rank = 0; rank < cands.size() && next.size() < w; ++rank) {
            const Candidate& c = cands[rank];
            const Beam& b = live[c.beam];
            if (engine.is_stop_token(b.id, c.token)) {
                if (rank >= w)
                    continue; // Hugging Face: a stop beyond the first w is not a hypothesis
                std::vector<int32_t> ids = b.ids;
                ids.push_back(c.token);
                hyps.add(std::move(ids), c.score, t, FinishReason::Stop);
            } else {
                next.push_back(&c);
            }
        }
        done = !cands.empty() &&
               hyps.is_done(cands.front().score, t, params.max_tokens, bp.early_stopping);
        if (done || next.empty())
            break;
        // The next beams: a beam chosen k times continues in its request and k - 1 forks of it
        // (forked before any token is appended); beams not chosen are pruned.
        std::vector<Beam> fresh;
        std::vector<bool> used(live.size(), false);
        for (const Candidate* c : next) {
            const Beam& src = live[c->beam];
            Beam nb;
            if (!used[c->beam]) {
                used[c->beam] = true;
                nb.id = src.id;
            } else {
                SamplingParams child = params;
                child.max_tokens = params.max_tokens - static_cast<int32_t>(t);
                auto id = engine.fork(src.id, child);
                if (!id) {
                    abort_live();
                    for (const Beam& f : fresh)
                        engine.abort(f.id);
                    return make_error("beam search: " + id.message());
                }
                nb.id = *id;
                ++res.forks;
            }
            nb.sum = c->score;
            nb.ids = src.ids;
            nb.ids.push_back(c->token);
            fresh.push_back(std::move(nb));
        }
        for (size_t b = 0; b < live.size(); ++b)
            if (!used[b]) {
                engine.abort(live[b].id);
                ++res.aborted;
            }
        live.clear();
        bool at_end = false;
        for (Beam& b : fresh) {
            RequestOutput o;
            if (Status st = engine.append_token(b.id, b.ids.back(), o); !st) {
                live = std::move(fresh);
                abort_live();
                return make_error("beam search: " + st.message());
            }
            at_end |= o.finished; // max_tokens or the context: every beam is as long
        }
        live = std::move(fresh);
        if (at_end) {
            for (Beam& b : live)
                hyps.add(b.ids, b.sum, static_cast<int64_t>(b.ids.size()), FinishReason::Length);
            abort_live(); // those still running (none normally)
            break;
        }
    }
    abort_live();
    res.hypotheses = hyps.take();
    for (BeamHypothesis& h : res.hypotheses) {
        std::span<const int32_t> ids(h.ids);
        if (h.finish == FinishReason::Stop && !ids.empty())
            ids = ids.first(ids.size() - 1);
        h.text = engine.tokenizer().decode(ids, engine.config().skip_special_tokens);
    }
    return res;
}

} // namespace llmwb
