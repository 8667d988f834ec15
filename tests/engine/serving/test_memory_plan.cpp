// The one memory plan: explicit pools, utilization budgets with the executor's real KV element
// size, the bounds (available memory, need-based sizing, the max_num_seqs x context cap) and
// which one decided, the fallback for budgets too small for the weights, and the errors.
#include <numeric>
#include <vector>

#include "engine/runtime/model_executor.h"
#include "engine/serving/memory_plan.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

constexpr int64_t MiB = int64_t{1} << 20;
constexpr int64_t GiB = int64_t{1} << 30;

// A Qwen2.5-7B-shaped config: 28 layers, 4 KV heads of 128, a 32k context.
ModelConfig qwen7b() {
    ModelConfig c;
    c.num_layers = 28;
    c.num_heads = 28;
    c.num_kv_heads = 4;
    c.head_dim = 128;
    c.hidden_size = 3584;
    c.intermediate_size = 18944;
    c.vocab_size = 152064;
    c.max_position = 32768;
    return c;
}

KvPoolShape shape(const ModelConfig& c, KvDtype dtype, int64_t total, int64_t available) {
    KvPoolShape s;
    s.model = &c;
    s.weight_bytes = 15 * GiB;
    s.kv_dtype = dtype;
    s.block_size = 16;
    s.workspace_bytes = estimate_workspace_bytes(c, 512, 64);
    s.max_num_seqs = 64;
    s.total_bytes = total;
    s.available_bytes = available;
    return s;
}

} // namespace

MT_TEST(block_bytes_follow_the_executor_element_size) {
    const ModelConfig c = qwen7b();
    // 2 (K, V) x 28 layers x 4 heads x 128 x 16 slots x bytes.
    MT_COMPARE(kv_bytes_per_block(c, 16, KvDtype::F16), int64_t{2} * 28 * 4 * 128 * 16 * 2);
    // int8: one byte per element plus an fp32 scale per token and KV head; fp8: one byte.
    MT_COMPARE(kv_bytes_per_block(c, 16, KvDtype::Int8),
               int64_t{2} * 28 * (16 * 4 * 128 + 16 * 4 * 4));
    MT_COMPARE(kv_bytes_per_block(c, 16, KvDtype::Fp8E4M3), int64_t{2} * 28 * 4 * 128 * 16);
    MT_COMPARE(kv_bytes_per_block(c, 16, KvDtype::BF16), kv_bytes_per_block(c, 16, KvDtype::F16));
    MemoryBudget b;
    b.utilization = 0.9;
    auto f16 = plan_memory(shape(c, KvDtype::F16, 141 * GiB, 140 * GiB), b);
    auto f32 = plan_memory(shape(c, KvDtype::F32, 141 * GiB, 140 * GiB), b);
    MT_REQUIRE(f16.ok() && f32.ok());
    MT_COMPARE(f16->kv_elem_bytes, 2);
    MT_COMPARE(f16->bytes_per_block, kv_bytes_per_block(c, 16, KvDtype::F16));
    MT_COMPARE(f16->limit, KvPoolLimit::Utilization);
    // The same budget holds twice the blocks in f16 (up to one block of rounding).
    MT_CHECK(f16->num_blocks >= 2 * f32->num_blocks && f16->num_blocks <= 2 * f32->num_blocks + 1);
    // vLLM's definition: utilization x total - weights - workspace.
    const int64_t budget = static_cast<int64_t>(0.9 * double(141 * GiB));
    MT_COMPARE(f16->num_blocks,
               int32_t((budget - 15 * GiB - f16->workspace_bytes) / f16->bytes_per_block));
    MT_CHECK(f16->kv_bytes + f16->weight_bytes + f16->workspace_bytes <= budget);
}

// Issue 14: --kv-budget-mb 100000 on a 24 GB machine is refused with the figures; a budget
// larger than max_num_seqs full contexts can use is trimmed to them.
MT_TEST(explicit_kv_budget_is_bounded_by_the_machine_and_the_context) {
    const ModelConfig c = qwen7b();
    MemoryBudget b;
    b.kv_bytes = 100000 * MiB;
    KvPoolShape s = shape(c, KvDtype::F16, 24 * GiB, 20 * GiB);
    auto p = plan_memory(s, b);
    MT_REQUIRE(!p.ok());
    MT_CHECK_MSG(p.message().find("a KV budget of 100000 MiB is more than the ") == 0 ||
                     p.message().find("memory plan: a KV budget of 100000 MiB is more than the ") ==
                         0,
                 "%s", p.message().c_str());
    MT_CHECK(p.message().find(" MiB available") != std::string::npos);
    // Within what is available: accepted, but never more than the sequences can use.
    s.max_num_seqs = 1;
    b.kv_bytes = 4 * GiB;
    p = plan_memory(s, b);
    MT_REQUIRE(p.ok());
    MT_COMPARE(p->limit, KvPoolLimit::KvBytes);
    MT_COMPARE(p->num_blocks, int32_t(32768 / 16)); // one full context
    s.max_num_seqs = 64;
    p = plan_memory(s, b);
    MT_REQUIRE(p.ok());
    MT_COMPARE(p->num_blocks, int32_t(4 * GiB / kv_bytes_per_block(c, 16, KvDtype::F16)));
}

