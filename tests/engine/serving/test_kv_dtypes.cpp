// The engine over a KV cache of every element type (kv_format.h): batched greedy outputs with
// chunked prefill, prefix caching, preemption and forks equal each request run alone in the
// same type; switching the type while
// requests run (Engine::set_kv_dtype) re-plans the pool, preempts and recomputes, drops blocks
// cached in the old type and loses no output.
#include <map>
#include <memory>
#include <random>

#include "engine/runtime/cpu_executor.h"
#include "engine/runtime/kv_calibration.h"
#include "engine/serving/engine.h"
#include "greedy_margin_compare.h" // run_greedy
#include "serving_test_engine.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::mini_test;

namespace {

struct DtypeEngine {
    std::unique_ptr<CpuExecutor> exec;
    std::unique_ptr<Engine> engine;
};

DtypeEngine make_engine(KvDtype t, EngineConfig c, const KvScales& scales = {}) {
    DtypeEngine d;
    d.exec = std::make_unique<CpuExecutor>(*test::shared_serving_model().transformer);
    MT_REQUIRE(d.exec->set_kv_dtype(t, scales).ok());
    auto e = Engine::create(*d.exec, *test::shared_serving_model().tokenizer, c);
    MT_REQUIRE_MSG(e.ok(), "engine: %s", e.ok() ? "" : e.message().c_str());
    d.engine = std::move(e.value());
    MT_REQUIRE_COMPARE(d.engine->memory_plan().kv_dtype, t);
    return d;
}

std::vector<std::vector<int32_t>> prompts() {
    std::mt19937 rng(11);
    const int32_t vocab = test::shared_serving_model().transformer->vocab_size();
    std::vector<std::vector<int32_t>> out;
    std::vector<int32_t> system;
    for (int i = 0; i < 37; ++i)
        system.push_back(static_cast<int32_t>(rng() % vocab));
    for (int n : {5, 23, 60, 9, 41, 16}) {
        std::vector<int32_t> p = n % 2 ? system : std::vector<int32_t>{};
        for (int i = 0; i < n; ++i)
            p.push_back(static_cast<int32_t>(rng() % vocab));
        out.push_back(p);
    }
    return out;
}

struct DtypeRow {
    std::string name;
    KvDtype dtype;
};

std::vector<DtypeRow> dtype_rows() {
    std::vector<DtypeRow> rows;
    for (KvDtype t : kAllKvDtypes)
        rows.push_back({kv_dtype_name(t), t});
    return rows;
}

} // namespace

// In one type, a request's greedy tokens do not depend on what shares its batch, on chunked
// prefill, on prefix-cache hits or on preemption: its stored K/V are the same bytes.
MT_TEST_TABLE(batched_equals_alone_in_each_type, DtypeRow, dtype_rows()) {
    const auto ps = prompts();
    EngineConfig alone_cfg;
    alone_cfg.memory.num_blocks = 64;
    alone_cfg.enable_prefix_caching = false;
    std::vector<std::vector<int32_t>> want;
    for (const auto& p : ps) {
        DtypeEngine d = make_engine(row.dtype, alone_cfg);
        auto out = test::run_greedy(*d.engine, {p}, 24, false);
        want.push_back(out.begin()->second.ids);
    }
    EngineConfig c;
    c.block_size = 8;
    c.max_num_batched_tokens = 19; // chunked prefill
    c.memory.num_blocks = 14;      // the longest request alone (60 + 37 + 24) and a bit: preempts
    c.enable_prefix_caching = true;
    DtypeEngine d = make_engine(row.dtype, c);
    auto got = test::run_greedy(*d.engine, ps, 24, false);
    MT_REQUIRE_COMPARE(got.size(), ps.size());
    size_t i = 0;
    for (const auto& [id, g] : got)
        MT_CHECK_MSG(g.ids == want[i++], "%s request %zu differs from alone", row.name.c_str(),
                     i - 1);
    const EngineSnapshot s = d.engine->snapshot();
    MT_CHECK(s.total_preemptions > 0);
    MT_CHECK(d.engine->kv_manager().prefix_hits() > 0);
}

