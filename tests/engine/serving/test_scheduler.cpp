// Scheduler without a model: plans are checked step by step while a fake executor advances
// the requests (computed tokens, one appended token when a request reaches its end).
#include <memory>

#include "engine/serving/scheduler.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

// Requests are plain token ids: no model, no tokenizer.
struct Requests {
    std::vector<std::unique_ptr<Request>> all;
    Request* make(int32_t prompt_len, int max_tokens, int32_t first_token = 1) {
        SamplingParams p;
        p.temperature = 0;
        p.max_tokens = max_tokens;
        std::vector<int32_t> prompt;
        for (int32_t i = 0; i < prompt_len; ++i)
            prompt.push_back(first_token + i);
        all.push_back(std::make_unique<Request>(static_cast<RequestId>(all.size()), prompt, p));
        return all.back().get();
    }
};

// Applies a plan as the engine would; finishes requests at max_tokens.
void execute(const StepPlan& plan, Scheduler& s, std::vector<Request*>& all) {
    for (const ScheduledRequest& sr : plan.scheduled) {
        Request* r = nullptr;
        for (Request* x : all)
            if (x->id == sr.id)
                r = x;
        MT_REQUIRE(r);
        MT_REQUIRE_COMPARE(sr.num_computed, r->num_computed);
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

} // namespace

MT_TEST(chunked_prefill_and_decode_share_a_batch) {
    Requests reqs;
    KvCacheManager kv(64, 16, false);
    SchedulerConfig c;
    c.max_num_batched_tokens = 16;
    Scheduler s(c, kv);
    std::vector<Request*> all = {reqs.make(4, 3), reqs.make(40, 2)};
    for (Request* r : all)
        s.add(r);

    StepPlan plan;
    s.schedule(plan); // A's 4-token prompt + 12 tokens of B's prompt
    MT_REQUIRE_COMPARE(plan.scheduled.size(), size_t(2));
    MT_REQUIRE_COMPARE(plan.scheduled[0].num_scheduled, 4);
    MT_REQUIRE(plan.scheduled[0].prefill && plan.scheduled[0].wants_logits());
    MT_REQUIRE_COMPARE(plan.scheduled[1].num_scheduled, 12);
    MT_REQUIRE(plan.scheduled[1].prefill && !plan.scheduled[1].wants_logits());
    MT_REQUIRE_COMPARE(plan.num_tokens(), 16);
    MT_REQUIRE_COMPARE(plan.admitted.size(), size_t(2));
    execute(plan, s, all);

    s.schedule(plan); // A decodes 1, B continues with 15
    MT_REQUIRE_COMPARE(plan.scheduled.size(), size_t(2));
    MT_REQUIRE_COMPARE(plan.scheduled[0].num_scheduled, 1);
    MT_REQUIRE(!plan.scheduled[0].prefill);
    MT_REQUIRE_COMPARE(plan.num_decode_tokens, 1);
    MT_REQUIRE_COMPARE(plan.scheduled[1].num_scheduled, 15);
    MT_REQUIRE_COMPARE(plan.num_prefill_tokens, 15);
    execute(plan, s, all);

    s.schedule(plan); // A's last decode, B's last 13 prompt tokens -> logits
    MT_REQUIRE_COMPARE(plan.scheduled[1].num_scheduled, 13);
    MT_REQUIRE(plan.scheduled[1].wants_logits());
    execute(plan, s, all);
    MT_REQUIRE_COMPARE(all[0]->status, RequestStatus::Finished);
    MT_REQUIRE_COMPARE(s.running().size(), size_t(1));
    s.schedule(plan);
    MT_REQUIRE_COMPARE(plan.scheduled.size(), size_t(1));
    MT_REQUIRE_COMPARE(plan.num_decode_tokens, 1);
    execute(plan, s, all);
    MT_REQUIRE(!s.has_unfinished());
    MT_REQUIRE_COMPARE(kv.pool().num_free(), 64);
}

MT_TEST(max_num_seqs_and_fcfs) {
    Requests reqs;
    KvCacheManager kv(64, 8, false);
    SchedulerConfig c;
    c.max_num_seqs = 2;
    c.max_num_batched_tokens = 100;
    Scheduler s(c, kv);
    std::vector<Request*> all = {reqs.make(5, 2), reqs.make(5, 4), reqs.make(5, 1)};
    for (Request* r : all)
        s.add(r);
    StepPlan plan;
    s.schedule(plan);
    MT_REQUIRE_COMPARE(plan.admitted, (std::vector<RequestId>{all[0]->id, all[1]->id}));
    execute(plan, s, all);
    s.schedule(plan);
    MT_REQUIRE(plan.admitted.empty()); // full
    execute(plan, s, all);             // request 0 finishes
    s.schedule(plan);
    MT_REQUIRE_COMPARE(plan.admitted, (std::vector<RequestId>{all[2]->id}));
    MT_REQUIRE_COMPARE(plan.scheduled.size(), size_t(2));
}

MT_TEST(preempts_the_newest_and_keeps_its_tokens) {
    Requests reqs;
    // 4 blocks of 8: two requests of 12 tokens (2 blocks each) fill the pool.
    KvCacheManager kv(4, 8, false);
    SchedulerConfig c;
    c.max_num_batched_tokens = 64;
    Scheduler s(c, kv);
    std::vector<Request*> all = {reqs.make(12, 10), reqs.make(12, 10, 100)};
    for (Request* r : all)
        s.add(r);
    StepPlan plan;
    s.schedule(plan);
    MT_REQUIRE_COMPARE(plan.admitted.size(), size_t(2));
    execute(plan, s, all);        // both now have 13 tokens, 12 computed
    for (int i = 0; i < 4; ++i) { // decode to 17 tokens (16 computed): 2 blocks each
        s.schedule(plan);
        MT_REQUIRE(plan.preempted.empty());
        execute(plan, s, all);
    }
    MT_REQUIRE_COMPARE(all[0]->num_tokens(), 17);
    // Token 16 needs a third block for the oldest: the newest is preempted.
    s.schedule(plan);
    MT_REQUIRE_COMPARE(plan.preempted, (std::vector<RequestId>{all[1]->id}));
    MT_REQUIRE_COMPARE(plan.scheduled.size(), size_t(1));
    MT_REQUIRE_COMPARE(plan.scheduled[0].id, all[0]->id);
    MT_REQUIRE_COMPARE(all[1]->status, RequestStatus::Waiting);
    MT_REQUIRE_COMPARE(all[1]->num_computed, 0);
    MT_REQUIRE_COMPARE(all[1]->num_tokens(), 17); // generated tokens kept as prompt
    MT_REQUIRE_COMPARE(all[1]->num_preemptions, 1);
    MT_REQUIRE_COMPARE(s.waiting().front(), all[1]);
    MT_REQUIRE(plan.admitted.empty()); // nobody is admitted in a step that preempted
    execute(plan, s, all);
    MT_REQUIRE(kv.check_consistency().ok());
    // Run to the end: everything finishes, every block returns.
    for (int guard = 0; s.has_unfinished() && guard < 200; ++guard) {
        s.schedule(plan);
        for (const ScheduledRequest& sr : plan.scheduled)
            if (sr.id == all[1]->id && sr.num_computed == 0) {
                MT_REQUIRE(sr.prefill); // recompute of prompt + generated tokens
                MT_REQUIRE_COMPARE(sr.num_total, 17);
            }
        execute(plan, s, all);
        MT_REQUIRE(kv.check_consistency().ok());
    }
    MT_REQUIRE(!s.has_unfinished());
    MT_REQUIRE_COMPARE(all[0]->num_output(), 10);
    MT_REQUIRE_COMPARE(all[1]->num_output(), 10);
    MT_REQUIRE_COMPARE(kv.pool().num_free(), 4);
    MT_REQUIRE(s.total_preemptions() >= 1);
}

MT_TEST(static_policy_admits_the_whole_batch_beyond_the_budget) {
    Requests reqs;
    KvCacheManager kv(64, 8, false);
    SchedulerConfig c;
    c.max_num_seqs = 4;
    c.max_num_batched_tokens = 10;
    c.policy = SchedulerPolicy::Static;
    Scheduler s(c, kv);
    std::vector<Request*> all = {reqs.make(8, 3), reqs.make(8, 3), reqs.make(8, 3), reqs.make(8, 3),
                                 reqs.make(8, 3)};
    for (Request* r : all)
        s.add(r);
    StepPlan plan;
    s.schedule(plan);
    MT_REQUIRE_COMPARE(plan.admitted.size(), size_t(4)); // the batch, not what the budget covers
    MT_REQUIRE_COMPARE(plan.num_tokens(), 10);
    MT_REQUIRE_COMPARE(plan.scheduled.size(), size_t(2));
    execute(plan, s, all);
    s.schedule(plan);
    MT_REQUIRE(plan.admitted.empty());
    MT_REQUIRE_COMPARE(plan.num_tokens(), 10); // 6 left of request 1 (and its decode next), 4 of 2
    for (int guard = 0; s.has_unfinished() && guard < 100; ++guard) {
        s.schedule(plan);
        execute(plan, s, all);
    }
    MT_REQUIRE(!s.has_unfinished());
    MT_REQUIRE_COMPARE(kv.pool().num_free(), 64);
}

MT_TEST(static_policy_reserves_and_waits_for_the_batch) {
    Requests reqs;
    KvCacheManager kv(64, 8, false);
    SchedulerConfig c;
    c.max_num_seqs = 2;
    c.max_num_batched_tokens = 100;
    c.policy = SchedulerPolicy::Static;
    c.context_limit = 1000;
    Scheduler s(c, kv);
    std::vector<Request*> all = {reqs.make(5, 2), reqs.make(5, 20), reqs.make(5, 1)};
    for (Request* r : all)
        s.add(r);
    StepPlan plan;
    s.schedule(plan);
    MT_REQUIRE_COMPARE(plan.admitted.size(), size_t(2));
    MT_REQUIRE_COMPARE(kv.blocks(all[1]->id).size(), size_t(4)); // 5 + 20 tokens reserved
    execute(plan, s, all);
    execute((s.schedule(plan), plan), s, all); // request 0 finishes
    MT_REQUIRE_COMPARE(all[0]->status, RequestStatus::Finished);
    for (int i = 0; i < 18; ++i) {
        s.schedule(plan);
        MT_REQUIRE(plan.admitted.empty()); // the batch runs to completion first
        execute(plan, s, all);
    }
    MT_REQUIRE_COMPARE(all[1]->status, RequestStatus::Finished);
    s.schedule(plan);
    MT_REQUIRE_COMPARE(plan.admitted, (std::vector<RequestId>{all[2]->id}));
}

MINI_TEST_MAIN()
