// MemoryPlan: how many KV blocks the engine's pool has, decided in one place for the CLI, the
// benchmarks, the app and the tests (DESIGN.md "KV cache"). The budget is one of
//   - an explicit pool size (num_blocks) or KV byte budget (kv_bytes; refused when more than
//     the memory available, and never more blocks than max_num_seqs full contexts can use), or
//   - gpu_memory_utilization x a memory base, minus the weights and the activation workspace,
// divided by the bytes of one block (2 x layers x kv_heads x head_dim x block_size x the
// executor's real KV element size, plus int8's per-row scales: kv_bytes_per_block).
//
// What gpu_memory_utilization multiplies depends on the device:
//   - CUDA: the device's total memory, as vLLM defines it (the GPU belongs to the engine).
//   - CPU: the memory the engine can have when the plan is made: what is available now
//     (MemAvailable) plus what the engine already holds (its weights and current pool). The RAM
//     is shared with the desktop, so the slider is a share of what is actually free, not of the
//     installed RAM. A fixed MemoryBudget::device_bytes (tests) replaces that base.
// A utilization budget is then bounded by
//   - the memory available when the plan is made (never more than the machine has free, counting
//     the engine's current pool as reusable),
//   - need-based sizing (need_tokens: a CLI run knows what its requests can ever use), and
//   - the context cap: cap_seqs sequences of the model's full context. On CUDA cap_seqs is
//     max_num_seqs (all the pool can ever hold at once); on the CPU it is at most
//     kCpuContextSeqs (4), the pool a careful user would size for a desktop: a 32k-context model
//     gets 4 x 32k token slots, not half the RAM. Requests beyond that are preempted and resume.
// On the CPU the pool is also committed lazily (KvCacheStorage): a large plan costs address
// space, and RAM only as blocks are written.
// The plan says which bound decided it (limit) — the app's Memory panel shows it.
//
// The bf16 weight cache (CUDA): prefill GEMMs (more than 8 token rows) of a quantized matrix
// dequantize it into the workspace on every call unless a bf16 copy of it is resident. The plan
// chooses the copies once, when the engine is created (KvPoolShape::choose_weight_cache), out of
// the same utilization budget as the KV pool: after the weights, the workspace and a KV reserve
// of max(min_blocks, kWeightCacheKvReserveTokens token slots within the context cap) blocks, the
// matrices are taken largest first while they fit (a matrix's benefit, the dequantization a
// prefill GEMM skips, grows with its size as its bytes do; skipping one that does not fit lets
// smaller ones in), and never beyond the memory available now; the KV pool gets what remains.
// Explicit pool sizes (num_blocks, kv_bytes), MemoryBudget::weight_cache = false and the fallback
// get no cache. A cache already resident (later re-plans) is counted like the weights.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/model_config.h"
#include "engine/runtime/device_types.h"
#include "engine/runtime/host_memory.h"
#include "engine/util/result.h"

