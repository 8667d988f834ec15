// Speculative decoding with prompt lookup (ngram): the proposer's matches (longest n first, then
// the earliest occurrence), the exactness of the rejection sampler against the target's
// distribution, and whole engine runs whose greedy outputs equal the same runs without
// speculation — with chunked prefill, preemption, prefix hits, stops / EOS / max_tokens inside
// an accepted run, k changed mid-generation — while the pool stays consistent and every block
// returns, also under random accept/reject storms with sampling.
#include <cmath>
#include <map>
#include <memory>
#include <random>

#include "engine/runtime/sampler.h"
#include "engine/serving/engine.h"
#include "serving_test_engine.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

test::ServingTestModel& model() {
    return test::shared_serving_model();
}

std::unique_ptr<Engine> engine(const EngineConfig& c) {
    return test::serving_engine(c);
}

SamplingParams greedy(int max_tokens) {
    SamplingParams p;
    p.temperature = 0;
    p.max_tokens = max_tokens;
    p.ignore_eos = true;
    return p;
}

SpeculativeConfig ngram(int k) {
    SpeculativeConfig s;
    s.method = SpeculativeMethod::Ngram;
    s.num_speculative_tokens = k;
    s.prompt_lookup_min = 1;
    s.prompt_lookup_max = 4;
    return s;
}

// Prompts that repeat themselves (so that prompt lookup finds matches).
std::vector<std::vector<int32_t>> repetitive_prompts() {
    std::mt19937 rng(5);
    const int32_t vocab = model().transformer->vocab_size();
    std::vector<std::vector<int32_t>> out;
    for (int n : {6, 9, 13, 4, 21, 7}) {
        std::vector<int32_t> unit;
        for (int i = 0; i < n; ++i)
            unit.push_back(static_cast<int32_t>(rng() % vocab));
        std::vector<int32_t> p;
        for (int r = 0; r < 4; ++r)
            p.insert(p.end(), unit.begin(), unit.end());
        out.push_back(p);
    }
    return out;
}

struct Got {
    std::vector<int32_t> ids;
    std::string text;
    FinishReason finish = FinishReason::None;
    int finished_events = 0;
};

// Runs every prompt to the end; checks the engine's consistency after each step. `between`
// runs before every step.
std::map<RequestId, Got> run(Engine& e, const std::vector<std::vector<int32_t>>& prompts,
                             const std::vector<SamplingParams>& params,
                             const std::function<void(Engine&, int64_t)>& between = {}) {
    std::vector<RequestId> ids;
    for (size_t i = 0; i < prompts.size(); ++i) {
        auto id = e.add_request(prompts[i], params[i % params.size()]);
        MT_REQUIRE_MSG(id.ok(), "%s", id.ok() ? "" : id.message().c_str());
        ids.push_back(*id);
    }
    std::map<RequestId, Got> got;
    StepOutputs so;
    for (int64_t step = 0; e.has_unfinished() && step < 20000; ++step) {
        if (between)
            between(e, step);
        e.step(so);
        for (RequestOutput& o : so.outputs) {
            Got& g = got[o.id];
            g.ids.insert(g.ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
            g.text += o.text;
            if (o.finished) {
                g.finish = o.finish;
                ++g.finished_events;
            }
        }
        const Status st = e.check_consistency();
        MT_REQUIRE_MSG(st.ok(), "step %lld: %s", static_cast<long long>(step),
                       st.ok() ? "" : st.message().c_str());
    }
    MT_REQUIRE(!e.has_unfinished());
    MT_REQUIRE_COMPARE(e.snapshot().num_used_blocks, 0);
    return got;
}

} // namespace

MT_TEST(ngram_proposer_longest_then_earliest) {
    // vLLM's example: the last 3 tokens [4, 2, 3] do not occur before; [2, 3] does, followed by
    // [4, 2, 3] (fewer than k = 4 tokens follow).
    const std::vector<int32_t> a = {1, 2, 3, 4, 2, 3};
    MT_COMPARE(propose_ngram(a, 2, 3, 4), (std::vector<int32_t>{4, 2, 3}));
    MT_COMPARE(propose_ngram(a, 2, 3, 1), (std::vector<int32_t>{4}));
    MT_CHECK(propose_ngram(a, 3, 3, 4).empty());
    MT_CHECK(propose_ngram(a, 2, 3, 0).empty());
    // The longest n wins over an earlier shorter match; among equal n, the earliest.
    const std::vector<int32_t> b = {7, 9, 1, 5, 8, 9, 6, 7, 8, 9};
    MT_COMPARE(propose_ngram(b, 1, 3, 2), (std::vector<int32_t>{6, 7})); // [8, 9] at 4
    MT_COMPARE(propose_ngram(b, 1, 1, 2), (std::vector<int32_t>{1, 5})); // [9] first at 1
    MT_CHECK(propose_ngram(std::vector<int32_t>{3}, 1, 4, 4).empty());
    MT_CHECK(propose_ngram(std::vector<int32_t>{}, 1, 4, 4).empty());
    MT_COMPARE(propose_ngram(std::vector<int32_t>{5, 5}, 1, 4, 3), (std::vector<int32_t>{5}));
}

