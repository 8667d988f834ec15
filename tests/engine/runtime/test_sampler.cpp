// Sampler semantics (greedy ties, top-k/top-p/min-p masks, penalties, temperature, seeds,
// distribution at a fixed seed, logprobs, validate() messages) and the stop-string matcher.
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <cmath>

#include "engine/runtime/sampler.h"
#include "engine/runtime/stop_matcher.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> log_probs(std::initializer_list<double> p) {
    std::vector<float> l;
    for (double v : p)
        l.push_back(static_cast<float>(std::log(v)));
    return l;
}

// Ids whose processed logit is finite.
std::vector<int32_t> kept(const std::vector<float>& processed) {
    std::vector<int32_t> ids;
    for (size_t i = 0; i < processed.size(); ++i)
        if (processed[i] != -kInf)
            ids.push_back(static_cast<int32_t>(i));
    return ids;
}

// Pearson chi-square of observed counts against expected probabilities.
double chi_square(const std::vector<int>& counts, const std::vector<double>& p, int n) {
    double chi = 0;
    for (size_t i = 0; i < p.size(); ++i) {
        const double e = p[i] * n;
        chi += (counts[i] - e) * (counts[i] - e) / e;
    }
    return chi;
}

struct FieldRow {
    std::string name;
    std::string field;
    double value;
};
std::vector<FieldRow> field_rows() {
    return {{"temperature", "temperature", -0.5},
            {"top_p zero", "top_p", 0.0},
            {"top_p > 1", "top_p", 1.5},
            {"top_k", "top_k", -1.0},
            {"min_p", "min_p", 1.2},
            {"repetition_penalty", "repetition_penalty", 0.0},
            {"presence_penalty", "presence_penalty", 2.5},
            {"frequency_penalty", "frequency_penalty", -3.0},
            {"max_tokens", "max_tokens", 0.0},
            {"logprobs", "logprobs", 21.0},
            {"stop", "stop", 0.0},
            {"stop_token_ids", "stop_token_ids", -1.0}};
}

struct DistributionRow {
    std::string name;
    float temperature;
    int top_k;
    std::vector<double> expected;
};
std::vector<DistributionRow> distribution_rows() {
    return {{"t=1", 1.0f, 0, {0.4, 0.3, 0.2, 0.1}},
            // t = 0.5 squares the probabilities: 16:9:4:1.
            {"t=0.5", 0.5f, 0, {16 / 30., 9 / 30., 4 / 30., 1 / 30.}},
            {"top_k=2", 1.0f, 2, {4 / 7., 3 / 7., 0, 0}}};
}

} // namespace

MT_TEST_TABLE(validate_names_the_field, FieldRow, field_rows()) {
    const double value = row.value;
    MT_REQUIRE(SamplingParams{}.validate().ok());
    SamplingParams p;
    const std::string& f = row.field;
    if (f == "temperature")
        p.temperature = float(value);
    if (f == "top_p")
        p.top_p = float(value);
    if (f == "top_k")
        p.top_k = int(value);
    if (f == "min_p")
        p.min_p = float(value);
    if (f == "repetition_penalty")
        p.repetition_penalty = float(value);
    if (f == "presence_penalty")
        p.presence_penalty = float(value);
    if (f == "frequency_penalty")
        p.frequency_penalty = float(value);
    if (f == "max_tokens")
        p.max_tokens = int(value);
    if (f == "logprobs")
        p.logprobs = int(value);
    if (f == "stop")
        p.stop = {"ok", ""};
    if (f == "stop_token_ids")
        p.stop_token_ids = {3, int32_t(value)};
    Status st = p.validate();
    MT_REQUIRE(!st.ok());
    MT_REQUIRE_MSG(st.message().find(f) != std::string::npos, "%s", st.message().c_str());
    MT_REQUIRE(st.message().find('\n') == std::string::npos);
}