// Forks share blocks; the first write into a shared partial block copies it (values and int8
// scales together).
MT_TEST_TABLE(fork_copy_on_write_in_each_type, DtypeRow, dtype_rows()) {
    EngineConfig c;
    c.block_size = 16;
    c.memory.num_blocks = 40;
    DtypeEngine d = make_engine(row.dtype, c);
    const auto p = prompts()[1];
    auto ref = test::run_greedy(*d.engine, {p}, 10, false).begin()->second.ids;
    SamplingParams sp;
    sp.temperature = 0;
    sp.max_tokens = 10;
    sp.ignore_eos = true;
    const RequestId src = *d.engine->add_request(p, sp);
    StepOutputs so = d.engine->step();
    sp.max_tokens = 9;
    const RequestId child = *d.engine->fork(src, sp);
    std::map<RequestId, std::vector<int32_t>> got;
    got[src] = so.outputs.at(0).new_token_ids;
    for (int i = 0; d.engine->has_unfinished() && i < 100; ++i) {
        d.engine->step(so);
        for (const RequestOutput& o : so.outputs)
            got[o.id].insert(got[o.id].end(), o.new_token_ids.begin(), o.new_token_ids.end());
        MT_REQUIRE(d.engine->check_consistency().ok());
    }
    MT_CHECK(d.engine->kv_manager().cow_copies() >= 1);
    MT_COMPARE(got[src], ref);
    MT_COMPARE(got[child], std::vector<int32_t>(ref.begin() + 1, ref.end()));
}

// Re-planning while requests run moves live blocks between pools (values and int8 scales in
// one copy per layer): outputs still equal each request alone.
MT_TEST_TABLE(replan_moves_blocks_in_each_type, DtypeRow, dtype_rows()) {
    const auto ps = prompts();
    EngineConfig alone_cfg;
    alone_cfg.memory.num_blocks = 64;
    alone_cfg.enable_prefix_caching = false;
    std::vector<std::vector<int32_t>> want;
    for (const auto& p : ps) {
        DtypeEngine d = make_engine(row.dtype, alone_cfg);
        want.push_back(test::run_greedy(*d.engine, {p}, 16, false).begin()->second.ids);
    }
    EngineConfig c;
    c.block_size = 8;
    c.max_num_batched_tokens = 48;
    c.memory.num_blocks = 80;
    DtypeEngine d = make_engine(row.dtype, c);
    Engine& e = *d.engine;
    SamplingParams sp;
    sp.temperature = 0;
    sp.max_tokens = 16;
    sp.ignore_eos = true;
    std::vector<RequestId> ids;
    for (const auto& p : ps)
        ids.push_back(*e.add_request(p, sp));
    std::map<RequestId, std::vector<int32_t>> got;
    StepOutputs so;
    for (int i = 0; e.has_unfinished() && i < 1000; ++i) {
        if (i == 4)
            MT_REQUIRE(e.set_num_blocks(200).ok()); // grow: every live block moves
        if (i == 8)
            MT_REQUIRE(e.set_num_blocks(30).ok()); // shrink: moves and preemptions
        e.step(so);
        for (const RequestOutput& o : so.outputs)
            got[o.id].insert(got[o.id].end(), o.new_token_ids.begin(), o.new_token_ids.end());
        MT_REQUIRE(e.check_consistency().ok());
    }
    MT_COMPARE(e.memory_plan().num_blocks, 30);
    for (size_t i = 0; i < ids.size(); ++i)
        MT_CHECK_MSG(got[ids[i]] == want[i], "%s request %zu", row.name.c_str(), i);
}