MT_TEST(explicit_pools_win) {
    const ModelConfig c = qwen7b();
    MemoryBudget b;
    b.num_blocks = 7;
    b.kv_bytes = 100 * MiB;
    auto p = plan_memory(shape(c, KvDtype::F16, 8 * GiB, 1 * GiB), b);
    MT_REQUIRE(p.ok());
    MT_COMPARE(p->num_blocks, 7);
    MT_COMPARE(p->limit, KvPoolLimit::Blocks);
    b.num_blocks.reset();
    p = plan_memory(shape(c, KvDtype::F16, 8 * GiB, 1 * GiB), b);
    MT_REQUIRE(p.ok());
    MT_COMPARE(p->limit, KvPoolLimit::KvBytes);
    MT_COMPARE(p->num_blocks, int32_t(100 * MiB / kv_bytes_per_block(c, 16, KvDtype::F16)));
    b.num_blocks = 0;
    MT_CHECK(!plan_memory(shape(c, KvDtype::F16, 8 * GiB, 1 * GiB), b).ok());
}

MT_TEST(never_more_than_is_available) {
    const ModelConfig c = qwen7b();
    MemoryBudget b;
    b.utilization = 0.9;
    KvPoolShape s = shape(c, KvDtype::F16, 141 * GiB, 20 * GiB); // another process holds the rest
    auto p = plan_memory(s, b);
    MT_REQUIRE(p.ok());
    MT_COMPARE(p->limit, KvPoolLimit::Available);
    MT_COMPARE(p->num_blocks, int32_t((20 * GiB - s.workspace_bytes) / p->bytes_per_block));
    // The engine's current pool counts as available (it is freed before the new one is made).
    s.reusable_bytes = 10 * GiB;
    auto q = plan_memory(s, b);
    MT_REQUIRE(q.ok());
    MT_COMPARE(q->num_blocks, int32_t((30 * GiB - s.workspace_bytes) / q->bytes_per_block));
}

MT_TEST(context_cap_and_need) {
    const ModelConfig c = qwen7b();
    MemoryBudget b;
    b.utilization = 0.9;
    KvPoolShape s = shape(c, KvDtype::F16, 141 * GiB, 140 * GiB);
    s.max_num_seqs = 2; // 2 x 32768 tokens = 4096 blocks of 16
    auto p = plan_memory(s, b);
    MT_REQUIRE(p.ok());
    MT_COMPARE(p->cap_blocks, 4096);
    MT_COMPARE(p->num_blocks, 4096);
    MT_COMPARE(p->limit, KvPoolLimit::Context);
    MT_CHECK(p->capped());
    // Need-based sizing: 3 requests of 100 tokens in all need 7 blocks + one partial per
    // request + one.
    b.need_tokens = 100;
    b.need_seqs = 3;
    p = plan_memory(s, b);
    MT_REQUIRE(p.ok());
    MT_COMPARE(p->limit, KvPoolLimit::Need);
    MT_COMPARE(p->num_blocks, 7 + 3 + 1);
    // Need never raises a pool above the budget.
    b.need_tokens = int64_t{1} << 40;
    p = plan_memory(s, b);
    MT_REQUIRE(p.ok());
    MT_COMPARE(p->limit, KvPoolLimit::Context);
}

