// Single-request generation: greedy equals the reference's argmax chain, streamed text equals
// the final text, stop strings across token boundaries, stop token ids and EOS, max tokens,
// context length, cancellation, logprobs, seeds and input errors.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>

#include "engine/runtime/generator.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/thread_pool.h"
#include "reference_model.h"
#include "runtime_test_models.h"

using namespace llmwb;
using namespace llmwb::test;

namespace {

struct Stream {
    std::string text;
    std::vector<int32_t> ids;
    int last_events = 0;
    std::function<bool(const TokenEvent&)> fn() {
        return [this](const TokenEvent& e) {
            text += e.text;
            ids.push_back(e.id);
            last_events += e.last ? 1 : 0;
            return true;
        };
    }
};

}  // namespace

class TestGenerator : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    kernels::ThreadPool pool_{2};
    std::unique_ptr<LoadedModel> model_;
    std::unique_ptr<Tokenizer> tok_;
    std::unique_ptr<Transformer> tf_;
    std::unique_ptr<KvCacheStorage> kv_;
    std::vector<int32_t> prompt_;

    SamplingParams greedy(int max_tokens) {
        SamplingParams p;
        p.temperature = 0;
        p.max_tokens = max_tokens;
        p.ignore_eos = true;
        return p;
    }
    // Seeded sampling: varied text from the random model (greedy soon repeats one token).
    SamplingParams sampled(int max_tokens, uint64_t seed) {
        SamplingParams p;
        p.temperature = 1.0f;
        p.seed = seed;
        p.max_tokens = max_tokens;
        p.ignore_eos = true;
        return p;
    }
    GenerationResult run(const SamplingParams& p, Stream* s = nullptr,
                         const std::vector<int32_t>* prompt = nullptr) {
        auto r = generate(*tf_, *kv_, *tok_, prompt ? *prompt : prompt_, p,
                          s ? s->fn() : std::function<bool(const TokenEvent&)>{});
        if (!r) qFatal("generate: %s", r.message().c_str());
        return std::move(r.value());
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        std::string err;
        model_ = write_and_load(spec_for(Shape::Qwen2, ModelFileFormat::Gguf, WeightType::F32),
                                dir_.path().toStdString(), "gen", &err);
        QVERIFY2(model_, err.c_str());
        auto tok = Tokenizer::create(model_->tokenizer);
        QVERIFY2(tok.ok(), tok.ok() ? "" : tok.message().c_str());
        tok_ = std::move(tok.value());
        tf_ = std::make_unique<Transformer>(*model_, pool_);
        kv_ = std::make_unique<KvCacheStorage>(model_->config, 16, 16);
        prompt_ = tok_->encode("The quick brown fox jumps over the lazy dog.", false);
        QVERIFY(prompt_.size() > 3);
    }

    void greedy_matches_reference_argmax() {
        Stream s;
        GenerationResult r = run(greedy(12), &s);
        QCOMPARE(r.finish_reason, std::string("length"));
        QCOMPARE(r.ids.size(), size_t{12});
        QCOMPARE(r.prompt_tokens, int32_t(prompt_.size()));
        ReferenceModel ref(*model_);
        std::vector<double> l;
        for (int32_t id : prompt_) l = ref.step(id);
        for (int32_t id : r.ids) {
            QCOMPARE(int32_t(std::max_element(l.begin(), l.end()) - l.begin()), id);
            l = ref.step(id);
        }
        QCOMPARE(s.ids, r.ids);
        QCOMPARE(s.text, r.text);
        QCOMPARE(s.last_events, 1);
        QCOMPARE(r.text, tok_->decode(r.ids, true));
        QVERIFY(r.ttft_ms > 0 && r.total_ms >= r.ttft_ms);
        QVERIFY(r.prefill_tokens_per_s > 0 && r.decode_tokens_per_s > 0);
    }

    void chunked_prefill_gives_same_tokens() {
        const GenerationResult a = run(greedy(8));
        GeneratorOptions opt;
        opt.prefill_chunk = 3;
        auto b = generate(*tf_, *kv_, *tok_, prompt_, greedy(8), {}, opt);
        QVERIFY(b.ok());
        QCOMPARE(b->ids, a.ids);
    }

    void stop_string_across_token_boundaries() {
        const GenerationResult full = run(sampled(40, 5));
        // Token boundaries in the text.
        std::vector<size_t> at = {0};
        for (size_t i = 1; i <= full.ids.size(); ++i)
            at.push_back(tok_->decode(std::span(full.ids).first(i), true).size());
        QCOMPARE(at.back(), full.text.size());
        // A stop string starting inside one token and ending inside a later one.
        size_t i = 2;
        while (i + 2 < full.ids.size() && at[i + 1] - at[i] < 2) ++i;
        QVERIFY2(i + 2 < full.ids.size(), "no multi-character token to split");
        const std::string stop = full.text.substr(at[i] + 1, at[i + 2] - at[i]);
        const size_t expect_len = full.text.find(stop);

        SamplingParams p = sampled(40, 5);
        p.stop = {"never-in-this-text-\x01", stop};
        Stream s;
        GenerationResult r = run(p, &s);
        QCOMPARE(r.finish_reason, std::string("stop"));
        QCOMPARE(r.stop_matched, stop);
        QCOMPARE(r.text, full.text.substr(0, expect_len));
        QCOMPARE(s.text, r.text);
        QVERIFY(s.text.find(stop) == std::string::npos);
        QVERIFY(!r.stop_token.has_value());
        QVERIFY(r.ids.size() <= i + 3);
        QCOMPARE(s.last_events, 1);
    }

    void stop_token_id_ends_generation() {
        const GenerationResult full = run(sampled(20, 6));
        const int32_t stop_id = full.ids[5];
        const size_t first = std::find(full.ids.begin(), full.ids.end(), stop_id) - full.ids.begin();
        SamplingParams p = sampled(20, 6);
        p.stop_token_ids = {stop_id};
        Stream s;
        GenerationResult r = run(p, &s);
        QCOMPARE(r.finish_reason, std::string("stop"));
        QCOMPARE(r.stop_token, std::optional<int32_t>(stop_id));
        QCOMPARE(r.ids, std::vector<int32_t>(full.ids.begin(), full.ids.begin() + first + 1));
        QCOMPARE(r.text, tok_->decode(std::span(full.ids).first(first), true));
        QCOMPARE(s.text, r.text);
    }

    void eos_stops_unless_ignored() {
        const std::vector<int32_t> stops = tok_->stop_ids();
        QVERIFY(!stops.empty());
        // Find a seed whose sampled continuation contains a stop id (the model is random).
        for (uint64_t seed = 1; seed < 400; ++seed) {
            SamplingParams p;
            p.temperature = 1.5f;
            p.seed = seed;
            p.max_tokens = 48;
            p.ignore_eos = true;
            const GenerationResult free_run = run(p);
            auto it = std::find_if(free_run.ids.begin(), free_run.ids.end(), [&](int32_t id) {
                return std::find(stops.begin(), stops.end(), id) != stops.end();
            });
            if (it == free_run.ids.end()) continue;
            QCOMPARE(free_run.finish_reason, std::string("length"));
            p.ignore_eos = false;
            const GenerationResult r = run(p);
            QCOMPARE(r.finish_reason, std::string("stop"));
            QCOMPARE(r.stop_token, std::optional<int32_t>(*it));
            QCOMPARE(r.ids, std::vector<int32_t>(free_run.ids.begin(), it + 1));
            return;
        }
        QFAIL("no seed produced an end-of-sequence token");
    }

    void context_length_ends_generation() {
        KvCacheStorage small(model_->config, 2, 16);  // 32 slots
        std::vector<int32_t> prompt(20, prompt_[0]);
        auto r = generate(*tf_, small, *tok_, prompt, greedy(100), {});
        QVERIFY(r.ok());
        QCOMPARE(r->finish_reason, std::string("length"));
        QCOMPARE(r->ids.size(), size_t{12});
        std::vector<int32_t> too_long(32, prompt_[0]);
        auto e = generate(*tf_, small, *tok_, too_long, greedy(4), {});
        QVERIFY(!e.ok());
        QVERIFY2(e.message().find("context") != std::string::npos, e.message().c_str());
    }

    void cancellation() {
        std::string streamed;
        auto r = generate(*tf_, *kv_, *tok_, prompt_, greedy(30), [&](const TokenEvent& e) {
            streamed += e.text;
            return e.index < 3;
        });
        QVERIFY(r.ok());
        QCOMPARE(r->finish_reason, std::string("cancelled"));
        QCOMPARE(r->ids.size(), size_t{4});
        QCOMPARE(r->text, streamed);
    }

    void logprobs_and_seeds() {
        SamplingParams p;
        p.temperature = 0.8f;
        p.top_p = 0.95f;
        p.seed = 99;
        p.max_tokens = 10;
        p.ignore_eos = true;
        p.logprobs = 3;
        const GenerationResult a = run(p), b = run(p);
        QCOMPARE(a.ids, b.ids);
        QCOMPARE(a.logprobs.size(), a.ids.size());
        for (size_t i = 0; i < a.ids.size(); ++i) {
            QCOMPARE(a.logprobs[i].id, a.ids[i]);
            QCOMPARE(a.logprobs[i].top.size(), size_t{3});
            QVERIFY(a.logprobs[i].logprob <= a.logprobs[i].top[0].logprob + 1e-6f);
            QVERIFY(a.logprobs[i].top[0].logprob >= a.logprobs[i].top[1].logprob);
        }
        p.seed = 100;
        QVERIFY(run(p).ids != a.ids);
    }

    void input_errors() {
        SamplingParams bad = greedy(4);
        bad.top_p = 0;
        auto e1 = generate(*tf_, *kv_, *tok_, prompt_, bad, {});
        QVERIFY(!e1.ok());
        QVERIFY(e1.message().find("top_p") != std::string::npos);
        auto e2 = generate(*tf_, *kv_, *tok_, {}, greedy(4), {});
        QVERIFY(!e2.ok());
        QVERIFY(e2.message().find("no tokens") != std::string::npos);
        auto e3 = generate(*tf_, *kv_, *tok_, {1, tf_->vocab_size()}, greedy(4), {});
        QVERIFY(!e3.ok());
        QVERIFY(e3.message().find("vocabulary") != std::string::npos);
        auto e4 = generate(*tf_, *kv_, *tok_, {1, -2}, greedy(4), {});
        QVERIFY(!e4.ok());
    }
};

QTEST_GUILESS_MAIN(TestGenerator)
#include "test_generator.moc"
