// Engine: greedy outputs of concurrent requests equal single-request generation (generate())
// across block sizes, token budgets that force chunked prefill, pools that force preemption,
// with and without shared prefixes (prefix-cache hits checked through the counters); seeded
// sampling and stop strings stream the same text; abort at any time; re-planning while
// requests run; forks with copy-on-write; snapshots; randomised add/step/abort runs.
#include <array>
#include <map>
#include <memory>
#include <random>

#include "engine/serving/engine.h"
#include "engine/serving/generation.h"
#include "serving_test_model.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::mini_test;

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

struct Fixture {
    TempDir dir;
    std::unique_ptr<test::ServingTestModel> m;
    std::vector<std::vector<int32_t>> prompts, shared_prompts;
};

Fixture& fixture() {
    // Destroyed at exit: its TempDir removes the model files.
    static std::unique_ptr<Fixture> f = [] {
        auto f = std::make_unique<Fixture>();
        std::string err;
        f->m = test::make_serving_test_model(f->dir.path(), &err);
        if (!f->m) {
            std::fprintf(stderr, "serving test model: %s\n", err.c_str());
            std::exit(1);
        }
        std::mt19937 rng(7);
        const int32_t vocab = f->m->transformer->vocab_size();
        auto random_ids = [&](int n) {
            std::vector<int32_t> v;
            for (int i = 0; i < n; ++i)
                v.push_back(static_cast<int32_t>(rng() % vocab));
            return v;
        };
        for (int n : {5, 23, 70, 9, 41, 16, 33})
            f->prompts.push_back(random_ids(n));
        const std::vector<int32_t> system = random_ids(45);
        for (int n : {3, 11, 20, 7, 30}) {
            auto p = system;
            auto tail = random_ids(n);
            p.insert(p.end(), tail.begin(), tail.end());
            f->shared_prompts.push_back(p);
        }
        return f;
    }();
    return *f;
}

std::unique_ptr<Engine> engine(EngineConfig c) {
    auto e = Engine::create(*fixture().m->transformer, *fixture().m->tokenizer, c);
    MT_REQUIRE_MSG(e.ok(), "engine: %s", e.ok() ? "" : e.message().c_str());
    return std::move(e.value());
}

// The reference: the request alone in an engine of its own (no other request, no prefix cache,
// the whole prompt in one step).
GenerationResult alone(const std::vector<int32_t>& prompt, const SamplingParams& p) {
    EngineConfig c;
    c.memory.num_blocks = 64;
    c.max_num_batched_tokens = 512;
    c.enable_prefix_caching = false;
    auto e = engine(c);
    auto r = generate(*e, prompt, p);
    MT_REQUIRE_MSG(r.ok(), "generate: %s", r.ok() ? "" : r.message().c_str());
    return std::move(r.value());
}

// One step; its outputs are appended to `out`; consistency is checked.
void step(Engine& e, std::map<RequestId, Collected>& out, bool* saw_chunk = nullptr) {
    StepOutputs so = e.step();
    if (saw_chunk)
        for (const ScheduledRequest& s : so.scheduled)
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
    MT_REQUIRE_MSG(st.ok(), "consistency: %s", st.ok() ? "" : st.message().c_str());
}
// Steps until done.
void run(Engine& e, std::map<RequestId, Collected>& out, bool* saw_chunk = nullptr) {
    for (int i = 0; e.has_unfinished() && i < 5000; ++i)
        step(e, out, saw_chunk);
}

} // namespace

struct BatchRow {
    std::string name;
    int block_size, budget, num_blocks;
    bool prefix_caching, shared, expect_preemption;
    int max_tokens;
};

std::vector<BatchRow> batch_rows() {
    std::vector<BatchRow> rows;
    // Tight pools hold the longest request alone (70 + 32 tokens) and one block more:
    // requests that grow while the pool is full force preemption.
    for (int bs : kKvBlockSizes) {
        const int tight = (102 + bs - 1) / bs + 1;
        const std::string b = "bs" + std::to_string(bs);
        rows.push_back({b + " roomy", bs, 512, 128, true, false, false, 6});
        rows.push_back({b + " chunked", bs, 13, 128, true, false, false, 6});
        rows.push_back({b + " preempt", bs, 64, tight, true, false, true, 24});
        rows.push_back({b + " preempt chunked no-cache", bs, 7, tight, false, false, true, 24});
        rows.push_back({b + " shared prefix", bs, 40, 128, true, true, false, 6});
        rows.push_back({b + " shared prefix preempt", bs, 24, tight, true, true, true, 24});
        rows.push_back({b + " shared no-cache", bs, 40, 128, false, true, false, 6});
    }
    return rows;
}