MT_TEST(short_budgets_fail_or_fall_back) {
    const ModelConfig c = qwen7b();
    MemoryBudget b;
    b.utilization = 0.1; // 14 GiB of 141: less than the 15 GiB of weights
    auto p = plan_memory(shape(c, KvDtype::F16, 141 * GiB, 140 * GiB), b);
    MT_REQUIRE(!p.ok());
    MT_CHECK_MSG(p.message().find("weights") != std::string::npos, "%s", p.message().c_str());
    b.fallback_when_short = true;
    p = plan_memory(shape(c, KvDtype::F16, 141 * GiB, 140 * GiB), b);
    MT_REQUIRE(p.ok());
    MT_COMPARE(p->limit, KvPoolLimit::Fallback);
    MT_COMPARE(p->num_blocks, int32_t(kFallbackPoolTokens / 16));
    MT_CHECK(!p->note.empty());
    b.utilization = 0;
    MT_CHECK(!plan_memory(shape(c, KvDtype::F16, 141 * GiB, 140 * GiB), b).ok());
    b.utilization = 1.5;
    MT_CHECK(!plan_memory(shape(c, KvDtype::F16, 141 * GiB, 140 * GiB), b).ok());
    ModelConfig none = c;
    none.num_layers = 0;
    MemoryBudget ok;
    MT_CHECK(!plan_memory(shape(none, KvDtype::F16, 141 * GiB, 140 * GiB), ok).ok());
}

// A Qwen2.5-0.5B-shaped config: 24 layers, 2 KV heads of 64, a 32k context.
ModelConfig qwen05b() {
    ModelConfig c;
    c.num_layers = 24;
    c.num_heads = 14;
    c.num_kv_heads = 2;
    c.head_dim = 64;
    c.hidden_size = 896;
    c.intermediate_size = 4864;
    c.vocab_size = 151936;
    c.max_position = 32768;
    return c;
}

KvPoolShape cpu_shape(const ModelConfig& c, int64_t total, int64_t available) {
    KvPoolShape s;
    s.model = &c;
    s.device = DeviceKind::Cpu;
    s.weight_bytes = 500 * MiB;
    s.kv_dtype = KvDtype::F32;
    s.block_size = 16;
    s.workspace_bytes = estimate_workspace_bytes(c, 512, 16);
    s.max_num_seqs = 16;
    s.total_bytes = total;
    s.available_bytes = available;
    return s;
}

// The issue: a 500 MB model on a 24 GiB desktop reserved 11 GiB (30,708 blocks). On the CPU the
// pool holds at most kCpuContextSeqs full contexts, and utilization is a share of the memory
// available to the engine, not of the installed RAM.
MT_TEST(cpu_pool_is_a_few_contexts_of_the_available_memory) {
    const ModelConfig c = qwen05b();
    MemoryBudget b;
    b.utilization = 0.5;
    auto p = plan_memory(cpu_shape(c, 24 * GiB, 22 * GiB), b);
    MT_REQUIRE(p.ok());
    MT_COMPARE(p->limit, KvPoolLimit::Context);
    MT_COMPARE(p->cap_seqs, kCpuContextSeqs);
    MT_COMPARE(p->num_blocks, int32_t(kCpuContextSeqs * 32768 / 16)); // 8,192 blocks
    MT_CHECK(p->kv_bytes <= int64_t{3} * GiB + 1);                    // fp32: 3 GiB of slots
    MT_COMPARE(p->base_bytes, 22 * GiB + 500 * MiB);                  // available + weights
    MT_COMPARE(p->budget_bytes, (22 * GiB + 500 * MiB) / 2);
    MT_CHECK(p->utilization == 0.5);
    // The same shape on CUDA keeps vLLM's meaning: max_num_seqs contexts, a share of the total.
    KvPoolShape gpu = cpu_shape(c, 24 * GiB, 22 * GiB);
    gpu.device = DeviceKind::Cuda;
    auto g = plan_memory(gpu, b);
    MT_REQUIRE(g.ok());
    MT_COMPARE(g->cap_seqs, 16);
    MT_COMPARE(g->base_bytes, 24 * GiB);
    // Little free memory: a share of what is free decides, not the installed RAM.
    auto small = plan_memory(cpu_shape(c, 24 * GiB, 2 * GiB), b);
    MT_REQUIRE(small.ok());
    MT_COMPARE(small->limit, KvPoolLimit::Utilization);
    const int64_t kv = (2 * GiB + 500 * MiB) / 2 - 500 * MiB - small->workspace_bytes;
    MT_COMPARE(small->num_blocks, int32_t(kv / small->bytes_per_block));
    // A fixed device size (tests) replaces the available memory as the base.
    b.device_bytes = 8 * GiB;
    auto fixed = plan_memory(cpu_shape(c, 24 * GiB, 2 * GiB), b);
    MT_REQUIRE(fixed.ok());
    MT_COMPARE(fixed->base_bytes, 8 * GiB);
}