// Switching the type under load: more blocks for the same bytes, every running request
// preempted and recomputed, nothing lost; blocks cached in the old type are never served.
MT_TEST(switch_type_while_requests_run) {
    const ModelConfig& mc = test::shared_serving_model().transformer->config();
    EngineConfig c;
    c.block_size = 8;
    c.max_num_batched_tokens = 32;
    c.memory.kv_bytes = 40 * kv_bytes_per_block(mc, 8, KvDtype::F32);
    DtypeEngine d = make_engine(KvDtype::F32, c);
    Engine& e = *d.engine;
    MT_REQUIRE_COMPARE(e.memory_plan().num_blocks, 40);
    const auto ps = prompts();
    EngineConfig a;
    a.memory.num_blocks = 64;
    DtypeEngine alone = make_engine(KvDtype::Int8, a);
    const auto want2 = test::run_greedy(*alone.engine, {ps[2]}, 20, false).begin()->second.ids;

    // ps[2] computed (and its full blocks cached) in f32; then the others start.
    (void)test::run_greedy(e, {ps[2]}, 20, false);
    SamplingParams sp;
    sp.temperature = 0;
    sp.max_tokens = 20;
    sp.ignore_eos = true;
    std::map<RequestId, std::vector<int32_t>> got;
    std::map<RequestId, FinishReason> finish;
    for (size_t i = 0; i < ps.size(); ++i)
        if (i != 2)
            got[*e.add_request(ps[i], sp)];
    StepOutputs so;
    auto step = [&] {
        e.step(so);
        for (const RequestOutput& o : so.outputs) {
            got[o.id].insert(got[o.id].end(), o.new_token_ids.begin(), o.new_token_ids.end());
            if (o.finished)
                finish[o.id] = o.finish;
        }
        const Status st = e.check_consistency();
        MT_REQUIRE_MSG(st.ok(), "%s", st.ok() ? "" : st.message().c_str());
    };
    for (int i = 0; i < 3; ++i)
        step();
    const int64_t preempt_before = e.snapshot().total_preemptions;
    const int32_t running = e.snapshot().num_running;
    MT_REQUIRE(running > 0);
    MT_REQUIRE(e.set_kv_dtype(KvDtype::Int8).ok());
    MT_COMPARE(e.pending_kv_dtype(), KvDtype::Int8);
    MT_COMPARE(e.executor().kv_dtype(), KvDtype::F32); // applied before the next step
    step();
    MT_COMPARE(e.executor().kv_dtype(), KvDtype::Int8);
    MT_COMPARE(e.memory_plan().kv_dtype, KvDtype::Int8);
    // The same bytes hold ~3.2x the blocks (head_dim 16: 4 bytes -> 1 + 4/16 per element).
    MT_COMPARE(e.memory_plan().bytes_per_block, kv_bytes_per_block(mc, 8, KvDtype::Int8));
    MT_COMPARE(int64_t(e.memory_plan().num_blocks),
               40 * kv_bytes_per_block(mc, 8, KvDtype::F32) / e.memory_plan().bytes_per_block);
    MT_COMPARE(e.snapshot().total_preemptions, preempt_before + running);
    for (int i = 0; e.has_unfinished() && i < 1000; ++i)
        step();
    MT_REQUIRE(!e.has_unfinished());
    MT_COMPARE(got.size(), ps.size() - 1);
    for (const auto& [id, ids] : got) {
        MT_COMPARE(ids.size(), size_t(20));
        MT_CHECK(finish[id] == FinishReason::Length);
    }
    // ps[2]'s blocks cached in f32 were dropped: it is computed afresh in int8 (no hit) and
    // gives int8's tokens; a second run hits the int8 cache.
    const int64_t hits = e.kv_manager().prefix_hits();
    MT_COMPARE(test::run_greedy(e, {ps[2]}, 20, false).begin()->second.ids, want2);
    MT_COMPARE(e.kv_manager().prefix_hits(), hits);
    MT_COMPARE(test::run_greedy(e, {ps[2]}, 20, false).begin()->second.ids, want2);
    MT_CHECK(e.kv_manager().prefix_hits() > hits);
    // A type the backend cannot store is refused (the CPU stores all); bad fp8 scales too.
    KvScales bad;
    bad.k = {1.0f};
    MT_CHECK(!e.set_kv_dtype(KvDtype::Fp8E4M3, bad).ok());
}

// fp8 scales from the built-in text: the largest |K| / |V| of each layer maps to half of the
// type's range; an engine with them runs, and the scales reach the executor.
MT_TEST(fp8_calibration) {
    CpuExecutor exec(*test::shared_serving_model().transformer);
    const int32_t layers = exec.config().num_layers;
    const std::vector<int32_t> ids = {1, 5, 9, 2, 7, 7, 3};
    auto amax = exec.kv_absmax(ids);
    MT_REQUIRE(amax.ok());
    MT_REQUIRE_COMPARE(int(amax->k.size()), layers);
    auto s = calibrate_kv_scales(exec, ids, KvDtype::Fp8E4M3);
    MT_REQUIRE(s.ok());
    for (int32_t l = 0; l < layers; ++l) {
        MT_CHECK(amax->k[l] > 0 && amax->v[l] > 0);
        MT_CHECK(std::fabs(amax->k[l] / s->k[l] - 224.0f) < 1e-3f);
        MT_CHECK(std::fabs(amax->v[l] / s->v[l] - 224.0f) < 1e-3f);
    }
    MT_CHECK(!calibrate_kv_scales(exec, ids, KvDtype::Int8).ok());
    MT_CHECK(!exec.kv_absmax(std::vector<int32_t>{-1}).ok());
    auto text =
        calibrate_kv_scales(exec, *test::shared_serving_model().tokenizer, KvDtype::Fp8E5M2);
    MT_REQUIRE(text.ok());
    EngineConfig c;
    c.memory.num_blocks = 32;
    DtypeEngine d = make_engine(KvDtype::Fp8E5M2, c, *text);
    MT_COMPARE(d.exec->kv_scales().k, text->k);
    const auto out = test::run_greedy(*d.engine, {prompts()[0]}, 8, false);
    MT_COMPARE(out.begin()->second.ids.size(), size_t(8));
}

MINI_TEST_MAIN()
