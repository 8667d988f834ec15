// KvCacheStorage: the paged K/V memory of every layer. There is no contiguous per-request cache:
// a token's K and V are written to a slot (block_id * block_size + offset) given by the batch's
// slot_mapping and read back through the sequence's block table.
//
//   k_pool(layer), v_pool(layer): num_blocks blocks in the layout of kernels/cpu/kv_format.h
//   (element type dtype(); for f32 exactly [num_blocks][block_size][num_kv_heads][head_dim]
//   floats, which k(layer) / k_slot() address).
// fp8 pools carry one scale per layer for K and one for V (k_scale / v_scale, 1.0 unless set).
//
// The memory is one lazily committed mapping (LazyHostBuffer): a block costs RAM only once a
// token is written to it, so a pool sized for several full contexts holds one short chat in the
// RAM of that chat's blocks, and creating it takes no time. Unwritten slots read as zeros.
//
// SequenceBlocks is the trivial single-sequence allocator (blocks 0, 1, 2, ... in order) used by
// the CLI's single-request generation and perplexity; the scheduler uses a BlockPool instead.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/model/model_config.h"
#include "engine/runtime/host_memory.h"
#include "engine/runtime/kv_block_size.h"
#include "engine/util/result.h"
#include "kernels/cpu/kv_format.h"

namespace llmwb {

class KvCacheStorage {
  public:
    static constexpr int32_t kDefaultBlockSize = kDefaultKvBlockSize;

    // Bytes one block takes over all layers, K and V.
    static int64_t bytes_per_block(const ModelConfig& config, int32_t block_size,
                                   KvDtype dtype = KvDtype::F32);

    // block_size must be 8, 16 or 32; num_blocks >= 1. Errors on bad sizes or a size overflow.
    static Result<std::unique_ptr<KvCacheStorage>> create(const ModelConfig& config,
                                                          int32_t num_blocks,
                                                          int32_t block_size = kDefaultBlockSize,
                                                          KvDtype dtype = KvDtype::F32);

    // Preconditions as for create() (asserted); throws std::bad_alloc when the address space
    // cannot be reserved.
    KvCacheStorage(const ModelConfig& config, int32_t num_blocks,
                   int32_t block_size = kDefaultBlockSize, KvDtype dtype = KvDtype::F32);

    int32_t num_blocks() const { return num_blocks_; }
    int32_t block_size() const { return block_size_; }
    int32_t num_layers() const { return num_layers_; }
    int32_t num_kv_heads() const { return num_kv_heads_; }
    int32_t head_dim() const { return head_dim_; }
    int64_t num_slots() const { return static_cast<int64_t>(num_blocks_) * block_size_; }
    int64_t bytes_per_block() const { return 2 * num_layers_ * layout_.block_bytes(); }
    int64_t total_bytes() const { return bytes_per_block() * num_blocks_; }
    KvDtype dtype() const { return layout_.dtype; }
    const KvLayout& layout() const { return layout_; } // one layer's K (or V) pool

    // One layer's K / V pool (block b at b * layout().block_bytes()).
    unsigned char* k_pool(int32_t layer) { return bytes() + layer_bytes_ * layer; }
    unsigned char* v_pool(int32_t layer) { return bytes() + layer_bytes_ * (num_layers_ + layer); }
    const unsigned char* k_pool(int32_t layer) const { return bytes() + layer_bytes_ * layer; }
    const unsigned char* v_pool(int32_t layer) const {
        return bytes() + layer_bytes_ * (num_layers_ + layer);
    }
    // fp8 scales of each layer (stored value = x / scale). Empty spans or other types: 1.0.
    float k_scale(int32_t layer) const { return k_scales_.empty() ? 1.0f : k_scales_[layer]; }
    float v_scale(int32_t layer) const { return v_scales_.empty() ? 1.0f : v_scales_[layer]; }
    // Sets the per-layer scales (num_layers() each, finite and > 0; anything else: 1.0).
    void set_scales(std::span<const float> k_scales, std::span<const float> v_scales);

    // f32 pools only (asserted): floats per slot (num_kv_heads * head_dim) and float views.
    int64_t slot_stride() const { return static_cast<int64_t>(num_kv_heads_) * head_dim_; }
    float* k(int32_t layer) { return f32(k_pool(layer)); }
    float* v(int32_t layer) { return f32(v_pool(layer)); }
    const float* k(int32_t layer) const { return f32(k_pool(layer)); }
    const float* v(int32_t layer) const { return f32(v_pool(layer)); }
    float* k_slot(int32_t layer, int64_t slot) { return k(layer) + slot * slot_stride(); }
    float* v_slot(int32_t layer, int64_t slot) { return v(layer) + slot * slot_stride(); }
    const float* k_slot(int32_t layer, int64_t slot) const {
        return k(layer) + slot * slot_stride();
    }
    const float* v_slot(int32_t layer, int64_t slot) const {
        return v(layer) + slot * slot_stride();
    }

  private:
    unsigned char* bytes() const { return static_cast<unsigned char*>(memory_.data()); }
    float* f32(const unsigned char* p) const;
    int32_t num_blocks_ = 0, block_size_ = 0, num_layers_ = 0, num_kv_heads_ = 0, head_dim_ = 0;
    KvLayout layout_;
    int64_t layer_bytes_ = 0; // bytes of one layer's K (or V) pool
    LazyHostBuffer memory_;   // K of every layer, then V of every layer
    std::vector<float> k_scales_, v_scales_;
};

// Blocks 0..n-1 of a KvCacheStorage handed to one sequence in order.
class SequenceBlocks {
  public:
    SequenceBlocks(int32_t block_size, int32_t num_blocks)
        : block_size_(block_size), num_blocks_(num_blocks) {}

    // Makes room for n_tokens tokens; false when that needs more blocks than exist.
    bool reserve(int64_t n_tokens);
    int64_t capacity_tokens() const { return static_cast<int64_t>(num_blocks_) * block_size_; }
    std::span<const int32_t> table() const { return table_; }
    int32_t block_size() const { return block_size_; }

  private:
    int32_t block_size_, num_blocks_;
    std::vector<int32_t> table_;
};

} // namespace llmwb