MT_TEST_TABLE(greedy_batch_equals_alone, BatchRow, batch_rows()) {
    const auto [name, block_size, budget, num_blocks, prefix_caching, shared, expect_preemption,
                max_tokens] = row;
    const auto& prompts = shared ? fixture().shared_prompts : fixture().prompts;
    EngineConfig c;
    c.block_size = block_size;
    c.max_num_batched_tokens = budget;
    c.memory.num_blocks = num_blocks;
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
        MT_REQUIRE_MSG(id.ok(), "%s", id.ok() ? "" : id.message().c_str());
        ids.push_back(*id);
        // Shared prompts arrive one after the other so later ones can hit the cache.
        if (shared)
            step(*e, got, &saw_chunk);
    }
    run(*e, got, &saw_chunk);
    MT_REQUIRE(!e->has_unfinished());
    for (size_t i = 0; i < prompts.size(); ++i) {
        const Collected& col = got[ids[i]];
        MT_REQUIRE_COMPARE(col.ids, ref[i].ids);
        MT_REQUIRE_COMPARE(col.text, ref[i].text);
        MT_REQUIRE_COMPARE(col.finish, FinishReason::Length);
        MT_REQUIRE_COMPARE(col.finished_events, 1);
    }
    EngineSnapshot snap = e->snapshot();
    MT_REQUIRE_COMPARE(snap.num_used_blocks, 0);
    MT_REQUIRE_COMPARE(snap.num_free_blocks + snap.num_cached_free_blocks, num_blocks);
    size_t longest = 0;
    for (const auto& p : prompts)
        longest = std::max(longest, p.size());
    if (static_cast<size_t>(budget) < longest)
        MT_REQUIRE(saw_chunk);
    if (expect_preemption)
        MT_REQUIRE(snap.total_preemptions > 0);
    if (shared && prefix_caching)
        MT_REQUIRE(snap.prefix_cache_hits > 0);
    if (!prefix_caching)
        MT_REQUIRE_COMPARE(snap.prefix_cache_hits, int64_t(0));
}

// Seeded sampling and stop strings: each request's stream equals generate() with the same
// seed (per-request RNG), including text held back around stop strings.
MT_TEST(seeded_sampling_and_stops_equal_alone) {
    EngineConfig c;
    c.block_size = 8;
    c.max_num_batched_tokens = 16;
    c.memory.num_blocks = 20;
    auto e = engine(c);
    std::vector<RequestId> ids;
    std::vector<GenerationResult> ref;
    for (size_t i = 0; i < fixture().prompts.size(); ++i) {
        SamplingParams p;
        p.temperature = 0.9f;
        p.top_k = 40;
        p.seed = 100 + i;
        p.max_tokens = 20;
        ref.push_back(alone(fixture().prompts[i], p));
        // Stop at a piece of the reference text (when it has one) to exercise stops.
        const std::string& t = ref.back().text;
        if (t.size() > 12 && i % 2 == 0) {
            p.stop = {t.substr(t.size() / 2, 3)};
            ref.back() = alone(fixture().prompts[i], p);
        }
        ids.push_back(*e->add_request(fixture().prompts[i], p));
    }
    std::map<RequestId, Collected> got;
    run(*e, got);
    int stopped = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
        const Collected& col = got[ids[i]];
        MT_REQUIRE_COMPARE(col.ids, ref[i].ids);
        MT_REQUIRE_COMPARE(col.text, ref[i].text);
        MT_REQUIRE_COMPARE(col.finish, ref[i].finish);
        MT_REQUIRE_COMPARE(col.stop, ref[i].stop_matched);
        stopped += col.finish == FinishReason::Stop;
    }
    MT_REQUIRE(e->snapshot().total_preemptions > 0);
    MT_REQUIRE(stopped > 0);
}

