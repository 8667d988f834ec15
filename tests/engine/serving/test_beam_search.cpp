// Beam search on the engine (forks and pruning on the block pool) against a brute-force
// reference: the same Hugging Face rules over every token of the vocabulary, each prefix's
// logprobs from the plain double-precision reference model run from scratch (no KV cache, no
// forks). Widths 1-4, 3-5 tokens, length penalties 1 / 2 / -1, early_stopping true / false /
// never, with stop tokens that end beams early. Width 1 is greedy decoding.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "../runtime/reference_model.h"
#include "engine/serving/beam_search.h"
#include "engine/serving/generation.h"
#include "serving_test_engine.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::mini_test;

namespace {

std::vector<int32_t> prompt_ids() {
    std::mt19937 rng(21);
    const int32_t vocab = test::shared_serving_model().transformer->vocab_size();
    std::vector<int32_t> v;
    for (int i = 0; i < 9; ++i)
        v.push_back(static_cast<int32_t>(rng() % static_cast<uint32_t>(vocab)));
    return v;
}

// log_softmax of the reference model's next-token logits after `seq`, memoised by prefix.
class BruteForce {
  public:
    const std::vector<double>& logprobs(const std::vector<int32_t>& seq) {
        auto it = memo_.find(seq);
        if (it != memo_.end())
            return it->second;
        ref_.reset();
        std::vector<double> logits;
        for (int32_t t : seq)
            logits = ref_.step(t);
        const double mx = *std::max_element(logits.begin(), logits.end());
        double sum = 0;
        for (double l : logits)
            sum += std::exp(l - mx);
        const double lse = mx + std::log(sum);
        for (double& l : logits)
            l -= lse;
        return memo_.emplace(seq, std::move(logits)).first->second;
    }

  private:
    test::ReferenceModel ref_{*test::shared_serving_model().model};
    std::map<std::vector<int32_t>, std::vector<double>> memo_;
};

struct Hyp {
    std::vector<int32_t> ids;
    double sum, score;
};

// Hugging Face's beam search written out plainly over the whole vocabulary.
std::vector<Hyp> reference_beams(BruteForce& bf, const std::vector<int32_t>& prompt, int w,
                                 int max_tokens, double lp, EarlyStopping es,
                                 const std::vector<int32_t>& stops) {
    auto score_of = [&](double sum, int64_t len) {
        return sum / std::pow(static_cast<double>(std::max<int64_t>(1, len)), lp);
    };
    std::vector<Hyp> hyps; // best first, at most w
    auto add = [&](std::vector<int32_t> ids, double sum, int64_t len) {
        const double s = score_of(sum, len);
        if (static_cast<int>(hyps.size()) >= w && s <= hyps.back().score)
            return;
        auto at = std::upper_bound(hyps.begin(), hyps.end(), s,
                                   [](double v, const Hyp& h) { return v > h.score; });
        hyps.insert(at, Hyp{std::move(ids), sum, s});
        if (static_cast<int>(hyps.size()) > w)
            hyps.pop_back();
    };
    struct Beam {
        std::vector<int32_t> ids;
        double sum;
    };
    std::vector<Beam> live{{{}, 0.0}};
    for (int t = 0; t < max_tokens; ++t) {
        struct Cand {
            double score;
            size_t beam;
            int32_t tok;
        };
        std::vector<Cand> all;
        for (size_t b = 0; b < live.size(); ++b) {
            std::vector<int32_t> seq = prompt;
            seq.insert(seq.end(), live[b].ids.begin(), live[b].ids.end());
            const auto& lps = bf.logprobs(seq);
            for (size_t tok = 0; tok < lps.size(); ++tok)
                all.push_back({live[b].sum + lps[tok], b, static_cast<int32_t>(tok)});
        }
        std::sort(all.begin(), all.end(), [](const Cand& a, const Cand& c) {
            if (a.score != c.score)
                return a.score > c.score;
            return a.beam != c.beam ? a.beam < c.beam : a.tok < c.tok;
        });
        all.resize(static_cast<size_t>(2 * w));
        std::vector<Beam> next;
        for (size_t rank = 0; rank < all.size() && static_cast<int>(next.size()) < w; ++rank) {
            const Cand& c = all[rank];
            std::vector<int32_t> ids = live[c.beam].ids;
            ids.push_back(c.tok);
            if (std::find(stops.begin(), stops.end(), c.tok) != stops.end()) {
                if (static_cast<int>(rank) < w)
                    add(std::move(ids), c.score, t);
            } else {
                next.push_back({std::move(ids), c.score});
            }
        }
        bool done = false;
        if (static_cast<int>(hyps.size()) >= w) {
            const double best = all.front().score;
            if (es == EarlyStopping::True)
                done = true;
            else if (es == EarlyStopping::False)
                done = hyps.back().score >= score_of(best, t);
            else
                done = hyps.back().score >= score_of(best, lp > 0 ? max_tokens : t);
        }
        if (done)
            return hyps;
        live = std::move(next);
        if (t + 1 == max_tokens)
            for (const Beam& b : live)
                add(b.ids, b.sum, static_cast<int64_t>(b.ids.size()));
    }
    return hyps;
}

struct Row {
    const char* name;
    int width, max_tokens;
    float length_penalty;
    EarlyStopping early_stopping;
    int num_stops;  // stop tokens: the reference's best first tokens (ending beams early)
    bool stop_kept; // some kept hypothesis ends in a stop token (the comparison covers them)
};

} // namespace