namespace llmwb {

struct MemoryBudget {
    double utilization = 0.9;          // (0, 1]: fraction of device memory the engine may use
    int64_t device_bytes = 0;          // 0: the executor's device memory (RAM on the CPU)
    std::optional<int64_t> kv_bytes;   // explicit KV budget: overrides utilization
    std::optional<int32_t> num_blocks; // explicit pool size: overrides kv_bytes and utilization
    // Need-based sizing (utilization budgets only): no more blocks than need_seqs sequences of
    // need_tokens token slots in all can use (each sequence may waste part of a block).
    std::optional<int64_t> need_tokens;
    int32_t need_seqs = 1;
    // A utilization budget too small for the weights: instead of an error, a small pool (one
    // sequence of up to kFallbackPoolTokens, within the context cap) with the error in plan.note.
    bool fallback_when_short = false;
    // Whether a utilization plan may choose a bf16 weight cache (see above).
    bool weight_cache = true;
};

// KV token slots a bf16 weight cache must leave to the pool (see above).
inline constexpr int64_t kWeightCacheKvReserveTokens = 16384;

inline constexpr int64_t kFallbackPoolTokens = 4096;
// The CPU's context cap: at most this many sequences of the model's full context.
inline constexpr int32_t kCpuContextSeqs = 4;

// What decided the number of blocks.
enum class KvPoolLimit : uint8_t {
    Blocks,      // MemoryBudget::num_blocks
    KvBytes,     // MemoryBudget::kv_bytes
    Utilization, // utilization x device memory - weights - workspace
    Available,   // the memory available when the plan was made
    Need,        // need-based sizing
    Context,     // max_num_seqs x the model's context
    Fallback,    // the utilization budget was too small (see note)
    Live,        // raised to what the live requests need (Engine re-planning)
};
const char* kv_pool_limit_name(KvPoolLimit l); // "blocks", "kv_bytes", "utilization", ...

struct MemoryPlan {
    int64_t device_bytes = 0; // total device memory (RAM)
    // What utilization multiplies: device_bytes on CUDA; on the CPU the memory available to the
    // engine when the plan was made (free + what the engine holds).
    int64_t base_bytes = 0;
    double utilization = 0;   // the utilization of a utilization plan (0 otherwise)
    int64_t budget_bytes = 0; // utilization x base_bytes (or weights + workspace + kv)
    int64_t weight_bytes = 0;
    int64_t workspace_bytes = 0; // activations of the largest step (estimate)
    int64_t kv_bytes = 0;        // num_blocks x bytes_per_block
    int64_t free_bytes = 0;      // device memory left outside the engine's budget use
    int64_t bytes_per_block = 0;
    int32_t num_blocks = 0;
    int32_t block_size = 0;
    KvDtype kv_dtype = KvDtype::F32; // how the executor stores K and V
    int32_t kv_elem_bytes = 4;       // bytes of one K/V element (int8: plus a scale per row)
    int32_t cap_blocks = 0;          // cap_seqs x ceil(context / block_size)
    int32_t cap_seqs = 0;            // sequences of the full context the cap counts
    DeviceKind device = DeviceKind::Cpu;
    KvPoolLimit limit = KvPoolLimit::Utilization;
    std::string note; // Fallback: why the budget could not be used
    // The bf16 weight cache: bytes and matrices (resident, or chosen by this plan), and the
    // quantized matrices that could have a copy.
    int64_t weight_cache_bytes = 0;
    int32_t weight_cache_matrices = 0;
    int32_t weight_cache_candidates = 0;
    // A fresh choice (KvPoolShape::choose_weight_cache): the slots of the matrices to copy
    // (indices into KvPoolShape::weight_cache_candidates), largest first.
    std::vector<int32_t> weight_cache;
    // The CPU's panel layout: matrices rearranged at load and their bytes (part of weight_bytes).
    int32_t panel_matrices = 0;
    int64_t panel_bytes = 0;
    bool capped() const { return limit == KvPoolLimit::Context; }
    // The pool came from utilization x base_bytes (then bounded); not for explicit sizes, the
    // fallback or a pool raised for the live requests.
    bool from_utilization() const {
        return limit == KvPoolLimit::Utilization || limit == KvPoolLimit::Available ||
               limit == KvPoolLimit::Need || limit == KvPoolLimit::Context;
    }
};

// What the plan is made for: the executor's facts and the engine's limits.
struct KvPoolShape {
    const ModelConfig* model = nullptr;
    DeviceKind device = DeviceKind::Cuda; // the meaning of utilization (see above)
    int64_t weight_bytes = 0;             // as stored on the device
    KvDtype kv_dtype = KvDtype::F32;      // the executor's KV element type
    int32_t block_size = 16;
    int64_t workspace_bytes = 0; // estimate_workspace_bytes
    int32_t max_num_seqs = 1;    // for the context cap
    int64_t total_bytes = 0;     // device memory (0: unknown)
    int64_t available_bytes = 0; // free now (0: unknown)
    int64_t reusable_bytes = 0;  // the engine's current pool (freed when the plan is applied)
    // The bf16 weight cache: bytes of a bf16 copy of each matrix slot (0: not quantized, no
    // copy; ModelExecutor::weight_cache_candidates), the cache resident now (counted like the
    // weights), and whether this plan chooses a new one (only when none is resident).
    std::vector<int64_t> weight_cache_candidates;
    int64_t weight_cache_bytes = 0;
    int32_t weight_cache_matrices = 0;
    bool choose_weight_cache = false;
    int32_t panel_matrices = 0; // ModelExecutor::panel_matrices / panel_bytes
    int64_t panel_bytes = 0;
};

// Activation workspace of a forward over max_tokens token rows and max_logits logits rows.
int64_t estimate_workspace_bytes(const ModelConfig& config, int32_t max_tokens, int32_t max_logits);

// Errors: bad utilization, a model without a KV cache, or a budget that leaves room for fewer
// than min_blocks blocks (unless budget.fallback_when_short).
Result<MemoryPlan> plan_memory(const KvPoolShape& shape, const MemoryBudget& budget,
                               int32_t min_blocks = 1);

// The smallest utilization whose plan holds min_blocks blocks (rounded up to 1e-4), or nullopt
// when even 1.0 does not. For refusing an impossible utilization with a value that works.
std::optional<double> min_utilization(const KvPoolShape& shape, const MemoryBudget& budget,
                                      int32_t min_blocks);

} // namespace llmwb
