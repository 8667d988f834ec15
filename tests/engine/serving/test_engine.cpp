// Engine: greedy outputs of concurrent requests equal single-request generation (generate())
// across block sizes, token budgets that force chunked prefill, pools that force preemption,
// with and without shared prefixes (prefix-cache hits checked through the counters); seeded
// sampling and stop strings stream the same text; abort at any time; re-planning while
// requests run; forks with copy-on-write; snapshots; randomised add/step/abort runs.
#include <QTemporaryDir>
#include <QtTest>

#include <array>
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

} // namespace

class TestEngine : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<test::ServingTestModel> m_;
    std::vector<std::vector<int32_t>> prompts_, shared_prompts_;

    GenerationResult alone(const std::vector<int32_t>& prompt, const SamplingParams& p) {
        auto kv = KvCacheStorage::create(m_->model->config, 64, 16);
        if (!kv)
            qFatal("kv: %s", kv.message().c_str());
        auto r = generate(*m_->transformer, **kv, *m_->tokenizer, prompt, p, {});
        if (!r)
            qFatal("generate: %s", r.message().c_str());
        return std::move(r.value());
    }

    std::unique_ptr<Engine> engine(EngineConfig c) {
        auto e = Engine::create(*m_->transformer, *m_->tokenizer, c);
        if (!e)
            qFatal("engine: %s", e.message().c_str());
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
        if (!st)
            qFatal("consistency: %s", st.message().c_str());
    }
    // Steps until done.
    static void run(Engine& e, std::map<RequestId, Collected>& out, bool* saw_chunk = nullptr) {
        for (int i = 0; e.has_unfinished() && i < 5000; ++i)
            step(e, out, saw_chunk);
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
            for (int i = 0; i < n; ++i)
                v.push_back(static_cast<int32_t>(rng() % vocab));
            return v;
        };
        for (int n : {5, 23, 70, 9, 41, 16, 33})
            prompts_.push_back(random_ids(n));
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
            QTest::newRow("bs" + b + " preempt")
                << bs << 64 << tight << true << false << true << 24;
            QTest::newRow("bs" + b + " preempt chunked no-cache")
                << bs << 7 << tight << false << false << true << 24;
            QTest::newRow("bs" + b + " shared prefix")
                << bs << 40 << 128 << true << true << false << 6;
            QTest::newRow("bs" + b + " shared prefix preempt")
                << bs << 24 << tight << true << true << true << 24;
            QTest::newRow("bs" + b + " shared no-cache")
                << bs << 40 << 128 << false << true << false << 6;
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
            if (shared)
                step(*e, got, &saw_chunk);
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
        for (const auto& p : prompts)
            longest = std::max(longest, p.size());
        if (static_cast<size_t>(budget) < longest)
            QVERIFY(saw_chunk);
        if (expect_preemption)
            QVERIFY(snap.total_preemptions > 0);
        if (shared && prefix_caching)
            QVERIFY(snap.prefix_cache_hits > 0);
        if (!prefix_caching)
            QCOMPARE(snap.prefix_cache_hits, int64_t(0));
    }

    // Seeded sampling and stop strings: each request's stream equals generate() with the same
    // seed (per-request RNG), including text held back around stop strings.
    void seeded_sampling_and_stops_equal_alone() {
        EngineConfig c;
        c.block_size = 8;
        c.max_num_batched_tokens = 16;
        c.num_blocks = 20;
        auto e = engine(c);
        std::vector<RequestId> ids;
        std::vector<GenerationResult> ref;
        for (size_t i = 0; i < prompts_.size(); ++i) {
            SamplingParams p;
            p.temperature = 0.9f;
            p.top_k = 40;
            p.seed = 100 + i;
            p.max_tokens = 20;
            ref.push_back(alone(prompts_[i], p));
            // Stop at a piece of the reference text (when it has one) to exercise stops.
            const std::string& t = ref.back().text;
            if (t.size() > 12 && i % 2 == 0) {
                p.stop = {t.substr(t.size() / 2, 3)};
                ref.back() = alone(prompts_[i], p);
            }
            ids.push_back(*e->add_request(prompts_[i], p));
        }
        std::map<RequestId, Collected> got;
        run(*e, got);
        int stopped = 0;
        for (size_t i = 0; i < ids.size(); ++i) {
            const Collected& col = got[ids[i]];
            QCOMPARE(col.ids, ref[i].ids);
            QCOMPARE(col.text, ref[i].text);
            QCOMPARE(std::string(finish_reason_name(col.finish)), ref[i].finish_reason);
            QCOMPARE(col.stop, ref[i].stop_matched);
            stopped += col.finish == FinishReason::Stop;
        }
        QVERIFY(e->snapshot().total_preemptions > 0);
        QVERIFY(stopped > 0);
    }

    void abort_mid_prefill_and_mid_decode() {
        EngineConfig c;
        c.block_size = 16;
        c.max_num_batched_tokens = 10;
        c.num_blocks = 32;
        auto e = engine(c);
        const RequestId a = *e->add_request(prompts_[2], greedy(8)); // 70 tokens: 7 chunks
        const RequestId b = *e->add_request(prompts_[0], greedy(30));
        const RequestId keep = *e->add_request(prompts_[1], greedy(8));
        QVERIFY(!e->abort(12345));
        std::map<RequestId, Collected> got;
        step(*e, got);
        step(*e, got);
        EngineSnapshot s = e->snapshot();
        bool a_prefilling = false;
        for (const SnapshotRequest& r : s.requests)
            if (r.id == a)
                a_prefilling = r.computed_tokens > 0 && r.computed_tokens < 70;
        QVERIFY(a_prefilling);
        QVERIFY(e->abort(a));
        QVERIFY(e->check_consistency().ok());
        // Let b decode a few tokens, then abort it.
        while (got[b].ids.size() < 3)
            step(*e, got);
        QVERIFY(e->abort(b));
        QVERIFY(!e->abort(b));
        EngineSnapshot after = e->snapshot();
        bool reported = false;
        for (const SnapshotRequest& r : after.requests)
            if (r.id == b)
                reported = r.finish == FinishReason::Aborted && r.output_tokens == 3;
        QVERIFY(reported);
        run(*e, got);
        QCOMPARE(got[keep].ids, alone(prompts_[1], greedy(8)).ids);
        QCOMPARE(got[b].ids.size(), size_t(3));
        QCOMPARE(e->snapshot().num_used_blocks, 0);
        QCOMPARE(e->num_unfinished(), 0);
        // Aborting a waiting request.
        const RequestId w = *e->add_request(prompts_[0], greedy(4));
        QVERIFY(e->abort(w));
        QVERIFY(!e->has_unfinished());
    }

    void replan_shrink_and_grow_mid_run() {
        EngineConfig c;
        c.block_size = 8;
        c.max_num_batched_tokens = 32;
        c.num_blocks = 64;
        auto e = engine(c);
        std::vector<RequestId> ids;
        for (const auto& p : prompts_)
            ids.push_back(*e->add_request(p, greedy(20)));
        std::map<RequestId, Collected> got;
        for (int i = 0; i < 6; ++i)
            step(*e, got);
        const int32_t used_before = e->snapshot().num_used_blocks;
        QVERIFY(used_before > 14);
        QVERIFY(e->set_num_blocks(14).ok());       // 70 + 20 tokens need 12 blocks alone
        QCOMPARE(e->memory_plan().num_blocks, 64); // takes effect at the next step
        step(*e, got);
        QCOMPARE(e->memory_plan().num_blocks, 14);
        EngineSnapshot s = e->snapshot();
        QCOMPARE(int(s.blocks.size()), 14);
        QVERIFY(s.total_preemptions > 0);
        QCOMPARE(s.memory.kv_bytes, 14 * s.memory.bytes_per_block);
        for (int i = 0; i < 10; ++i)
            step(*e, got);
        QVERIFY(e->set_num_blocks(200).ok());
        step(*e, got);
        QCOMPARE(e->memory_plan().num_blocks, 200);
        run(*e, got);
        for (size_t i = 0; i < ids.size(); ++i)
            QCOMPARE(got[ids[i]].ids, alone(prompts_[i], greedy(20)).ids);
        // Never below what the longest live request needs.
        const RequestId big = *e->add_request(prompts_[2], greedy(20));
        step(*e, got);
        QVERIFY(e->set_num_blocks(1).ok());
        step(*e, got);
        QVERIFY(e->memory_plan().num_blocks >= 12); // 70 + 20 tokens in blocks of 8
        run(*e, got);
        QCOMPARE(got[big].ids, alone(prompts_[2], greedy(20)).ids);
        // A RAM budget plan.
        MemoryBudget mb;
        mb.kv_bytes = 3 * e->memory_plan().bytes_per_block;
        QVERIFY(e->set_memory_budget(mb).ok());
        e->step();
        QCOMPARE(e->memory_plan().num_blocks, 3);
    }

    // Forks share the computed blocks; the first write into the shared partial block copies it.
    void fork_copy_on_write() {
        EngineConfig c;
        c.block_size = 16;
        c.num_blocks = 40;
        auto e = engine(c);
        const auto& prompt = prompts_[1]; // 23 tokens: a partial second block
        const RequestId src = *e->add_request(prompt, greedy(10));
        std::map<RequestId, Collected> got;
        step(*e, got); // prefill + first token
        QCOMPARE(got[src].ids.size(), size_t(1));
        QVERIFY(!e->fork(999, greedy(10)).ok());
        const RequestId child = *e->fork(src, greedy(9));
        auto b1 = e->kv_manager().blocks(src);
        auto b2 = e->kv_manager().blocks(child);
        QCOMPARE(std::vector<int32_t>(b1.begin(), b1.end()),
                 std::vector<int32_t>(b2.begin(), b2.end()));
        QCOMPARE(e->kv_manager().pool().ref_count(b1[1]), 2);
        run(*e, got);
        QVERIFY(e->kv_manager().cow_copies() >= 1);
        const auto ref = alone(prompt, greedy(10)).ids;
        QCOMPARE(got[src].ids, ref);
        // The child continues from the same point: its 9 tokens are the reference's 2nd..10th.
        QCOMPARE(got[child].ids, std::vector<int32_t>(ref.begin() + 1, ref.end()));
        QCOMPARE(e->snapshot().num_used_blocks, 0);
    }

    void snapshot_describes_the_step() {
        EngineConfig c;
        c.block_size = 8;
        c.max_num_batched_tokens = 30;
        c.num_blocks = 48;
        auto e = engine(c);
        std::vector<RequestId> ids;
        for (int i = 0; i < 3; ++i)
            ids.push_back(*e->add_request(shared_prompts_[i], greedy(5)));
        StepOutputs so = e->step();
        EngineSnapshot s = e->snapshot();
        QCOMPARE(s.step_index, int64_t(1));
        QVERIFY(s.step_ms > 0);
        QCOMPARE(s.batch_size, int32_t(e->last_plan().scheduled.size()));
        QCOMPARE(s.prefill_tokens + s.decode_tokens, 30);
        QCOMPARE(s.scheduled.size(), e->last_plan().scheduled.size());
        for (const SnapshotScheduled& sc : s.scheduled) {
            QVERIFY(sc.prefill);
            QVERIFY(!sc.blocks.empty());
            QVERIFY(int64_t(sc.blocks.size()) * 8 >= sc.num_computed);
        }
        QCOMPARE(s.num_running + s.num_waiting, 3);
        int used = 0, free = 0, cached = 0;
        for (size_t b = 0; b < s.blocks.size(); ++b) {
            const SnapshotBlock& blk = s.blocks[b];
            if (blk.state == BlockState::Used) {
                ++used;
                QVERIFY(blk.ref_count > 0);
                QVERIFY(blk.owner >= 0);
            } else {
                QCOMPARE(blk.ref_count, 0);
                QCOMPARE(blk.owner, RequestId(-1));
                (blk.state == BlockState::Free ? free : cached)++;
            }
        }
        QCOMPARE(used, s.num_used_blocks);
        QCOMPARE(free, s.num_free_blocks);
        QCOMPARE(cached, s.num_cached_free_blocks);
        QCOMPARE(int(s.blocks.size()), 48);
        QCOMPARE(s.memory.num_blocks, 48);
        QVERIFY(s.memory.weight_bytes > 0 && s.memory.workspace_bytes > 0);
        // Later requests hit the first one's full prompt blocks once it has computed them.
        std::map<RequestId, Collected> got;
        run(*e, got);
        const RequestId late = *e->add_request(shared_prompts_[3], greedy(5));
        const StepOutputs first = e->step();
        s = e->snapshot();
        QVERIFY(s.prefix_cache_queries > 0);
        QVERIFY(s.prefix_cache_hits >= 40); // 45 shared tokens: 5 full blocks of 8
        bool hashed = false;
        for (const SnapshotBlock& blk : s.blocks)
            hashed |= blk.hash != 0;
        QVERIFY(hashed);
        for (const SnapshotRequest& r : s.requests)
            if (r.id == late) {
                QCOMPARE(r.cached_tokens, 40);
                QVERIFY(r.ttft_ms > 0);
            }
        run(*e, got);
        // Per-request metrics at the end.
        EngineSnapshot copy = e->snapshot(); // a copyable value
        EngineSnapshot again = copy;
        QCOMPARE(again.blocks.size(), copy.blocks.size());
        for (RequestId id : ids)
            QCOMPARE(got[id].ids.size(), size_t(5));
        Q_UNUSED(so);
        Q_UNUSED(first);
    }

    void rejects_bad_requests() {
        EngineConfig c;
        c.num_blocks = 4;
        c.block_size = 8;
        auto e = engine(c);
        QVERIFY(!e->add_request(std::vector<int32_t>{}, greedy(4)).ok());
        QVERIFY(
            !e->add_request(std::vector<int32_t>{m_->transformer->vocab_size()}, greedy(4)).ok());
        QVERIFY(!e->add_request(std::vector<int32_t>(32, 1), greedy(4)).ok()); // 32 slots
        SamplingParams bad = greedy(4);
        bad.top_p = 0;
        QVERIFY(!e->add_request(std::vector<int32_t>{1, 2}, bad).ok());
        // A request that reaches the context limit finishes with "length".
        const RequestId id = *e->add_request(std::vector<int32_t>(30, 1), greedy(100));
        std::map<RequestId, Collected> got;
        run(*e, got);
        QCOMPARE(got[id].finish, FinishReason::Length);
        QCOMPARE(got[id].ids.size(), size_t(2));
        EngineConfig badc;
        badc.block_size = 12;
        QVERIFY(!Engine::create(*m_->transformer, *m_->tokenizer, badc).ok());
        badc.block_size = 16;
        badc.memory.utilization = 1.5;
        QVERIFY(!Engine::create(*m_->transformer, *m_->tokenizer, badc).ok());
    }

    // Any interleaving of add / step / abort / finish with a tiny pool stays consistent and
    // returns every block.
    void randomized_add_step_abort() {
        std::mt19937 rng(99);
        for (int round = 0; round < 6; ++round) {
            EngineConfig c;
            c.block_size = std::array<int32_t, 3>{8, 16, 32}[round % 3];
            c.num_blocks =
                (100 + c.block_size - 1) / c.block_size + static_cast<int32_t>(rng() % 4);
            c.max_num_batched_tokens = 5 + static_cast<int32_t>(rng() % 40);
            c.max_num_seqs = 1 + static_cast<int32_t>(rng() % 6);
            c.enable_prefix_caching = round % 2 == 0;
            auto e = engine(c);
            std::vector<RequestId> live;
            std::map<RequestId, Collected> got;
            for (int op = 0; op < 120; ++op) {
                const int k = static_cast<int>(rng() % 10);
                if (k < 3) {
                    const auto& src = (rng() % 2) ? prompts_ : shared_prompts_;
                    const auto& p = src[rng() % src.size()];
                    auto id = e->add_request(p, greedy(1 + static_cast<int>(rng() % 25)));
                    QVERIFY(id.ok());
                    live.push_back(*id);
                } else if (k < 4 && !live.empty()) {
                    e->abort(live[rng() % live.size()]);
                } else {
                    step(*e, got);
                }
            }
            run(*e, got);
            const EngineSnapshot s = e->snapshot();
            QCOMPARE(s.num_used_blocks, 0);
            QCOMPARE(s.num_free_blocks + s.num_cached_free_blocks, c.num_blocks.value());
            QVERIFY(e->kv_manager().pool().check_invariants().ok());
        }
    }
};

QTEST_GUILESS_MAIN(TestEngine)
#include "test_engine.moc"