MT_TEST_TABLE(beam_search_equals_brute_force, Row,
              (std::vector<Row>{{"w1_greedy", 1, 5, 1.0f, EarlyStopping::False, 0, false},
                                {"w3_no_stops", 3, 4, 1.0f, EarlyStopping::False, 0, false},
                                {"w3_stops_false", 3, 4, 1.0f, EarlyStopping::False, 3, false},
                                {"w3_stops_true", 3, 4, 1.0f, EarlyStopping::True, 3, false},
                                {"w4_lp2_never", 4, 3, 2.0f, EarlyStopping::Never, 4, false},
                                {"w2_lp_neg_false", 2, 4, -1.0f, EarlyStopping::False, 2, true},
                                {"w4_never_lp0", 4, 4, 0.0f, EarlyStopping::Never, 5, true}})) {
    const auto prompt = prompt_ids();
    BruteForce bf;
    // Stop tokens among the likeliest second tokens: some beams end early.
    std::vector<int32_t> stops;
    {
        const auto& first = bf.logprobs(prompt);
        const auto best_first =
            static_cast<int32_t>(std::max_element(first.begin(), first.end()) - first.begin());
        std::vector<int32_t> seq = prompt;
        seq.push_back(best_first);
        const auto& second = bf.logprobs(seq);
        std::vector<int32_t> order(second.size());
        for (size_t i = 0; i < order.size(); ++i)
            order[i] = static_cast<int32_t>(i);
        std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
            return second[static_cast<size_t>(a)] > second[static_cast<size_t>(b)];
        });
        for (int i = 0; i < row.num_stops; ++i)
            if (order[static_cast<size_t>(i)] != best_first)
                stops.push_back(order[static_cast<size_t>(i)]);
    }
    const auto ref = reference_beams(bf, prompt, row.width, row.max_tokens, row.length_penalty,
                                     row.early_stopping, stops);

    EngineConfig c;
    c.block_size = 8;
    c.memory.num_blocks = 64;
    auto e = test::serving_engine(c);
    BeamSearchParams bp;
    bp.width = row.width;
    bp.length_penalty = row.length_penalty;
    bp.early_stopping = row.early_stopping;
    bp.params.max_tokens = row.max_tokens;
    bp.params.max_tokens_set = true;
    bp.params.ignore_eos = true; // only the chosen stop tokens end beams
    bp.params.stop_token_ids = stops;
    auto got = beam_search(*e, prompt, bp);
    MT_REQUIRE_MSG(got.ok(), "%s", got.ok() ? "" : got.message().c_str());
    MT_REQUIRE_COMPARE(got->hypotheses.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i) {
        MT_SCOPE("hypothesis %zu", i);
        MT_REQUIRE_COMPARE(got->hypotheses[i].ids, ref[i].ids);
        MT_REQUIRE(std::abs(got->hypotheses[i].sum_logprob - ref[i].sum) < 1e-3);
        MT_REQUIRE(std::abs(got->hypotheses[i].score - ref[i].score) < 1e-3);
    }
    int stopped = 0;
    for (const BeamHypothesis& h : got->hypotheses)
        stopped += h.finish == FinishReason::Stop ? 1 : 0;
    std::printf("  %s: %zu hypotheses, %d ended by a stop token, %d steps, %lld forks, %lld "
                "pruned, peak %lld blocks\n",
                row.name, got->hypotheses.size(), stopped, got->steps,
                static_cast<long long>(got->forks), static_cast<long long>(got->aborted),
                static_cast<long long>(got->peak_used_blocks));
    if (row.num_stops == 0)
        MT_REQUIRE_COMPARE(stopped, 0);
    if (row.stop_kept)
        MT_REQUIRE(stopped > 0);
    if (row.width > 1 && row.max_tokens > 2)
        MT_REQUIRE(got->forks > 0 && got->aborted > 0); // forked and pruned on the pool
    MT_REQUIRE_COMPARE(e->snapshot().num_used_blocks, 0);
    MT_REQUIRE(!e->has_unfinished());
    Status st = e->check_consistency();
    MT_REQUIRE(st.ok());
}

// Width 1 is greedy decoding.
MT_TEST(width_one_is_greedy) {
    const auto prompt = prompt_ids();
    auto e = test::serving_engine(EngineConfig{});
    BeamSearchParams bp;
    bp.width = 1;
    bp.params.max_tokens = 6;
    bp.params.ignore_eos = true;
    auto got = beam_search(*e, prompt, bp);
    MT_REQUIRE(got.ok());
    SamplingParams g;
    g.temperature = 0;
    g.max_tokens = 6;
    g.ignore_eos = true;
    auto greedy = generate(*e, prompt, g);
    MT_REQUIRE(greedy.ok());
    MT_REQUIRE_COMPARE(got->hypotheses.size(), size_t(1));
    MT_REQUIRE_COMPARE(got->hypotheses[0].ids, greedy->ids);
    MT_REQUIRE_COMPARE(got->hypotheses[0].text, greedy->text);
}

MT_TEST(bad_params_are_refused) {
    auto e = test::serving_engine(EngineConfig{});
    BeamSearchParams bp;
    bp.width = 0;
    MT_REQUIRE(!beam_search(*e, prompt_ids(), bp).ok());
    bp.width = 65;
    MT_REQUIRE(!beam_search(*e, prompt_ids(), bp).ok());
    bp.width = 2;
    bp.params.stop = {"x"};
    MT_REQUIRE(!beam_search(*e, prompt_ids(), bp).ok());
    MT_REQUIRE(parse_early_stopping("never").ok());
    MT_REQUIRE(!parse_early_stopping("sometimes").ok());
    MT_REQUIRE(!e->has_unfinished());
}

MINI_TEST_MAIN()
