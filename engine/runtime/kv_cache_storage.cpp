#include "engine/runtime/kv_cache_storage.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <new>
#include <string>

namespace llmwb {

int64_t KvCacheStorage::bytes_per_block(const ModelConfig& config, int32_t block_size) {
    return 2 * static_cast<int64_t>(config.num_layers) * config.num_kv_heads * config.head_dim *
           block_size * static_cast<int64_t>(sizeof(float));
}

int64_t KvCacheStorage::bytes_per_block() const {
    return 2 * static_cast<int64_t>(num_layers_) * slot_stride() * block_size_ *
           static_cast<int64_t>(sizeof(float));
}

Result<std::unique_ptr<KvCacheStorage>>
KvCacheStorage::create(const ModelConfig& config, int32_t num_blocks, int32_t block_size) {
    if (Status st = check_kv_block_size(block_size, "KV cache: block_size"); !st)
        return st.error();
    if (num_blocks < 1)
        return make_error("KV cache: num_blocks " + std::to_string(num_blocks) + " < 1");
    if (config.num_layers < 1 || config.num_kv_heads < 1 || config.head_dim < 1)
        return make_error("KV cache: model config has no layers, kv heads or head_dim");
    // Per layer floats = num_blocks * block_size * kv_heads * head_dim; check it fits size_t.
    const int64_t slot = static_cast<int64_t>(config.num_kv_heads) * config.head_dim;
    const int64_t slots = static_cast<int64_t>(num_blocks) * block_size;
    if (slot > std::numeric_limits<int64_t>::max() / 8 / slots / (2 * config.num_layers))
        return make_error("KV cache: size overflows");
    try {
        return std::make_unique<KvCacheStorage>(config, num_blocks, block_size);
    } catch (const std::bad_alloc&) {
        return make_error("KV cache: cannot reserve " +
                          std::to_string(bytes_per_block(config, block_size) * num_blocks >> 20) +
                          " MiB of address space for " + std::to_string(num_blocks) + " blocks");
    }
}

KvCacheStorage::KvCacheStorage(const ModelConfig& config, int32_t num_blocks, int32_t block_size)
    : num_blocks_(num_blocks), block_size_(block_size), num_layers_(config.num_layers),
      num_kv_heads_(config.num_kv_heads), head_dim_(config.head_dim) {
    assert(is_kv_block_size(block_size) && num_blocks >= 1);
    layer_floats_ = num_slots() * slot_stride();
    // Not filled: filling would commit every page of the pool up front (seconds and GiB for a
    // large pool). A slot is always written before it is read.
    memory_ = LazyHostBuffer(static_cast<size_t>(layer_floats_) * 2 * num_layers_ * sizeof(float));
    if (!memory_.ok())
        throw std::bad_alloc();
}

bool SequenceBlocks::reserve(int64_t n_tokens) {
    if (n_tokens > capacity_tokens())
        return false;
    const int64_t need = (n_tokens + block_size_ - 1) / block_size_;
    while (static_cast<int64_t>(table_.size()) < need)
        table_.push_back(static_cast<int32_t>(table_.size()));
    return true;
}

} // namespace llmwb