MT_TEST(greedy_takes_lowest_id_on_ties) {
    SamplingParams p;
    p.temperature = 0;
    Sampler s(p);
    const std::vector<float> l = {1, 3, 3, 2, 3};
    MT_REQUIRE_COMPARE(s.sample(l).id, 1);
    const std::vector<float> l2 = {-1, -5, 0.5f, 0.5f};
    MT_REQUIRE_COMPARE(s.sample(l2).id, 2);
}

MT_TEST(argmax_matches_a_plain_scan) {
    std::mt19937 rng(5);
    for (int trial = 0; trial < 300; ++trial) {
        const size_t n = 1 + rng() % 300;
        std::vector<float> l(n);
        for (float& v : l)
            v = static_cast<float>(rng() % 7) - 3.0f; // many ties
        if (trial % 3 == 0)
            l[rng() % n] = std::numeric_limits<float>::quiet_NaN();
        if (trial % 5 == 0)
            l[rng() % n] = -std::numeric_limits<float>::infinity();
        int32_t want = -1;
        for (size_t i = 0; i < n; ++i)
            if (!std::isnan(l[i]) && (want < 0 || l[i] > l[static_cast<size_t>(want)]))
                want = static_cast<int32_t>(i);
        MT_REQUIRE_COMPARE(argmax_first(l), std::max(want, 0));
    }
    const std::vector<float> nan(9, std::numeric_limits<float>::quiet_NaN());
    MT_REQUIRE_COMPARE(argmax_first(nan), 0);
    const std::vector<float> ninf(20, -std::numeric_limits<float>::infinity());
    MT_REQUIRE_COMPARE(argmax_first(ninf), 0);
}

MT_TEST(top_k_mask) {
    SamplingParams p;
    p.top_k = 2;
    Sampler s(p);
    MT_REQUIRE_COMPARE(kept(s.processed_logits(std::vector<float>{1, 5, 3, 4})),
                       (std::vector<int32_t>{1, 3}));
    // Tokens tied with the k-th survive (threshold semantics).
    MT_REQUIRE_COMPARE(kept(s.processed_logits(std::vector<float>{1, 5, 4, 4})),
                       (std::vector<int32_t>{1, 2, 3}));
    p.top_k = 10; // larger than the vocabulary: no-op
    Sampler s2(p);
    MT_REQUIRE_COMPARE(kept(s2.processed_logits(std::vector<float>{1, 5, 4})).size(), size_t{3});
}

MT_TEST(top_p_mask) {
    const auto l = log_probs({0.05, 0.5, 0.15, 0.3});
    SamplingParams p;
    p.top_p = 0.75f; // 0.5 + 0.3 reaches it
    MT_REQUIRE_COMPARE(kept(Sampler(p).processed_logits(l)), (std::vector<int32_t>{1, 3}));
    p.top_p = 0.85f; // needs 0.15 too
    MT_REQUIRE_COMPARE(kept(Sampler(p).processed_logits(l)), (std::vector<int32_t>{1, 2, 3}));
    p.top_p = 0.1f; // the best token alone
    MT_REQUIRE_COMPARE(kept(Sampler(p).processed_logits(l)), (std::vector<int32_t>{1}));

    // A flat vocabulary larger than the partially sorted head (256).
    std::vector<float> flat(1000, 0.0f);
    p.top_p = 0.5005f;
    const std::vector<int32_t> k = kept(Sampler(p).processed_logits(flat));
    MT_REQUIRE_COMPARE(k.size(), size_t{501});
    MT_REQUIRE_COMPARE(k.back(), 500); // ties broken by lowest id
}

MT_TEST(min_p_mask) {
    const auto l = log_probs({0.5, 0.3, 0.15, 0.05});
    SamplingParams p;
    p.min_p = 0.2f; // threshold 0.1
    MT_REQUIRE_COMPARE(kept(Sampler(p).processed_logits(l)), (std::vector<int32_t>{0, 1, 2}));
    p.min_p = 0.7f; // threshold 0.35
    MT_REQUIRE_COMPARE(kept(Sampler(p).processed_logits(l)), (std::vector<int32_t>{0}));
}