MT_TEST(min_utilization_is_the_smallest_that_plans) {
    const ModelConfig c = qwen05b();
    const KvPoolShape s = cpu_shape(c, 24 * GiB, 22 * GiB);
    MemoryBudget b;
    for (int32_t blocks : {1, 19, 366}) {
        auto u = min_utilization(s, b, blocks);
        MT_REQUIRE(u.has_value());
        b.utilization = *u;
        auto p = plan_memory(s, b, blocks);
        MT_REQUIRE_MSG(p.ok(), "%d blocks at %g: %s", blocks, *u, p.message().c_str());
        MT_CHECK(p->num_blocks >= blocks);
        b.utilization = *u - 1e-4; // one step less does not plan
        MT_CHECK_MSG(!plan_memory(s, b, blocks).ok(), "%d blocks at %g", blocks, *u - 1e-4);
    }
    // Not even the whole memory: none.
    MT_CHECK(!min_utilization(cpu_shape(c, 24 * GiB, 100 * MiB), b, 100000).has_value());
}

// "need at least 0 MiB" said nothing: a block under a MiB is written with decimals, and the
// error names the smallest utilization that works.
MT_TEST(short_budget_error_names_sizes_and_the_least_utilization) {
    const ModelConfig c = qwen05b();
    MemoryBudget b;
    b.utilization = 0.0005;
    auto p = plan_memory(cpu_shape(c, 24 * GiB, 22 * GiB), b);
    MT_REQUIRE(!p.ok());
    const std::string m = p.message();
    MT_CHECK_MSG(m.find("need 0 MiB") == std::string::npos, "%s", m.c_str());
    MT_CHECK_MSG(m.find("need 0.38 MiB") != std::string::npos, "%s", m.c_str());
    MT_CHECK_MSG(m.find("smallest utilization that works is 0.02") != std::string::npos, "%s",
                 m.c_str());
}

MINI_TEST_MAIN()

namespace {

// bf16 copies of the 7B shape's quantized matrices: 7 per layer (q, k, v, o, gate, up, down) and
// lm_head; k is left unquantized (0: no copy) to check that such slots are skipped.
std::vector<int64_t> qwen7b_cache_candidates(const ModelConfig& c) {
    const int64_t H = c.hidden_size, I = c.intermediate_size, kv = c.num_kv_heads * c.head_dim;
    std::vector<int64_t> v;
    for (int32_t l = 0; l < c.num_layers; ++l)
        for (int64_t e : {H * H, int64_t{0}, kv * H, H * H, I * H, I * H, H * I})
            v.push_back(2 * e);
    v.push_back(2 * c.vocab_size * H);
    return v;
}

} // namespace

