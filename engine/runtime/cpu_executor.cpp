#include "engine/runtime/cpu_executor.h"

#include "engine/model/loaded_model.h"
#include "engine/model/mapped_file.h"
#include "engine/runtime/host_memory.h"

#include <unistd.h>

#include <cassert>
#include <cstring>

namespace llmwb {

namespace {

// Copies one block (every layer, K and V) between two storages of the same shape, or inside one.
void copy_block_between(const KvCacheStorage& src, int32_t src_block, KvCacheStorage& dst,
                        int32_t dst_block) {
    assert(src.num_layers() == dst.num_layers() && src.block_size() == dst.block_size() &&
           src.slot_stride() == dst.slot_stride());
    assert(src_block >= 0 && src_block < src.num_blocks());
    assert(dst_block >= 0 && dst_block < dst.num_blocks());
    assert(&src != &dst || src_block != dst_block);
    const int64_t first_src = static_cast<int64_t>(src_block) * src.block_size();
    const int64_t first_dst = static_cast<int64_t>(dst_block) * dst.block_size();
    const size_t bytes = static_cast<size_t>(src.block_size() * src.slot_stride()) * sizeof(float);
    for (int32_t l = 0; l < src.num_layers(); ++l) {
        std::memcpy(dst.k_slot(l, first_dst), src.k_slot(l, first_src), bytes);
        std::memcpy(dst.v_slot(l, first_dst), src.v_slot(l, first_src), bytes);
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

Status CpuExecutor::resize_kv(int32_t num_blocks, int32_t block_size,
                              std::span<const BlockCopy> keep) {
    auto storage = KvCacheStorage::create(model_.config(), num_blocks, block_size);
    if (!storage)
        return storage.error();
    if (kv_ && kv_->block_size() == block_size)
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
    return ok_status();
}

Status CpuExecutor::check_weights() const {
    for (const auto& m : model_.model().mappings)
        if (Status st = m->check_unchanged(); !st)
            return st;
    return ok_status();
}

} // namespace llmwb