MT_TEST(config_validation) {
    SpeculativeConfig c = ngram(4);
    MT_CHECK(c.validate().ok());
    c.num_speculative_tokens = 17;
    MT_CHECK(!c.validate().ok());
    c = ngram(4);
    c.prompt_lookup_min = 0;
    MT_CHECK(!c.validate().ok());
    c = ngram(4);
    c.prompt_lookup_max = 0;
    MT_CHECK(!c.validate().ok());
    EngineConfig ec;
    ec.memory.num_blocks = 8;
    ec.speculative.num_speculative_tokens = -1;
    MT_CHECK(!Engine::create(*model().transformer, *model().tokenizer, ec).ok());
}

// Rejection sampling with a one-hot draft gives the target's distribution exactly: chi-square
// over 40,000 draws (6 classes, 5 degrees of freedom; 20.5 is the 0.999 quantile, so a correct
// sampler fails 1 run in 1,000 — the seeds are fixed, so the outcome is deterministic).
MT_TEST(rejection_sampling_is_exact) {
    const std::vector<float> logits = {1.0f, 2.5f, 0.3f, 2.0f, -1.0f, 1.7f};
    for (float temperature : {1.0f, 0.7f})
        for (int32_t draft : {1, 4, 2}) {
            MT_SCOPE("temperature %g draft %d", temperature, draft);
            SamplingParams p;
            p.temperature = temperature;
            p.seed = 1000u + static_cast<uint64_t>(draft);
            Sampler s(p);
            std::vector<double> prob(logits.size());
            double z = 0;
            for (size_t i = 0; i < logits.size(); ++i)
                z += prob[i] = std::exp(logits[i] / temperature);
            for (double& x : prob)
                x /= z;
            const int n = 40000;
            std::vector<int> count(logits.size(), 0);
            int accepted = 0;
            for (int i = 0; i < n; ++i) {
                bool acc = false;
                const SampledToken t = s.verify(logits, draft, &acc);
                MT_REQUIRE(t.id >= 0 && t.id < int32_t(logits.size()));
                ++count[static_cast<size_t>(t.id)];
                accepted += acc;
                MT_REQUIRE(!acc || t.id == draft);
            }
            double chi2 = 0;
            for (size_t i = 0; i < logits.size(); ++i) {
                const double expect = n * prob[i];
                chi2 += (count[i] - expect) * (count[i] - expect) / expect;
            }
            MT_CHECK_MSG(chi2 < 20.5, "chi-square %g", chi2);
            // The draft is accepted with probability p(draft).
            const double rate = double(accepted) / n;
            const double pd = prob[static_cast<size_t>(draft)];
            MT_CHECK_MSG(std::abs(rate - pd) < 4 * std::sqrt(pd * (1 - pd) / n) + 1e-9,
                         "accepted %g, p(draft) %g", rate, pd);
        }
    // top-k removes the draft: never accepted, the draws follow the filtered distribution.
    SamplingParams p;
    p.temperature = 1.0f;
    p.top_k = 2;
    p.seed = 9;
    Sampler s(p);
    for (int i = 0; i < 2000; ++i) {
        bool acc = true;
        const SampledToken t = s.verify(logits, 0, &acc);
        MT_REQUIRE(!acc);
        MT_REQUIRE(t.id == 1 || t.id == 3);
    }
    // Greedy: the argmax, accepted only when the draft is the argmax.
    SamplingParams g;
    g.temperature = 0;
    Sampler sg(g);
    bool acc = false;
    MT_COMPARE(sg.verify(logits, 1, &acc).id, 1);
    MT_CHECK(acc);
    MT_COMPARE(sg.verify(logits, 3, &acc).id, 1);
    MT_CHECK(!acc);
}

struct SpecRow {
    std::string name;
    int32_t block_size, budget, num_blocks, k;
    bool prefix_caching, shared_prefix;
    KvDtype kv = KvDtype::F32;
};