MT_TEST(abort_mid_prefill_and_mid_decode) {
    EngineConfig c;
    c.block_size = 16;
    c.max_num_batched_tokens = 10;
    c.memory.num_blocks = 32;
    auto e = engine(c);
    const RequestId a = *e->add_request(fixture().prompts[2], greedy(8)); // 70 tokens: 7 chunks
    const RequestId b = *e->add_request(fixture().prompts[0], greedy(30));
    const RequestId keep = *e->add_request(fixture().prompts[1], greedy(8));
    MT_REQUIRE(!e->abort(12345));
    std::map<RequestId, Collected> got;
    step(*e, got);
    step(*e, got);
    EngineSnapshot s = e->snapshot();
    bool a_prefilling = false;
    for (const SnapshotRequest& r : s.requests)
        if (r.id == a)
            a_prefilling = r.computed_tokens > 0 && r.computed_tokens < 70;
    MT_REQUIRE(a_prefilling);
    MT_REQUIRE(e->abort(a));
    MT_REQUIRE(e->check_consistency().ok());
    // Let b decode a few tokens, then abort it.
    while (got[b].ids.size() < 3)
        step(*e, got);
    MT_REQUIRE(e->abort(b));
    MT_REQUIRE(!e->abort(b));
    EngineSnapshot after = e->snapshot();
    bool reported = false;
    for (const SnapshotRequest& r : after.requests)
        if (r.id == b)
            reported = r.finish == FinishReason::Aborted && r.output_tokens == 3;
    MT_REQUIRE(reported);
    run(*e, got);
    MT_REQUIRE_COMPARE(got[keep].ids, alone(fixture().prompts[1], greedy(8)).ids);
    MT_REQUIRE_COMPARE(got[b].ids.size(), size_t(3));
    MT_REQUIRE_COMPARE(e->snapshot().num_used_blocks, 0);
    MT_REQUIRE_COMPARE(e->num_unfinished(), 0);
    // Aborting a waiting request.
    const RequestId w = *e->add_request(fixture().prompts[0], greedy(4));
    MT_REQUIRE(e->abort(w));
    MT_REQUIRE(!e->has_unfinished());
}

MT_TEST(replan_shrink_and_grow_mid_run) {
    EngineConfig c;
    c.block_size = 8;
    c.max_num_batched_tokens = 32;
    c.memory.num_blocks = 64;
    auto e = engine(c);
    std::vector<RequestId> ids;
    for (const auto& p : fixture().prompts)
        ids.push_back(*e->add_request(p, greedy(20)));
    std::map<RequestId, Collected> got;
    for (int i = 0; i < 6; ++i)
        step(*e, got);
    const int32_t used_before = e->snapshot().num_used_blocks;
    MT_REQUIRE(used_before > 14);
    MT_REQUIRE(e->set_num_blocks(14).ok());              // 70 + 20 tokens need 12 blocks alone
    MT_REQUIRE_COMPARE(e->memory_plan().num_blocks, 64); // takes effect at the next step
    step(*e, got);
    MT_REQUIRE_COMPARE(e->memory_plan().num_blocks, 14);
    EngineSnapshot s = e->snapshot();
    MT_REQUIRE_COMPARE(int(s.blocks.size()), 14);
    MT_REQUIRE(s.total_preemptions > 0);
    MT_REQUIRE_COMPARE(s.memory.kv_bytes, 14 * s.memory.bytes_per_block);
    for (int i = 0; i < 10; ++i)
        step(*e, got);
    MT_REQUIRE(e->set_num_blocks(200).ok());
    step(*e, got);
    MT_REQUIRE_COMPARE(e->memory_plan().num_blocks, 200);
    run(*e, got);
    for (size_t i = 0; i < ids.size(); ++i)
        MT_REQUIRE_COMPARE(got[ids[i]].ids, alone(fixture().prompts[i], greedy(20)).ids);
    // Never below what the longest live request needs.
    const RequestId big = *e->add_request(fixture().prompts[2], greedy(20));
    step(*e, got);
    MT_REQUIRE(e->set_num_blocks(1).ok());
    step(*e, got);
    MT_REQUIRE(e->memory_plan().num_blocks >= 12); // 70 + 20 tokens in blocks of 8
    run(*e, got);
    MT_REQUIRE_COMPARE(got[big].ids, alone(fixture().prompts[2], greedy(20)).ids);
    // A RAM budget plan.
    MemoryBudget mb;
    mb.kv_bytes = 3 * e->memory_plan().bytes_per_block;
    MT_REQUIRE(e->set_memory_budget(mb).ok());
    e->step();
    MT_REQUIRE_COMPARE(e->memory_plan().num_blocks, 3);
}

