// Scheduler without a model: plans are checked step by step while a fake executor advances
// the requests (computed tokens, one appended token when a request reaches its end).
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

#include "engine/serving/scheduler.h"
#include "serving_test_model.h"

using namespace llmwb;

class TestScheduler : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<test::ServingTestModel> m_;
    std::vector<std::unique_ptr<Request>> reqs_;

    Request* make(int32_t prompt_len, int max_tokens, int32_t first_token = 1) {
        SamplingParams p;
        p.temperature = 0;
        p.max_tokens = max_tokens;
        std::vector<int32_t> prompt;
        for (int32_t i = 0; i < prompt_len; ++i)
            prompt.push_back(first_token + i);
        reqs_.push_back(std::make_unique<Request>(static_cast<RequestId>(reqs_.size()), prompt, p,
                                                  *m_->tokenizer, true));
        return reqs_.back().get();
    }
    // Applies a plan as the engine would; finishes requests at max_tokens.
    static void execute(const StepPlan& plan, Scheduler& s, std::vector<Request*>& all) {
        for (const ScheduledRequest& sr : plan.scheduled) {
            Request* r = nullptr;
            for (Request* x : all)
                if (x->id == sr.id)
                    r = x;
            QVERIFY(r);
            QCOMPARE(sr.num_computed, r->num_computed);
            r->num_computed += sr.num_scheduled;
            if (sr.wants_logits()) {
                r->tokens.push_back(7);
                if (r->num_output() >= r->params.max_tokens) {
                    s.remove(r);
                    r->status = RequestStatus::Finished;
                }
            }
        }
    }

  private slots:
    void initTestCase() {
        std::string err;
        m_ = test::make_serving_test_model(dir_.path().toStdString(), &err);
        QVERIFY2(m_, err.c_str());
    }

    void chunked_prefill_and_decode_share_a_batch() {
        KvCacheManager kv(64, 16, false);
        SchedulerConfig c;
        c.max_num_batched_tokens = 16;
        Scheduler s(c, kv);
        std::vector<Request*> all = {make(4, 3), make(40, 2)};
        for (Request* r : all)
            s.add(r);

        StepPlan plan;
        s.schedule(plan); // A's 4-token prompt + 12 tokens of B's prompt
        QCOMPARE(plan.scheduled.size(), size_t(2));
        QCOMPARE(plan.scheduled[0].num_scheduled, 4);
        QVERIFY(plan.scheduled[0].prefill && plan.scheduled[0].wants_logits());
        QCOMPARE(plan.scheduled[1].num_scheduled, 12);
        QVERIFY(plan.scheduled[1].prefill && !plan.scheduled[1].wants_logits());
        QCOMPARE(plan.num_tokens(), 16);
        QCOMPARE(plan.admitted.size(), size_t(2));
        execute(plan, s, all);

        s.schedule(plan); // A decodes 1, B continues with 15
        QCOMPARE(plan.scheduled.size(), size_t(2));
        QCOMPARE(plan.scheduled[0].num_scheduled, 1);
        QVERIFY(!plan.scheduled[0].prefill);
        QCOMPARE(plan.num_decode_tokens, 1);
        QCOMPARE(plan.scheduled[1].num_scheduled, 15);
        QCOMPARE(plan.num_prefill_tokens, 15);
        execute(plan, s, all);

        s.schedule(plan); // A's last decode, B's last 13 prompt tokens -> logits
        QCOMPARE(plan.scheduled[1].num_scheduled, 13);
        QVERIFY(plan.scheduled[1].wants_logits());
        execute(plan, s, all);
        QCOMPARE(all[0]->status, RequestStatus::Finished);
        QCOMPARE(s.running().size(), size_t(1));
        s.schedule(plan);
        QCOMPARE(plan.scheduled.size(), size_t(1));
        QCOMPARE(plan.num_decode_tokens, 1);
        execute(plan, s, all);
        QVERIFY(!s.has_unfinished());
        QCOMPARE(kv.pool().num_free(), 64);
    }

    void max_num_seqs_and_fcfs() {
        KvCacheManager kv(64, 8, false);
        SchedulerConfig c;
        c.max_num_seqs = 2;
        c.max_num_batched_tokens = 100;
        Scheduler s(c, kv);
        std::vector<Request*> all = {make(5, 2), make(5, 4), make(5, 1)};
        for (Request* r : all)
            s.add(r);
        StepPlan plan;
        s.schedule(plan);
        QCOMPARE(plan.admitted, (std::vector<RequestId>{all[0]->id, all[1]->id}));
        execute(plan, s, all);
        s.schedule(plan);
        QVERIFY(plan.admitted.empty()); // full
        execute(plan, s, all);          // request 0 finishes
        s.schedule(plan);
        QCOMPARE(plan.admitted, (std::vector<RequestId>{all[2]->id}));
        QCOMPARE(plan.scheduled.size(), size_t(2));
    }

    void preempts_the_newest_and_keeps_its_tokens() {
        // 4 blocks of 8: two requests of 12 tokens (2 blocks each) fill the pool.
        KvCacheManager kv(4, 8, false);
        SchedulerConfig c;
        c.max_num_batched_tokens = 64;
        Scheduler s(c, kv);
        std::vector<Request*> all = {make(12, 10), make(12, 10, 100)};
        for (Request* r : all)
            s.add(r);
        StepPlan plan;
        s.schedule(plan);
        QCOMPARE(plan.admitted.size(), size_t(2));
        execute(plan, s, all);        // both now have 13 tokens, 12 computed
        for (int i = 0; i < 4; ++i) { // decode to 17 tokens (16 computed): 2 blocks each
            s.schedule(plan);
            QVERIFY(plan.preempted.empty());
            execute(plan, s, all);
        }
        QCOMPARE(all[0]->num_tokens(), 17);
        // Token 16 needs a third block for the oldest: the newest is preempted.
        s.schedule(plan);
        QCOMPARE(plan.preempted, (std::vector<RequestId>{all[1]->id}));
        QCOMPARE(plan.scheduled.size(), size_t(1));
        QCOMPARE(plan.scheduled[0].id, all[0]->id);
        QCOMPARE(all[1]->status, RequestStatus::Waiting);
        QCOMPARE(all[1]->num_computed, 0);
        QCOMPARE(all[1]->num_tokens(), 17); // generated tokens kept as prompt
        QCOMPARE(all[1]->num_preemptions, 1);
        QCOMPARE(s.waiting().front(), all[1]);
        QVERIFY(plan.admitted.empty()); // nobody is admitted in a step that preempted
        execute(plan, s, all);
        QVERIFY(kv.check_consistency().ok());
        // Run to the end: everything finishes, every block returns.
        for (int guard = 0; s.has_unfinished() && guard < 200; ++guard) {
            s.schedule(plan);
            for (const ScheduledRequest& sr : plan.scheduled)
                if (sr.id == all[1]->id && sr.num_computed == 0) {
                    QVERIFY(sr.prefill); // recompute of prompt + generated tokens
                    QCOMPARE(sr.num_total, 17);
                }
            execute(plan, s, all);
            QVERIFY(kv.check_consistency().ok());
        }
        QVERIFY(!s.has_unfinished());
        QCOMPARE(all[0]->num_output(), 10);
        QCOMPARE(all[1]->num_output(), 10);
        QCOMPARE(kv.pool().num_free(), 4);
        QVERIFY(s.total_preemptions() >= 1);
    }

    void static_policy_admits_the_whole_batch_beyond_the_budget() {
        KvCacheManager kv(64, 8, false);
        SchedulerConfig c;
        c.max_num_seqs = 4;
        c.max_num_batched_tokens = 10;
        c.policy = SchedulerPolicy::Static;
        Scheduler s(c, kv);
        std::vector<Request*> all = {make(8, 3), make(8, 3), make(8, 3), make(8, 3), make(8, 3)};
        for (Request* r : all)
            s.add(r);
        StepPlan plan;
        s.schedule(plan);
        QCOMPARE(plan.admitted.size(), size_t(4)); // the batch, not what the budget covers
        QCOMPARE(plan.num_tokens(), 10);
        QCOMPARE(plan.scheduled.size(), size_t(2));
        execute(plan, s, all);
        s.schedule(plan);
        QVERIFY(plan.admitted.empty());
        QCOMPARE(plan.num_tokens(), 10); // 6 left of request 1 (and its decode next), 4 of 2
        for (int guard = 0; s.has_unfinished() && guard < 100; ++guard) {
            s.schedule(plan);
            execute(plan, s, all);
        }
        QVERIFY(!s.has_unfinished());
        QCOMPARE(kv.pool().num_free(), 64);
    }

    void static_policy_reserves_and_waits_for_the_batch() {
        KvCacheManager kv(64, 8, false);
        SchedulerConfig c;
        c.max_num_seqs = 2;
        c.max_num_batched_tokens = 100;
        c.policy = SchedulerPolicy::Static;
        c.context_limit = 1000;
        Scheduler s(c, kv);
        std::vector<Request*> all = {make(5, 2), make(5, 20), make(5, 1)};
        for (Request* r : all)
            s.add(r);
        StepPlan plan;
        s.schedule(plan);
        QCOMPARE(plan.admitted.size(), size_t(2));
        QCOMPARE(kv.blocks(all[1]->id).size(), size_t(4)); // 5 + 20 tokens reserved
        execute(plan, s, all);
        execute((s.schedule(plan), plan), s, all); // request 0 finishes
        QCOMPARE(all[0]->status, RequestStatus::Finished);
        for (int i = 0; i < 18; ++i) {
            s.schedule(plan);
            QVERIFY(plan.admitted.empty()); // the batch runs to completion first
            execute(plan, s, all);
        }
        QCOMPARE(all[1]->status, RequestStatus::Finished);
        s.schedule(plan);
        QCOMPARE(plan.admitted, (std::vector<RequestId>{all[2]->id}));
    }
};

QTEST_GUILESS_MAIN(TestScheduler)
#include "test_scheduler.moc"