std::vector<SpecRow> spec_rows() {
    std::vector<SpecRow> rows;
    for (int32_t bs : {8, 16}) {
        const std::string b = "bs" + std::to_string(bs);
        rows.push_back({b + " k4 roomy", bs, 512, 256, 4, true, false});
        rows.push_back({b + " k2 chunked", bs, 11, 256, 2, true, false});
        rows.push_back({b + " k8 budget cuts drafts", bs, 9, 256, 8, true, false});
        rows.push_back({b + " k4 preempt", bs, 64, 230 / bs + 2, 4, true, false});
        rows.push_back({b + " k4 shared prefix", bs, 40, 256, 4, true, true});
        rows.push_back({b + " k3 no cache", bs, 40, 256, 3, false, true});
    }
    // f16 (the CPU's auto) and int8: a verify step reads the drafts' K/V back from the cache as
    // a decode step does, so the outputs are the same with or without speculation here too.
    for (KvDtype t : {KvDtype::F16, KvDtype::Int8}) {
        const std::string n = std::string(" ") + kv_dtype_name(t);
        rows.push_back({"bs16 k4 roomy" + n, 16, 512, 256, 4, true, false, t});
        rows.push_back({"bs16 k2 chunked" + n, 16, 11, 256, 2, true, false, t});
        rows.push_back({"bs8 k4 preempt" + n, 8, 64, 230 / 8 + 2, 4, true, false, t});
        rows.push_back({"bs16 k4 shared prefix" + n, 16, 40, 256, 4, true, true, t});
    }
    return rows;
}

// An engine of config c whose KV cache stores `kv` from its first step.
std::unique_ptr<Engine> engine_kv(const EngineConfig& c, KvDtype kv) {
    auto e = engine(c);
    if (kv != KvDtype::F32) {
        Status st = e->set_kv_dtype(kv, {});
        MT_REQUIRE_MSG(st.ok(), "%s", st.ok() ? "" : st.message().c_str());
    }
    return e;
}

// Greedy outputs with speculation equal those without it, whatever the batch does.
MT_TEST_TABLE(greedy_equals_without_speculation, SpecRow, spec_rows()) {
    auto prompts = repetitive_prompts();
    if (row.shared_prefix) {
        auto head = prompts[4];
        for (auto& p : prompts)
            p.insert(p.begin(), head.begin(), head.end());
    }
    std::vector<SamplingParams> params = {greedy(40), greedy(33), greedy(47)};
    EngineConfig c;
    c.block_size = row.block_size;
    c.max_num_batched_tokens = row.budget;
    c.memory.num_blocks = row.num_blocks;
    c.enable_prefix_caching = row.prefix_caching;
    c.record_steps = true;
    auto plain = engine_kv(c, row.kv);
    const auto want = run(*plain, prompts, params);
    c.speculative = ngram(row.k);
    auto spec = engine_kv(c, row.kv);
    const auto got = run(*spec, prompts, params);
    MT_COMPARE(spec->executor().kv_dtype(), row.kv);
    MT_REQUIRE_COMPARE(got.size(), want.size());
    for (const auto& [id, w] : want) {
        MT_SCOPE("request %lld", static_cast<long long>(id));
        const Got& g = got.at(id);
        MT_COMPARE(g.ids, w.ids);
        MT_COMPARE(g.text, w.text);
        MT_COMPARE(g.finish, w.finish);
        MT_COMPARE(g.finished_events, 1);
    }
    const SpeculativeStats& st = spec->speculative_stats();
    std::printf("  %lld steps without, %lld with speculation; %lld drafts, %lld/%lld accepted "
                "(mean acceptance length %.2f)\n",
                static_cast<long long>(plain->steps()), static_cast<long long>(spec->steps()),
                static_cast<long long>(st.num_drafts),
                static_cast<long long>(st.num_accepted_tokens),
                static_cast<long long>(st.num_draft_tokens), st.mean_acceptance_length());
    MT_CHECK(st.num_drafts > 0);
    MT_CHECK(st.num_accepted_tokens > 0); // a random model falls into loops prompt lookup hits
    MT_CHECK(st.num_accepted_tokens <= st.num_draft_tokens);
    MT_CHECK(spec->steps() < plain->steps()); // accepted drafts save steps
    int64_t per_pos = 0;
    for (int64_t a : st.accepted_per_pos)
        per_pos += a;
    MT_COMPARE(per_pos, st.num_accepted_tokens);
    MT_CHECK(st.accepted_per_pos.size() <= static_cast<size_t>(row.k));
    if (row.num_blocks < 40)
        MT_CHECK(spec->snapshot().total_preemptions > 0);
    if (row.shared_prefix && row.prefix_caching)
        MT_CHECK(spec->snapshot().prefix_cache_hits > 0);
}