// Forks share the computed blocks; the first write into the shared partial block copies it.
MT_TEST(fork_copy_on_write) {
    EngineConfig c;
    c.block_size = 16;
    c.memory.num_blocks = 40;
    auto e = engine(c);
    const auto& prompt = fixture().prompts[1]; // 23 tokens: a partial second block
    const RequestId src = *e->add_request(prompt, greedy(10));
    std::map<RequestId, Collected> got;
    step(*e, got); // prefill + first token
    MT_REQUIRE_COMPARE(got[src].ids.size(), size_t(1));
    MT_REQUIRE(!e->fork(999, greedy(10)).ok());
    const RequestId child = *e->fork(src, greedy(9));
    auto b1 = e->kv_manager().blocks(src);
    auto b2 = e->kv_manager().blocks(child);
    MT_REQUIRE_COMPARE(std::vector<int32_t>(b1.begin(), b1.end()),
                       std::vector<int32_t>(b2.begin(), b2.end()));
    MT_REQUIRE_COMPARE(e->kv_manager().pool().ref_count(b1[1]), 2);
    run(*e, got);
    MT_REQUIRE(e->kv_manager().cow_copies() >= 1);
    const auto ref = alone(prompt, greedy(10)).ids;
    MT_REQUIRE_COMPARE(got[src].ids, ref);
    // The child continues from the same point: its 9 tokens are the reference's 2nd..10th.
    MT_REQUIRE_COMPARE(got[child].ids, std::vector<int32_t>(ref.begin() + 1, ref.end()));
    MT_REQUIRE_COMPARE(e->snapshot().num_used_blocks, 0);
}

MT_TEST(snapshot_describes_the_step) {
    EngineConfig c;
    c.block_size = 8;
    c.max_num_batched_tokens = 30;
    c.memory.num_blocks = 48;
    c.record_steps = true;
    auto e = engine(c);
    std::vector<RequestId> ids;
    for (int i = 0; i < 3; ++i)
        ids.push_back(*e->add_request(fixture().shared_prompts[i], greedy(5)));
    StepOutputs so = e->step();
    EngineSnapshot s = e->snapshot();
    MT_REQUIRE_COMPARE(s.step_index, int64_t(1));
    MT_REQUIRE(s.step_ms > 0);
    MT_REQUIRE_COMPARE(s.batch_size, int32_t(so.scheduled.size()));
    MT_REQUIRE_COMPARE(s.batch_size, so.batch_size);
    MT_REQUIRE_COMPARE(s.prefill_tokens + s.decode_tokens, 30);
    MT_REQUIRE_COMPARE(so.num_prefill_tokens + so.num_decode_tokens, 30);
    MT_REQUIRE_COMPARE(s.scheduled.size(), so.scheduled.size());
    for (size_t i = 0; i < s.scheduled.size(); ++i) {
        MT_REQUIRE_COMPARE(s.scheduled[i].id, so.scheduled[i].id);
        MT_REQUIRE_COMPARE(s.scheduled[i].num_scheduled, so.scheduled[i].num_scheduled);
    }
    for (const SnapshotScheduled& sc : s.scheduled) {
        MT_REQUIRE(sc.prefill);
        MT_REQUIRE(!sc.blocks.empty());
        MT_REQUIRE(int64_t(sc.blocks.size()) * 8 >= sc.num_computed);
    }
    MT_REQUIRE_COMPARE(s.num_running + s.num_waiting, 3);
    int used = 0, free = 0, cached = 0;
    for (size_t b = 0; b < s.blocks.size(); ++b) {
        const SnapshotBlock& blk = s.blocks[b];
        if (blk.state == BlockState::Used) {
            ++used;
            MT_REQUIRE(blk.ref_count > 0);
            MT_REQUIRE(blk.owner >= 0);
        } else {
            MT_REQUIRE_COMPARE(blk.ref_count, 0);
            MT_REQUIRE_COMPARE(blk.owner, RequestId(-1));
            (blk.state == BlockState::Free ? free : cached)++;
        }
    }
    MT_REQUIRE_COMPARE(used, s.num_used_blocks);
    MT_REQUIRE_COMPARE(free, s.num_free_blocks);
    MT_REQUIRE_COMPARE(cached, s.num_cached_free_blocks);
    MT_REQUIRE_COMPARE(int(s.blocks.size()), 48);
    MT_REQUIRE_COMPARE(s.memory.num_blocks, 48);
    MT_REQUIRE(s.memory.weight_bytes > 0 && s.memory.workspace_bytes > 0);
    // Later requests hit the first one's full prompt blocks once it has computed them.
    std::map<RequestId, Collected> got;
    run(*e, got);
    const RequestId late = *e->add_request(fixture().shared_prompts[3], greedy(5));
    const StepOutputs first = e->step();
    s = e->snapshot();
    MT_REQUIRE(s.prefix_cache_queries > 0);
    MT_REQUIRE(s.prefix_cache_hits >= 40); // 45 shared tokens: 5 full blocks of 8
    bool hashed = false;
    for (const SnapshotBlock& blk : s.blocks)
        hashed |= blk.hash != 0;
    MT_REQUIRE(hashed);
    int seen_late = 0;
    for (const SnapshotRequest& r : s.requests)
        if (r.id == late) {
            ++seen_late;
            MT_REQUIRE_COMPARE(r.cached_tokens, 40);
            MT_REQUIRE(r.ttft_ms > 0);
        }
    MT_REQUIRE_COMPARE(seen_late, 1);
    MT_REQUIRE(!first.outputs.empty());
    run(*e, got);
    for (RequestId id : ids)
        MT_REQUIRE_COMPARE(got[id].ids.size(), size_t(5));
    MT_REQUIRE_COMPARE(first.outputs.size(), size_t(1)); // late's prompt tail + first token
    MT_REQUIRE_COMPARE(first.outputs[0].id, late);
    MT_REQUIRE_COMPARE(got[late].ids.size() + first.outputs[0].new_token_ids.size(), size_t(5));
    // Without record_steps the snapshot has no step records (a CLI run does not build them)
    // but the same counts.
    EngineConfig quiet = c;
    quiet.record_steps = false;
    auto q = engine(quiet);
    MT_REQUIRE(q->add_request(fixture().shared_prompts[0], greedy(5)).ok());
    const StepOutputs qo = q->step();
    const EngineSnapshot qs = q->snapshot();
    MT_REQUIRE(qs.scheduled.empty());
    MT_REQUIRE_COMPARE(qs.batch_size, 1);
    MT_REQUIRE_COMPARE(qo.scheduled.size(), size_t(1));
}

