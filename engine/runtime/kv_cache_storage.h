// KvCacheStorage: the paged K/V memory of every layer. There is no contiguous per-request cache:
// a token's K and V are written to a slot (block_id * block_size + offset) given by the batch's
// slot_mapping and read back through the sequence's block table.
//
//   k(layer), v(layer): [num_blocks][block_size][num_kv_heads][head_dim] fp32
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

namespace llmwb {

class KvCacheStorage {
  public:
    static constexpr int32_t kDefaultBlockSize = kDefaultKvBlockSize;

    // Bytes one block takes over all layers, K and V.
    static int64_t bytes_per_block(const ModelConfig& config, int32_t block_size);

    // block_size must be 8, 16 or 32; num_blocks >= 1. Errors on bad sizes or a size overflow.
    static Result<std::unique_ptr<KvCacheStorage>>
    create(const ModelConfig& config, int32_t num_blocks, int32_t block_size = kDefaultBlockSize);

    // Preconditions as for create() (asserted); throws std::bad_alloc when the address space
    // cannot be reserved.
    KvCacheStorage(const ModelConfig& config, int32_t num_blocks,
                   int32_t block_size = kDefaultBlockSize);

    int32_t num_blocks() const { return num_blocks_; }
    int32_t block_size() const { return block_size_; }
    int32_t num_layers() const { return num_layers_; }
    int32_t num_kv_heads() const { return num_kv_heads_; }
    int32_t head_dim() const { return head_dim_; }
    int64_t num_slots() const { return static_cast<int64_t>(num_blocks_) * block_size_; }
    int64_t bytes_per_block() const;
    int64_t total_bytes() const { return bytes_per_block() * num_blocks_; }

    // Floats per slot: num_kv_heads * head_dim.
    int64_t slot_stride() const { return static_cast<int64_t>(num_kv_heads_) * head_dim_; }

    float* k(int32_t layer) { return base() + layer_floats_ * layer; }
    float* v(int32_t layer) { return base() + layer_floats_ * (num_layers_ + layer); }
    const float* k(int32_t layer) const { return base() + layer_floats_ * layer; }
    const float* v(int32_t layer) const { return base() + layer_floats_ * (num_layers_ + layer); }
    float* k_slot(int32_t layer, int64_t slot) { return k(layer) + slot * slot_stride(); }
    float* v_slot(int32_t layer, int64_t slot) { return v(layer) + slot * slot_stride(); }
    const float* k_slot(int32_t layer, int64_t slot) const {
        return k(layer) + slot * slot_stride();
    }
    const float* v_slot(int32_t layer, int64_t slot) const {
        return v(layer) + slot * slot_stride();
    }

  private:
    float* base() const { return static_cast<float*>(memory_.data()); }
    int32_t num_blocks_ = 0, block_size_ = 0, num_layers_ = 0, num_kv_heads_ = 0, head_dim_ = 0;
    int64_t layer_floats_ = 0; // floats of one layer's K (or V)
    LazyHostBuffer memory_;    // K of every layer, then V of every layer
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
