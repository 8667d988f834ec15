#include "engine/runtime/cpu_executor.h"

#include "engine/runtime/panel_weights.h"

#include "engine/model/loaded_model.h"
#include "engine/model/mapped_file.h"
#include "engine/runtime/host_memory.h"
#include "engine/runtime/sampler.h"
#include "kernels/cpu/thread_pool.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <cstring>

namespace llmwb {

namespace {

// Copies one block (every layer, K and V) between two storages of the same shape, or inside one.
void copy_block_between(const KvCacheStorage& src, int32_t src_block, KvCacheStorage& dst,
                        int32_t dst_block) {
    assert(src.num_layers() == dst.num_layers() &&
           src.layout().block_bytes() == dst.layout().block_bytes() && src.dtype() == dst.dtype());
    assert(src_block >= 0 && src_block < src.num_blocks());
    assert(dst_block >= 0 && dst_block < dst.num_blocks());
    assert(&src != &dst || src_block != dst_block);
    // A block's values and (int8) scales are contiguous: one copy per layer, K and V.
    const int64_t bb = src.layout().block_bytes();
    const auto bytes = static_cast<size_t>(bb);
    for (int32_t l = 0; l < src.num_layers(); ++l) {
        std::memcpy(dst.k_pool(l) + dst_block * bb, src.k_pool(l) + src_block * bb, bytes);
        std::memcpy(dst.v_pool(l) + dst_block * bb, src.v_pool(l) + src_block * bb, bytes);
    }
}

} // namespace

std::string CpuExecutor::device_name() const {
    return "CPU";
}

DeviceMemory CpuExecutor::memory() const {
    DeviceMemory m;
    m.total_bytes = physical_memory_bytes();
    m.free_bytes = available_memory_bytes();
    return m;
}

Status CpuExecutor::set_kv_dtype(KvDtype t, const KvScales& scales) {
    kv_dtype_ = t;
    kv_scales_ = kv_dtype_is_fp8(t) ? scales : KvScales{};
    return ok_status();
}

Status CpuExecutor::resize_kv(int32_t num_blocks, int32_t block_size,
                              std::span<const BlockCopy> keep) {
    auto storage = KvCacheStorage::create(model_.config(), num_blocks, block_size, kv_dtype_);
    if (!storage)
        return storage.error();
    (*storage)->set_scales(kv_scales_.k, kv_scales_.v);
    // After set_kv_dtype the caller keeps nothing (ModelExecutor::set_kv_dtype).
    if (kv_ && kv_->block_size() == block_size && kv_->dtype() == kv_dtype_)
        for (const BlockCopy& m : keep)
            copy_block_between(*kv_, m.src, **storage, m.dst);
    owned_kv_ = std::move(storage.value());
    kv_ = owned_kv_.get();
    return ok_status();
}

void CpuExecutor::copy_block(int32_t src, int32_t dst) {
    assert(kv_);
    copy_block_between(*kv_, src, *kv_, dst);
}

Status CpuExecutor::forward(const ForwardBatch& batch, float* logits) {
    assert(kv_);
    model_.forward(batch, *kv_, logits);
    if (after_forward_)
        after_forward_(*kv_, batch);
    return ok_status();
}

Status CpuExecutor::forward_greedy(const ForwardBatch& batch, int32_t* ids) {
    const auto rows = static_cast<int64_t>(batch.logits_rows.size());
    const auto vocab = static_cast<size_t>(model_.vocab_size());
    greedy_logits_.resize(static_cast<size_t>(std::max<int64_t>(rows, 1)) * vocab);
    if (Status st = forward(batch, greedy_logits_.data()); !st)
        return st;
    auto pick = [&](int64_t r) {
        ids[r] = argmax_first(
            std::span<const float>(greedy_logits_.data() + static_cast<size_t>(r) * vocab, vocab));
    };
    if (rows <= 1) {
        for (int64_t r = 0; r < rows; ++r)
            pick(r);
        return ok_status();
    }
    // Rows handed out one at a time: a thread held back (a shared machine) leaves its rows to
    // the others instead of holding the step.
    std::atomic<int64_t> next{0};
    model_.pool().run([&](int, int) {
        for (int64_t r = next.fetch_add(1); r < rows; r = next.fetch_add(1))
            pick(r);
    });
    return ok_status();
}

Status CpuExecutor::check_weights() const {
    for (const auto& m : model_.model().mappings)
        if (Status st = m->check_unchanged(); !st)
            return st;
    return ok_status();
}

Result<KvScales> CpuExecutor::kv_absmax(std::span<const int32_t> tokens) {
    const ModelConfig& c = model_.config();
    if (tokens.empty())
        return make_error("KV calibration: no tokens");
    for (int32_t id : tokens)
        if (id < 0 || id >= model_.vocab_size())
            return make_error("KV calibration: token id " + std::to_string(id) +
                              " is outside the vocabulary");
    const int32_t bs = KvCacheStorage::kDefaultBlockSize;
    const auto n = static_cast<int64_t>(tokens.size());
    if (c.max_position > 0 && n > c.max_position)
        return make_error("KV calibration: " + std::to_string(n) +
                          " tokens exceed the model's context");
    auto kv = KvCacheStorage::create(c, static_cast<int32_t>((n + bs - 1) / bs), bs);
    if (!kv)
        return kv.error();
    SequenceBlocks blocks(bs, (*kv)->num_blocks());
    blocks.reserve(n);
    ForwardBatch batch;
    batch.add_sequence(tokens, 0, blocks.table(), bs, ForwardBatch::Logits::None);
    model_.forward(batch, **kv, nullptr);
    KvScales out;
    out.k.assign(static_cast<size_t>(c.num_layers), 0.0f);
    out.v.assign(static_cast<size_t>(c.num_layers), 0.0f);
    const int64_t floats = n * (*kv)->slot_stride(); // slots 0..n-1 are contiguous (blocks 0..)
    for (int32_t l = 0; l < c.num_layers; ++l) {
        const float* k = (*kv)->k(l);
        const float* v = (*kv)->v(l);
        for (int64_t i = 0; i < floats; ++i) {
            out.k[l] = std::max(out.k[l], std::fabs(k[i]));
            out.v[l] = std::max(out.v[l], std::fabs(v[i]));
        }
    }
    return out;
}

int32_t CpuExecutor::panel_matrices() const {
    return model_.panel_weights().packed_matrices();
}

int64_t CpuExecutor::panel_bytes() const {
    return model_.panel_weights().packed_bytes();
}

} // namespace llmwb