MT_TEST(rejects_bad_requests) {
    EngineConfig c;
    c.memory.num_blocks = 4;
    c.block_size = 8;
    auto e = engine(c);
    MT_REQUIRE(!e->add_request(std::vector<int32_t>{}, greedy(4)).ok());
    MT_REQUIRE(
        !e->add_request(std::vector<int32_t>{fixture().m->transformer->vocab_size()}, greedy(4))
             .ok());
    MT_REQUIRE(!e->add_request(std::vector<int32_t>(32, 1), greedy(4)).ok()); // 32 slots
    SamplingParams bad = greedy(4);
    bad.top_p = 0;
    MT_REQUIRE(!e->add_request(std::vector<int32_t>{1, 2}, bad).ok());
    // A request that reaches the context limit finishes with "length".
    const RequestId id = *e->add_request(std::vector<int32_t>(30, 1), greedy(100));
    std::map<RequestId, Collected> got;
    run(*e, got);
    MT_REQUIRE_COMPARE(got[id].finish, FinishReason::Length);
    MT_REQUIRE_COMPARE(got[id].ids.size(), size_t(2));
    EngineConfig badc;
    badc.block_size = 12;
    MT_REQUIRE(!Engine::create(*fixture().m->transformer, *fixture().m->tokenizer, badc).ok());
    badc.block_size = 16;
    badc.memory.utilization = 1.5;
    MT_REQUIRE(!Engine::create(*fixture().m->transformer, *fixture().m->tokenizer, badc).ok());
}

// Any interleaving of add / step / abort / finish with a tiny pool stays consistent and
// returns every block.
MT_TEST(randomized_add_step_abort) {
    std::mt19937 rng(99);
    for (int round = 0; round < 6; ++round) {
        EngineConfig c;
        c.block_size = std::array<int32_t, 3>{8, 16, 32}[round % 3];
        c.memory.num_blocks =
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
                const auto& src = (rng() % 2) ? fixture().prompts : fixture().shared_prompts;
                const auto& p = src[rng() % src.size()];
                auto id = e->add_request(p, greedy(1 + static_cast<int>(rng() % 25)));
                MT_REQUIRE(id.ok());
                live.push_back(*id);
            } else if (k < 4 && !live.empty()) {
                e->abort(live[rng() % live.size()]);
            } else {
                step(*e, got);
            }
        }
        run(*e, got);
        const EngineSnapshot s = e->snapshot();
        MT_REQUIRE_COMPARE(s.num_used_blocks, 0);
        MT_REQUIRE_COMPARE(s.num_free_blocks + s.num_cached_free_blocks,
                           c.memory.num_blocks.value());
        MT_REQUIRE(e->kv_manager().pool().check_invariants().ok());
    }
}

MINI_TEST_MAIN()
