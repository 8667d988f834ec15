// KvCacheManager: the block tables of the requests over one BlockPool. It allocates the slots a
// step schedules, serves prompt prefixes from the prefix cache at admission, registers full
// blocks in the cache once their K/V are computed, copies shared partial blocks on write
// (forked sequences) and frees a request's blocks tail first.
//
// Sliding window (set_sliding_window, for a model whose every layer slides): the blocks of a
// request that lie wholly before the first key any of its future queries can see are released
// as it advances (release_outside_window). Its table keeps its length, so that table[i] is still
// the block of tokens [i * block_size, (i + 1) * block_size): the released entries (the first
// num_released(id)) hold a filler id that no kernel reads (the attention window starts after
// them) and that the request does not own; live_blocks(id) are the blocks it holds. A released
// block keeps its prefix-cache hash as any freed block does.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/runtime/model_executor.h"
#include "engine/serving/block_pool.h"
#include "engine/util/result.h"

namespace llmwb {

using RequestId = int64_t;

// Full cached blocks that hold a prompt's first tokens.
struct PrefixHit {
    std::vector<int32_t> blocks;
    std::vector<uint64_t> hashes; // chained hash of each block
    int32_t num_tokens = 0;       // blocks.size() * block_size
};

class KvCacheManager {
  public:
    KvCacheManager(int32_t num_blocks, int32_t block_size, bool prefix_caching,
                   uint64_t extra_key = 0);

    BlockPool& pool() { return *pool_; }
    const BlockPool& pool() const { return *pool_; }
    int32_t block_size() const { return pool_->block_size(); }
    bool prefix_caching() const { return prefix_caching_; }

    // The longest run of cached full blocks matching tokens' prefix, leaving at least the last
    // token to compute (its logits are needed). Changes nothing; see record_prefix_query.
    PrefixHit find_cached_prefix(std::span<const int32_t> tokens) const;
    // Counts one admission's query (tokens looked up) and hit (tokens served from the cache).
    void record_prefix_query(int32_t queried_tokens, int32_t hit_tokens);

    // Gives request `id` room for its first `num_tokens` tokens. For a request without a table
    // yet, `hit` (may be null) supplies its first blocks from the prefix cache. The first write
    // into a shared partial block (ref_count > 1) copies it: the copy is appended to `copies`,
    // and `first_write_token` (the first token the step writes) tells which block that is.
    // Returns false and changes nothing when the pool has too few free blocks.
    bool allocate_slots(RequestId id, int64_t num_tokens, int64_t first_write_token,
                        const PrefixHit* hit, std::vector<BlockCopy>* copies);

    // Registers the request's full blocks among tokens[0, num_computed) in the prefix cache.
    void commit_computed(RequestId id, std::span<const int32_t> tokens, int64_t num_computed);

    // Releases the request's blocks, last block first (chain tails are evicted before heads).
    void free(RequestId id);

    // Sliding-window models (every layer attends to the last `window` keys; 0 = none, the
    // default): see the header comment.
    void set_sliding_window(int32_t window) { window_ = window > 0 ? window : 0; }
    int32_t sliding_window() const { return window_; }
    // Releases the request's blocks that lie wholly before key (next_position - window + 1),
    // the first key visible to a query at next_position, the lowest position a future query of
    // the request can have (its computed tokens). With prefix caching, only blocks already
    // registered in the cache are released (their chain stays whole). Returns the number
    // released; 0 without a window.
    int32_t release_outside_window(RequestId id, int64_t next_position);
    // Blocks a request needs live at most with the window: the window's keys may straddle one
    // more block than they fill, plus the block being written. 0 without a window.
    int32_t window_blocks() const;
    // The longest prefill chunk (tokens) one step may schedule for a request so that it fits
    // the pool alone whatever its length: (num_blocks - ceil((window - 1) / block) - 1) blocks
    // of tokens (the chunk's keys plus the window's keys before it, straddling one more block),
    // at least 0. Without a window: INT64_MAX (no cap).
    int64_t window_chunk_limit() const;
    // Releases the request's blocks beyond the first ceil(num_tokens / block size), last first
    // (speculative decoding: the slots of rejected drafts).
    void trim(RequestId id, int64_t num_tokens);

    // dst gets src's blocks (shared, ref_count + 1): a forked sequence. dst must have no table.
    void fork(RequestId src, RequestId dst);

    bool has_table(RequestId id) const { return tables_.count(id) != 0; }
    // The block table as the forward pass reads it (released entries hold a filler id).
    std::span<const int32_t> blocks(RequestId id) const;
    // The blocks the request holds: blocks(id) without its released first entries.
    std::span<const int32_t> live_blocks(RequestId id) const;
    int32_t num_released(RequestId id) const;
    int32_t num_requests() const { return static_cast<int32_t>(tables_.size()); }

    // Rebuilds the pool with num_blocks blocks, renumbering every live block into it (a block
    // shared by several tables stays shared) and keeping the hashes of live full blocks.
    // `moves` receives the old -> new block copies to perform between the old and the new
    // storage. Cached-free blocks are dropped. Precondition: pool().num_used() <= num_blocks.
    void resize(int32_t num_blocks, std::vector<BlockCopy>* moves);

    int64_t prefix_queries() const { return prefix_queries_; } // tokens
    int64_t prefix_hits() const { return prefix_hits_; }       // tokens
    int64_t cow_copies() const { return cow_copies_; }

    // Pool invariants plus: every table's block has ref_count >= the number of tables holding
    // it, and no block of a table is free. For tests.
    Status check_consistency() const;

  private:
    struct Table {
        std::vector<int32_t> blocks;
        std::vector<uint64_t> hashes; // chained hashes of the first hashes.size() full blocks
        int32_t released = 0;         // blocks[0, released) were released (sliding window)
    };
    static constexpr int32_t kFiller = 0; // a valid block id, never read through a table

    std::unique_ptr<BlockPool> pool_;
    bool prefix_caching_;
    uint64_t extra_key_;
    int32_t window_ = 0;
    std::unordered_map<RequestId, Table> tables_;
    int64_t prefix_queries_ = 0, prefix_hits_ = 0, cow_copies_ = 0;
};

} // namespace llmwb