// Stops inside an accepted run end the request exactly there: stop token ids, stop strings and
// max_tokens give the same output as without speculation, and nothing after them streams.
MT_TEST(stops_inside_accepted_drafts) {
    const auto prompts = repetitive_prompts();
    EngineConfig c;
    c.memory.num_blocks = 256;
    auto plain = engine(c);
    const auto free_run = run(*plain, prompts, {greedy(60)});
    int checked = 0;
    for (const auto& [id, g] : free_run) {
        if (g.ids.size() < 20)
            continue;
        const auto& prompt = prompts[static_cast<size_t>(id)];
        // A token that repeats in the output: likely inside an accepted draft run.
        const int32_t stop_id = g.ids[12];
        SamplingParams by_id = greedy(60);
        by_id.stop_token_ids = {stop_id};
        SamplingParams by_len = greedy(17);
        std::vector<SamplingParams> variants = {by_id, by_len};
        if (g.text.size() > 12) {
            SamplingParams by_text = greedy(60);
            by_text.stop = {g.text.substr(g.text.size() / 2, 2)};
            variants.push_back(by_text);
        }
        for (size_t v = 0; v < variants.size(); ++v) {
            MT_SCOPE("request %lld variant %zu", static_cast<long long>(id), v);
            auto a = engine(c);
            const auto want = run(*a, {prompt}, {variants[v]});
            EngineConfig sc = c;
            sc.speculative = ngram(6);
            auto b = engine(sc);
            const auto got = run(*b, {prompt}, {variants[v]});
            MT_COMPARE(got.at(0).ids, want.at(0).ids);
            MT_COMPARE(got.at(0).text, want.at(0).text);
            MT_COMPARE(got.at(0).finish, want.at(0).finish);
            ++checked;
        }
    }
    MT_CHECK(checked >= 6);
}

// k changes (and speculation turns off and on) between steps without a reload.
MT_TEST(k_changes_mid_generation) {
    const auto prompts = repetitive_prompts();
    EngineConfig c;
    c.memory.num_blocks = 256;
    c.max_num_batched_tokens = 64;
    auto plain = engine(c);
    const auto want = run(*plain, prompts, {greedy(50)});
    c.speculative = ngram(2);
    auto spec = engine(c);
    const auto got = run(*spec, prompts, {greedy(50)}, [](Engine& e, int64_t step) {
        const int k = std::array<int, 5>{2, 7, 0, 16, 1}[(step / 3) % 5];
        MT_REQUIRE(e.set_speculative(ngram(k)).ok());
    });
    for (const auto& [id, w] : want)
        MT_COMPARE(got.at(id).ids, w.ids);
    MT_CHECK(spec->speculative_stats().num_accepted_tokens > 0);
    MT_CHECK(!spec->set_speculative(ngram(17)).ok());
}

// Sampling requests, random k, aborts and a tight pool: the pool stays consistent and every
// block returns.
MT_TEST(random_accept_reject_storm) {
    std::mt19937 rng(17);
    const auto prompts = repetitive_prompts();
    for (int round = 0; round < 4; ++round) {
        MT_SCOPE("round %d", round);
        EngineConfig c;
        c.block_size = round % 2 ? 8 : 16;
        c.memory.num_blocks = 300 / c.block_size + 4;
        c.max_num_batched_tokens = 8 + static_cast<int32_t>(rng() % 40);
        c.max_num_seqs = 1 + static_cast<int32_t>(rng() % 5);
        c.speculative = ngram(1 + static_cast<int32_t>(rng() % 8));
        auto e = engine(c);
        std::vector<RequestId> live;
        StepOutputs so;
        for (int op = 0; op < 150; ++op) {
            const int kind = static_cast<int>(rng() % 10);
            if (kind < 3) {
                SamplingParams p;
                p.temperature = 0.6f + 0.1f * static_cast<float>(rng() % 5);
                p.top_k = static_cast<int>(rng() % 3) * 20;
                p.seed = rng();
                p.max_tokens = 1 + static_cast<int>(rng() % 40);
                p.ignore_eos = true;
                auto id = e->add_request(prompts[rng() % prompts.size()], p);
                MT_REQUIRE(id.ok());
                live.push_back(*id);
            } else if (kind < 4 && !live.empty()) {
                e->abort(live[rng() % live.size()]);
            } else {
                e->step(so);
                const Status st = e->check_consistency();
                MT_REQUIRE_MSG(st.ok(), "%s", st.ok() ? "" : st.message().c_str());
            }
        }
        for (int i = 0; e->has_unfinished() && i < 5000; ++i)
            e->step(so);
        MT_REQUIRE(!e->has_unfinished());
        const EngineSnapshot s = e->snapshot();
        MT_COMPARE(s.num_used_blocks, 0);
        MT_COMPARE(s.num_free_blocks + s.num_cached_free_blocks, c.memory.num_blocks.value());
        MT_REQUIRE(e->kv_manager().pool().check_invariants().ok());
        MT_CHECK(s.speculative.num_drafts > 0);
    }
}

MINI_TEST_MAIN()
