#include "engine/serving/kv_cache_manager.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <string>

namespace llmwb {

KvCacheManager::KvCacheManager(int32_t num_blocks, int32_t block_size, bool prefix_caching,
                               uint64_t extra_key)
    : pool_(std::make_unique<BlockPool>(num_blocks, block_size)), prefix_caching_(prefix_caching),
      extra_key_(extra_key) {}

PrefixHit KvCacheManager::find_cached_prefix(std::span<const int32_t> tokens) const {
    PrefixHit hit;
    if (!prefix_caching_ || tokens.empty())
        return hit;
    const int32_t bs = block_size();
    const size_t max_blocks = (tokens.size() - 1) / static_cast<size_t>(bs);
    uint64_t parent = 0;
    for (size_t i = 0; i < max_blocks; ++i) {
        auto toks = tokens.subspan(i * bs, static_cast<size_t>(bs));
        const uint64_t h = hash_block_tokens(parent, toks, extra_key_);
        auto b = pool_->lookup(h, parent, toks);
        if (!b)
            break;
        hit.blocks.push_back(*b);
        hit.hashes.push_back(h);
        parent = h;
    }
    hit.num_tokens = static_cast<int32_t>(hit.blocks.size()) * bs;
    return hit;
}

void KvCacheManager::record_prefix_query(int32_t queried_tokens, int32_t hit_tokens) {
    if (!prefix_caching_)
        return;
    prefix_queries_ += queried_tokens;
    prefix_hits_ += hit_tokens;
}

bool KvCacheManager::allocate_slots(RequestId id, int64_t num_tokens, int64_t first_write_token,
                                    const PrefixHit* hit, std::vector<BlockCopy>* copies) {
    const int32_t bs = block_size();
    auto it = tables_.find(id);
    const bool fresh = it == tables_.end();
    const Table* t = fresh ? nullptr : &it->second;

    // Blocks the hit takes out of the free list.
    int32_t hit_blocks = 0, hit_from_free = 0;
    if (fresh && hit) {
        hit_blocks = static_cast<int32_t>(hit->blocks.size());
        for (int32_t b : hit->blocks)
            if (pool_->ref_count(b) == 0)
                ++hit_from_free;
    }
    const int64_t have = fresh ? hit_blocks : static_cast<int64_t>(t->blocks.size());
    const int64_t needed = (num_tokens + bs - 1) / bs;
    const int64_t new_blocks = needed > have ? needed - have : 0;
    int64_t cow = 0;
    if (!fresh)
        for (int64_t i = std::max<int64_t>(first_write_token / bs, t->released); i < have; ++i)
            if (pool_->ref_count(t->blocks[i]) > 1)
                ++cow;
    if (new_blocks + cow > static_cast<int64_t>(pool_->num_free()) - hit_from_free)
        return false;

    Table& tab = tables_[id];
    if (fresh && hit) {
        for (int32_t b : hit->blocks) {
            pool_->touch(b);
            tab.blocks.push_back(b);
        }
        tab.hashes = hit->hashes;
    }
    if (cow > 0) {
        for (int64_t i = std::max<int64_t>(first_write_token / bs, tab.released); i < have; ++i) {
            const int32_t old = tab.blocks[i];
            if (pool_->ref_count(old) <= 1)
                continue;
            const int32_t nb = *pool_->allocate();
            if (copies)
                copies->push_back({old, nb});
            pool_->release(old);
            tab.blocks[i] = nb;
            if (static_cast<int64_t>(tab.hashes.size()) > i)
                tab.hashes.resize(i);
            ++cow_copies_;
        }
    }
    for (int64_t i = 0; i < new_blocks; ++i)
        tab.blocks.push_back(*pool_->allocate());
    return true;
}

void KvCacheManager::commit_computed(RequestId id, std::span<const int32_t> tokens,
                                     int64_t num_computed) {
    if (!prefix_caching_)
        return;
    auto it = tables_.find(id);
    if (it == tables_.end())
        return;
    Table& t = it->second;
    const int32_t bs = block_size();
    const size_t full = std::min(static_cast<size_t>(num_computed / bs), t.blocks.size());
    for (size_t i = t.hashes.size(); i < full; ++i) {
        const uint64_t parent = i ? t.hashes[i - 1] : 0;
        auto toks = tokens.subspan(i * bs, static_cast<size_t>(bs));
        const uint64_t h = hash_block_tokens(parent, toks, extra_key_);
        pool_->register_full_block(t.blocks[i], h, parent, toks);
        t.hashes.push_back(h);
    }
}

void KvCacheManager::free(RequestId id) {
    auto it = tables_.find(id);
    if (it == tables_.end())
        return;
    const std::vector<int32_t>& blocks = it->second.blocks;
    const auto released = static_cast<ptrdiff_t>(it->second.released);
    for (auto b = blocks.rbegin(); b != blocks.rend() - released; ++b)
        pool_->release(*b);
    tables_.erase(it);
}

int32_t KvCacheManager::release_outside_window(RequestId id, int64_t next_position) {
    auto it = tables_.find(id);
    if (window_ <= 0 || it == tables_.end())
        return 0;
    Table& t = it->second;
    const int64_t first_key = next_position - window_ + 1; // first key a future query sees
    if (first_key <= 0)
        return 0;
    int64_t end = std::min<int64_t>(first_key / block_size(), int64_t(t.blocks.size()));
    if (prefix_caching_) // keep the chain: release only blocks whose hash is registered
        end = std::min<int64_t>(end, int64_t(t.hashes.size()));
    int32_t n = 0;
    // Oldest first: the chain's head is the least useful to keep cached (a later request with
    // the same prefix needs the head too, but then it needs every block after it as well).
    for (int64_t i = t.released; i < end; ++i, ++n) {
        pool_->release(t.blocks[size_t(i)]);
        t.blocks[size_t(i)] = kFiller;
    }
    t.released = static_cast<int32_t>(std::max<int64_t>(t.released, end));
    return n;
}

int64_t KvCacheManager::window_chunk_limit() const {
    if (window_ <= 0)
        return INT64_MAX;
    const int64_t bs = block_size();
    const int64_t blocks = pool_->num_blocks() - (window_ - 1 + bs - 1) / bs - 1;
    return std::max<int64_t>(0, blocks * bs);
}

int32_t KvCacheManager::window_blocks() const {
    if (window_ <= 0)
        return 0;
    const int32_t bs = block_size();
    return (window_ + bs - 1) / bs + 1;
}

void KvCacheManager::trim(RequestId id, int64_t num_tokens) {
    auto it = tables_.find(id);
    if (it == tables_.end())
        return;
    Table& t = it->second;
    const auto keep = std::max(static_cast<size_t>((num_tokens + block_size() - 1) / block_size()),
                               static_cast<size_t>(t.released));
    while (t.blocks.size() > keep) {
        pool_->release(t.blocks.back());
        t.blocks.pop_back();
    }
    if (t.hashes.size() > keep)
        t.hashes.resize(keep);
}

void KvCacheManager::fork(RequestId src, RequestId dst) {
    assert(!tables_.count(dst));
    auto it = tables_.find(src);
    if (it == tables_.end())
        return;
    Table copy = it->second;
    for (size_t i = static_cast<size_t>(copy.released); i < copy.blocks.size(); ++i)
        pool_->touch(copy.blocks[i]);
    tables_.emplace(dst, std::move(copy));
}

std::span<const int32_t> KvCacheManager::blocks(RequestId id) const {
    auto it = tables_.find(id);
    if (it == tables_.end())
        return {};
    return it->second.blocks;
}

std::span<const int32_t> KvCacheManager::live_blocks(RequestId id) const {
    auto it = tables_.find(id);
    if (it == tables_.end())
        return {};
    return std::span<const int32_t>(it->second.blocks)
        .subspan(static_cast<size_t>(it->second.released));
}

int32_t KvCacheManager::num_released(RequestId id) const {
    auto it = tables_.find(id);
    return it == tables_.end() ? 0 : it->second.released;
}

void KvCacheManager::resize(int32_t num_blocks, std::vector<BlockCopy>* moves) {
    assert(pool_->num_used() <= num_blocks);
    auto fresh = std::make_unique<BlockPool>(num_blocks, block_size());
    std::vector<int32_t> map(static_cast<size_t>(pool_->num_blocks()), -1);
    for (auto& [id, t] : tables_) {
        for (size_t i = static_cast<size_t>(t.released); i < t.blocks.size(); ++i) {
            const int32_t b = t.blocks[i];
            if (map[b] < 0) {
                map[b] = *fresh->allocate();
                if (moves)
                    moves->push_back({b, map[b]});
            } else {
                fresh->touch(map[b]);
            }
        }
    }
    // Keep the prefix-cache entries of live blocks.
    for (int32_t old = 0; old < pool_->num_blocks(); ++old)
        if (map[old] >= 0 && pool_->has_hash(old))
            fresh->register_full_block(map[old], pool_->block_hash(old), pool_->parent_hash(old),
                                       pool_->block_tokens(old));
    for (auto& [id, t] : tables_)
        for (size_t i = static_cast<size_t>(t.released); i < t.blocks.size(); ++i)
            t.blocks[i] = map[t.blocks[i]];
    pool_ = std::move(fresh);
}

Status KvCacheManager::check_consistency() const {
    if (Status st = pool_->check_invariants(); !st)
        return st;
    std::vector<int32_t> holders(static_cast<size_t>(pool_->num_blocks()), 0);
    for (const auto& [id, t] : tables_) {
        if (t.released < 0 || t.released > static_cast<int32_t>(t.blocks.size()))
            return make_error("request " + std::to_string(id) + " has a bad released count");
        for (int32_t i = 0; i < t.released; ++i)
            if (t.blocks[static_cast<size_t>(i)] != kFiller)
                return make_error("request " + std::to_string(id) +
                                  " has a released entry that is not the filler");
        std::vector<int32_t> sorted(t.blocks.begin() + t.released, t.blocks.end());
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
            return make_error("request " + std::to_string(id) + " holds a block twice");
        for (int32_t b : sorted) {
            if (b < 0 || b >= pool_->num_blocks())
                return make_error("request " + std::to_string(id) + " holds bad block " +
                                  std::to_string(b));
            ++holders[b];
        }
    }
    for (int32_t b = 0; b < pool_->num_blocks(); ++b)
        if (pool_->ref_count(b) != holders[b])
            return make_error("block " + std::to_string(b) + " has ref_count " +
                              std::to_string(pool_->ref_count(b)) + " but " +
                              std::to_string(holders[b]) + " holders");
    return ok_status();
}

} // namespace llmwb
