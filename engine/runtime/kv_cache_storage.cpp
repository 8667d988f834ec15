#include "engine/runtime/kv_cache_storage.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <new>
#include <string>

namespace llmwb {

namespace {

KvLayout layout_of(const ModelConfig& config, int32_t block_size, KvDtype dtype) {
    KvLayout l;
    l.dtype = dtype;
    l.block_size = block_size;
    l.num_kv_heads = config.num_kv_heads;
    l.head_dim = config.head_dim;
    return l;
}

} // namespace

int64_t KvCacheStorage::bytes_per_block(const ModelConfig& config, int32_t block_size,
                                        KvDtype dtype) {
    return 2 * static_cast<int64_t>(config.num_layers) *
           layout_of(config, block_size, dtype).block_bytes();
}

float* KvCacheStorage::f32(const unsigned char* p) const {
    assert(layout_.dtype == KvDtype::F32);
    return reinterpret_cast<float*>(const_cast<unsigned char*>(p));
}

void KvCacheStorage::set_scales(std::span<const float> k_scales, std::span<const float> v_scales) {
    auto fill = [&](std::vector<float>& dst, std::span<const float> src) {
        dst.assign(static_cast<size_t>(num_layers_), 1.0f);
        if (static_cast<int32_t>(src.size()) != num_layers_)
            return;
        for (int32_t l = 0; l < num_layers_; ++l)
            if (std::isfinite(src[l]) && src[l] > 0)
                dst[l] = src[l];
    };
    fill(k_scales_, k_scales);
    fill(v_scales_, v_scales);
}

Result<std::unique_ptr<KvCacheStorage>> KvCacheStorage::create(const ModelConfig& config,
                                                               int32_t num_blocks,
                                                               int32_t block_size, KvDtype dtype) {
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
        return std::make_unique<KvCacheStorage>(config, num_blocks, block_size, dtype);
    } catch (const std::bad_alloc&) {
        return make_error(
            "KV cache: cannot reserve " +
            std::to_string(bytes_per_block(config, block_size, dtype) * num_blocks >> 20) +
            " MiB of address space for " + std::to_string(num_blocks) + " blocks");
    }
}

KvCacheStorage::KvCacheStorage(const ModelConfig& config, int32_t num_blocks, int32_t block_size,
                               KvDtype dtype)
    : num_blocks_(num_blocks), block_size_(block_size), num_layers_(config.num_layers),
      num_kv_heads_(config.num_kv_heads), head_dim_(config.head_dim),
      layout_(layout_of(config, block_size, dtype)) {
    assert(is_kv_block_size(block_size) && num_blocks >= 1);
    layer_bytes_ = layout_.block_bytes() * num_blocks_;
    // Not filled: filling would commit every page of the pool up front (seconds and GiB for a
    // large pool). A slot is always written before it is read.
    memory_ = LazyHostBuffer(static_cast<size_t>(layer_bytes_) * 2 * num_layers_);
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
