// BlockPool: the fixed-size KV blocks of a paged cache, their reference counts, the free list
// and the prefix cache (full blocks indexed by a chained hash of their tokens).
//
// Invariants (check_invariants() verifies them all):
//   ref_count(b) == 0  <=>  b is in the free list
//   a block with a hash is in the cached map under that hash (one block per hash)
// The free list is intrusive and doubly linked (prev/next block ids): pop from the head,
// append at the tail, remove from the middle, all O(1). Freed blocks keep their hash and
// tokens ("cached-free") until they are popped for reuse: lazy eviction, least recently freed
// first. Freed blocks without a hash go to the head so that cached blocks survive longer.
// A hit on a cached-free block takes it back out of the free list (touch()).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/util/result.h"

namespace llmwb {

// Hash of one full block chained to its parent's hash (0 for the first block) and an extra
// key (e.g. a model id), so that equal token runs after different prefixes differ.
uint64_t hash_block_tokens(uint64_t parent_hash, std::span<const int32_t> tokens,
                           uint64_t extra_key);

class BlockPool {
  public:
    // block_size in {8, 16, 32}; num_blocks >= 1 (preconditions, asserted).
    BlockPool(int32_t num_blocks, int32_t block_size);

    int32_t num_blocks() const { return static_cast<int32_t>(ref_.size()); }
    int32_t block_size() const { return block_size_; }
    int32_t num_free() const { return num_free_; } // includes cached-free blocks
    int32_t num_used() const { return num_blocks() - num_free_; }
    int32_t num_cached() const { return static_cast<int32_t>(cached_.size()); }

    // Pops the least recently freed block (evicting its hash if it had one); ref_count = 1.
    // std::nullopt: no free block ("does not fit" is a normal outcome).
    std::optional<int32_t> allocate();
    // n blocks at once, or none (nullopt) when fewer than n are free.
    std::optional<std::vector<int32_t>> allocate_n(int32_t n);

    // One more reference (a prefix-cache hit or a fork). A free block leaves the free list.
    void touch(int32_t block);
    // One reference less; at 0 the block returns to the free list (tail if cached, else head).
    void release(int32_t block);

    // Prefix cache. lookup: the cached block with this hash whose tokens and parent hash
    // match, or nullopt. register_full_block: records the block's tokens and hash (no-op when
    // the block already has a hash or another block holds the hash).
    std::optional<int32_t> lookup(uint64_t hash, uint64_t parent_hash,
                                  std::span<const int32_t> tokens) const;
    void register_full_block(int32_t block, uint64_t hash, uint64_t parent_hash,
                             std::span<const int32_t> tokens);

    int32_t ref_count(int32_t block) const { return ref_[block]; }
    bool has_hash(int32_t block) const { return has_hash_[block] != 0; }
    uint64_t block_hash(int32_t block) const { return hash_[block]; }
    uint64_t parent_hash(int32_t block) const { return parent_hash_[block]; }
    // The tokens recorded for a hashed block (meaningful only while has_hash(block)).
    std::span<const int32_t> block_tokens(int32_t block) const {
        return std::span<const int32_t>(tokens_).subspan(static_cast<size_t>(block) * block_size_,
                                                         static_cast<size_t>(block_size_));
    }
    bool in_free_list(int32_t block) const;

    // Free-list order from head (next to be reused) to tail. For tests and snapshots.
    std::vector<int32_t> free_list() const;

    // Verifies the invariants above and the list links; an error names the first violation.
    Status check_invariants() const;

  private:
    static constexpr int32_t kNone = -1;
    void list_remove(int32_t b);
    void list_push_back(int32_t b);
    void list_push_front(int32_t b);
    void evict(int32_t b);

    int32_t block_size_;
    int32_t num_free_ = 0;
    int32_t head_ = kNone, tail_ = kNone;
    std::vector<int32_t> ref_;          // [num_blocks]
    std::vector<int32_t> prev_, next_;  // [num_blocks] free-list links (kNone at the ends)
    std::vector<uint8_t> linked_;       // [num_blocks] 1 while in the free list
    std::vector<uint8_t> has_hash_;     // [num_blocks]
    std::vector<uint64_t> hash_;        // [num_blocks]
    std::vector<uint64_t> parent_hash_; // [num_blocks]
    std::vector<int32_t> tokens_;       // [num_blocks][block_size] tokens of hashed blocks
    std::unordered_map<uint64_t, int32_t> cached_; // hash -> block
};

} // namespace llmwb