MT_TEST(top_k_then_top_p) {
    // top-k renormalises before top-p: of {0.4, 0.3, 0.2, 0.1}, k=2 leaves {4/7, 3/7};
    // top_p 0.55 is then reached by the best token alone (4/7 > 0.55) ...
    const auto l = log_probs({0.4, 0.3, 0.2, 0.1});
    SamplingParams p;
    p.top_k = 2;
    p.top_p = 0.55f;
    MT_REQUIRE_COMPARE(kept(Sampler(p).processed_logits(l)), (std::vector<int32_t>{0}));
    p.top_k = 0; // ... while without top-k 0.4 alone does not reach it
    MT_REQUIRE_COMPARE(kept(Sampler(p).processed_logits(l)), (std::vector<int32_t>{0, 1}));
    // min-p after top-p: threshold relative to the best token.
    p.min_p = 0.8f; // 0.3 < 0.8 * 0.4
    MT_REQUIRE_COMPARE(kept(Sampler(p).processed_logits(l)), (std::vector<int32_t>{0}));
}

MT_TEST(penalties_numerically) {
    SamplingParams p;
    p.temperature = 0; // processed_logits then shows the penalised logits
    p.repetition_penalty = 2.0f;
    p.presence_penalty = 0.5f;
    p.frequency_penalty = 0.25f;
    Sampler s(p);
    const std::vector<int32_t> prompt = {0, 1, 1};
    s.set_prompt(prompt);
    s.accept(2);
    s.accept(2);
    const std::vector<float> out = s.processed_logits(std::vector<float>{2, -2, 1, 0.5f});
    MT_REQUIRE_COMPARE(out[0], 1.0f);  // prompt token, positive: divided
    MT_REQUIRE_COMPARE(out[1], -4.0f); // prompt token, negative: multiplied
    MT_REQUIRE_COMPARE(out[2], -0.5f); // output x2: 1/2 - 0.25*2 - 0.5
    MT_REQUIRE_COMPARE(out[3], 0.5f);  // untouched
    // Greedy picks from the penalised logits.
    MT_REQUIRE_COMPARE(s.sample(std::vector<float>{2, -2, 1, 0.5f}).id, 0);
    s.accept(0);
    s.accept(0); // id 0 now: 2/2 - 0.25*2 - 0.5 = 0 < 0.5
    MT_REQUIRE_COMPARE(s.sample(std::vector<float>{2, -2, 1, 0.5f}).id, 3);
}

MT_TEST(temperature_scales) {
    SamplingParams p;
    p.temperature = 2.0f;
    const std::vector<float> out = Sampler(p).processed_logits(std::vector<float>{2, -1, 4});
    MT_REQUIRE_COMPARE(out, (std::vector<float>{1, -0.5f, 2}));
}

MT_TEST(seed_determinism) {
    std::vector<float> l(1000);
    for (size_t i = 0; i < l.size(); ++i)
        l[i] = static_cast<float>(std::sin(i * 0.37) * 2);
    auto draw = [&](std::optional<uint64_t> seed) {
        SamplingParams p;
        p.seed = seed;
        p.top_p = 0.9f;
        Sampler s(p);
        std::vector<int32_t> ids;
        for (int i = 0; i < 64; ++i)
            ids.push_back(s.sample(l).id);
        return ids;
    };
    MT_REQUIRE_COMPARE(draw(7), draw(7));
    MT_REQUIRE(draw(7) != draw(8));
    MT_REQUIRE(draw(std::nullopt) != draw(std::nullopt)); // random_device seeds
}

MT_TEST_TABLE(distribution_chi_square, DistributionRow, distribution_rows()) {
    const float temperature = row.temperature;
    const int top_k = row.top_k;
    const std::vector<double>& expected = row.expected;
    SamplingParams p;
    p.temperature = temperature;
    p.top_k = top_k;
    p.seed = 42;
    Sampler s(p);
    const auto l = log_probs({0.4, 0.3, 0.2, 0.1});
    const int n = 20000;
    std::vector<int> counts(4, 0);
    for (int i = 0; i < n; ++i)
        ++counts[s.sample(l).id];
    std::vector<int> c;
    std::vector<double> e;
    for (int i = 0; i < 4; ++i) {
        if (expected[i] == 0) {
            MT_REQUIRE_COMPARE(counts[i], 0); // masked tokens are never drawn
        } else {
            c.push_back(counts[i]);
            e.push_back(expected[i]);
        }
    }
    // 99.9% quantile of chi-square with 3 degrees of freedom is 16.27 (1 dof: 10.83).
    const double chi = chi_square(c, e, n);
    MT_REQUIRE_MSG(chi < (e.size() == 4 ? 16.27 : 10.83), "chi2 %g", chi);
}