// Issue 17: the bf16 weight cache comes out of the utilization budget after a KV reserve,
// largest matrices first; memory that is short gets a partial cache or none.
MT_TEST(weight_cache_is_chosen_largest_first_within_the_budget) {
    const ModelConfig c = qwen7b();
    const std::vector<int64_t> cand = qwen7b_cache_candidates(c);
    const int64_t all = std::accumulate(cand.begin(), cand.end(), int64_t{0});
    MemoryBudget b;
    b.utilization = 0.9;
    KvPoolShape s = shape(c, KvDtype::F16, 141 * GiB, 140 * GiB);
    s.weight_cache_candidates = cand;
    auto none = plan_memory(s, b); // not chosen: only Engine::create chooses
    s.choose_weight_cache = true;
    auto full = plan_memory(s, b);
    MT_REQUIRE(none.ok() && full.ok());
    MT_COMPARE(none->weight_cache_matrices, 0);
    MT_COMPARE(none->weight_cache_candidates, 28 * 6 + 1);
    // An H200: everything fits; the KV pool is smaller by the cache.
    MT_COMPARE(full->weight_cache_matrices, 28 * 6 + 1);
    MT_COMPARE(full->weight_cache_bytes, all);
    MT_COMPARE(full->weight_cache.size(), size_t{28 * 6 + 1});
    MT_COMPARE(full->weight_cache.front(), 28 * 7); // lm_head, the largest, first
    const int64_t budget = static_cast<int64_t>(0.9 * double(141 * GiB));
    MT_COMPARE(full->num_blocks,
               int32_t((budget - 15 * GiB - full->workspace_bytes - all) / full->bytes_per_block));
    MT_CHECK(full->weight_bytes + full->workspace_bytes + full->weight_cache_bytes +
                 full->kv_bytes <=
             budget);
    MT_CHECK(full->free_bytes ==
             141 * GiB - 15 * GiB - full->workspace_bytes - all - full->kv_bytes);

    // A 24 GB card: lm_head and some MLP matrices fit, the KV reserve (16k tokens) stays.
    s = shape(c, KvDtype::F16, 24 * GiB, 23 * GiB);
    s.weight_cache_candidates = cand;
    s.choose_weight_cache = true;
    auto part = plan_memory(s, b);
    MT_REQUIRE(part.ok());
    MT_CHECK(part->weight_cache_matrices > 0 && part->weight_cache_matrices < 28 * 6 + 1);
    MT_COMPARE(part->weight_cache.front(), 28 * 7);
    for (size_t i = 1; i < part->weight_cache.size(); ++i) // never a smaller before a larger
        MT_CHECK(cand[size_t(part->weight_cache[i - 1])] >= cand[size_t(part->weight_cache[i])]);
    MT_CHECK(int64_t{part->num_blocks} * 16 >= kWeightCacheKvReserveTokens);
    // Another matrix would have cut into the reserve.
    MT_CHECK((int64_t{part->num_blocks} - kWeightCacheKvReserveTokens / 16) *
                 part->bytes_per_block <
             2 * c.intermediate_size * c.hidden_size);

    // Short memory: the weights leave less than the reserve, so no cache, and the pool is the
    // one a plan without candidates makes.
    s = shape(c, KvDtype::F16, 17 * GiB, 16 * GiB);
    KvPoolShape bare = s;
    s.weight_cache_candidates = cand;
    s.choose_weight_cache = true;
    auto shortp = plan_memory(s, b);
    auto barep = plan_memory(bare, b);
    MT_REQUIRE(shortp.ok() && barep.ok());
    MT_COMPARE(shortp->weight_cache_matrices, 0);
    MT_COMPARE(shortp->weight_cache_bytes, int64_t{0});
    MT_CHECK(shortp->weight_cache.empty());
    MT_COMPARE(shortp->num_blocks, barep->num_blocks);

    // The memory free now bounds the cache too (another process holds most of the card).
    s = shape(c, KvDtype::F16, 141 * GiB, 10 * GiB);
    s.weight_cache_candidates = cand;
    s.choose_weight_cache = true;
    auto busy = plan_memory(s, b);
    MT_REQUIRE(busy.ok());
    MT_CHECK(busy->weight_cache_bytes < all);
    MT_CHECK(busy->weight_cache_bytes > 0);
    MT_CHECK(busy->weight_cache_bytes + busy->kv_bytes <= 10 * GiB - busy->workspace_bytes);
}

MT_TEST(weight_cache_off_explicit_pools_and_resident_cache) {
    const ModelConfig c = qwen7b();
    KvPoolShape s = shape(c, KvDtype::F16, 141 * GiB, 140 * GiB);
    s.weight_cache_candidates = qwen7b_cache_candidates(c);
    s.choose_weight_cache = true;
    MemoryBudget off;
    off.weight_cache = false;
    MemoryBudget blocks;
    blocks.num_blocks = 1000;
    for (const MemoryBudget& b : {off, blocks}) {
        auto p = plan_memory(s, b);
        MT_REQUIRE(p.ok());
        MT_COMPARE(p->weight_cache_matrices, 0);
        MT_CHECK(p->weight_cache.empty());
    }
    // A cache made at load is counted like the weights by later plans, never re-chosen.
    KvPoolShape r = shape(c, KvDtype::F16, 141 * GiB, 140 * GiB);
    r.weight_cache_candidates = qwen7b_cache_candidates(c);
    auto before = plan_memory(r, MemoryBudget{});
    r.weight_cache_bytes = 4 * GiB;
    r.weight_cache_matrices = 20;
    r.choose_weight_cache = true;
    auto after = plan_memory(r, MemoryBudget{});
    MT_REQUIRE(before.ok() && after.ok());
    MT_CHECK(after->weight_cache.empty());
    MT_COMPARE(after->weight_cache_bytes, 4 * GiB);
    MT_COMPARE(after->weight_cache_matrices, 20);
    MT_CHECK(before->num_blocks - after->num_blocks >= 4 * GiB / before->bytes_per_block);
    MT_CHECK(before->num_blocks - after->num_blocks <= 4 * GiB / before->bytes_per_block + 1);
    // min_utilization counts it.
    auto u0 = min_utilization(r, MemoryBudget{}, 1);
    r.weight_cache_bytes = 0;
    auto u1 = min_utilization(r, MemoryBudget{}, 1);
    MT_REQUIRE(u0 && u1);
    MT_CHECK(*u0 > *u1);
}