MT_TEST(logprobs_are_raw_model_logprobs) {
    const std::vector<float> l = {1.0f, 3.0f, 2.0f, -1.0f};
    double z = 0;
    for (float v : l)
        z += std::exp(double(v));
    MT_REQUIRE(std::abs(log_softmax_at(l, 2) - (2.0 - std::log(z))) < 1e-9);
    const auto top = top_logprobs(l, 3);
    MT_REQUIRE_COMPARE(top.size(), size_t{3});
    MT_REQUIRE_COMPARE(top[0].id, 1);
    MT_REQUIRE_COMPARE(top[1].id, 2);
    MT_REQUIRE_COMPARE(top[2].id, 0);
    SamplingParams p;
    p.temperature = 0.3f;
    p.repetition_penalty = 1.5f;
    p.logprobs = 2;
    p.seed = 1;
    Sampler s(p);
    s.set_prompt(std::vector<int32_t>{1});
    SampledToken t = s.sample(l);
    MT_REQUIRE_COMPARE(t.top.size(), size_t{2});
    // Raw distribution: unaffected by temperature and penalties.
    MT_REQUIRE(std::abs(t.top[0].logprob - (3.0 - std::log(z))) < 1e-5);
    MT_REQUIRE(std::abs(t.logprob - log_softmax_at(l, t.id)) < 1e-5);
}

// --- StopStringMatcher ---
MT_TEST(stop_matcher_across_chunks) {
    StopStringMatcher m({"STOP", "\n\n"});
    std::string streamed;
    for (const char* chunk : {"Hello S", "T", "O", "ne ST", "OP and more"}) {
        auto step = m.push(chunk);
        streamed += step.text;
        MT_REQUIRE(streamed.find("STOP") == std::string::npos);
        if (step.stopped) {
            MT_REQUIRE_COMPARE(step.matched, std::string("STOP"));
            break;
        }
    }
    MT_REQUIRE(m.stopped());
    MT_REQUIRE_COMPARE(streamed, std::string("Hello STOne "));
    MT_REQUIRE_COMPARE(std::string(m.emitted()), streamed);
    MT_REQUIRE_COMPARE(m.push("x").text, std::string());
}
MT_TEST(stop_matcher_holds_back_prefixes) {
    StopStringMatcher m({"abc"});
    MT_REQUIRE_COMPARE(m.push("xa").text, std::string("x"));  // "a" could start "abc"
    MT_REQUIRE_COMPARE(m.push("b").text, std::string());      // "ab" still could
    MT_REQUIRE_COMPARE(m.push("d").text, std::string("abd")); // no longer
    MT_REQUIRE_COMPARE(m.push("ab").text, std::string());
    MT_REQUIRE_COMPARE(m.flush(), std::string("ab")); // end without a stop: released
    MT_REQUIRE_COMPARE(std::string(m.emitted()), std::string("xabdab"));
}
MT_TEST(stop_matcher_earliest_match_wins) {
    StopStringMatcher m({"world", "lo w"});
    auto step = m.push("hello world");
    MT_REQUIRE(step.stopped);
    MT_REQUIRE_COMPARE(step.matched, std::string("lo w"));
    MT_REQUIRE_COMPARE(step.text, std::string("hel"));
}
MT_TEST(stop_matcher_without_stops_streams_everything) {
    StopStringMatcher m({});
    MT_REQUIRE_COMPARE(m.push("abc").text, std::string("abc"));
    MT_REQUIRE_COMPARE(m.flush(), std::string());
}

MINI_TEST_MAIN()
