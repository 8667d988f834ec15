#include "engine/serving/block_pool.h"

#include <algorithm>
#include <cassert>

#include "engine/runtime/kv_block_size.h"
#include <string>

namespace llmwb {

namespace {

// 64-bit mixing (a splitmix64-style finalizer) over a running state.
inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

} // namespace

uint64_t hash_block_tokens(uint64_t parent_hash, std::span<const int32_t> tokens,
                           uint64_t extra_key) {
    uint64_t h = mix64(parent_hash ^ 0x9e3779b97f4a7c15ULL);
    h = mix64(h ^ extra_key);
    for (int32_t t : tokens)
        h = mix64(h + static_cast<uint32_t>(t) + 0x632be59bd9b4e019ULL);
    h = mix64(h ^ tokens.size());
    return h == 0 ? 1 : h; // 0 is reserved for "no parent"
}

BlockPool::BlockPool(int32_t num_blocks, int32_t block_size) : block_size_(block_size) {
    assert(num_blocks >= 1);
    assert(is_kv_block_size(block_size));
    const auto n = static_cast<size_t>(num_blocks);
    ref_.assign(n, 0);
    prev_.assign(n, kNone);
    next_.assign(n, kNone);
    linked_.assign(n, 0);
    has_hash_.assign(n, 0);
    hash_.assign(n, 0);
    parent_hash_.assign(n, 0);
    tokens_.assign(n * static_cast<size_t>(block_size), 0);
    for (int32_t b = 0; b < num_blocks; ++b)
        list_push_back(b);
}

bool BlockPool::in_free_list(int32_t block) const {
    return linked_[block] != 0;
}

void BlockPool::list_remove(int32_t b) {
    assert(linked_[b]);
    const int32_t p = prev_[b], n = next_[b];
    if (p != kNone)
        next_[p] = n;
    else
        head_ = n;
    if (n != kNone)
        prev_[n] = p;
    else
        tail_ = p;
    prev_[b] = next_[b] = kNone;
    linked_[b] = 0;
    --num_free_;
}

void BlockPool::list_push_back(int32_t b) {
    assert(!linked_[b]);
    prev_[b] = tail_;
    next_[b] = kNone;
    if (tail_ != kNone)
        next_[tail_] = b;
    else
        head_ = b;
    tail_ = b;
    linked_[b] = 1;
    ++num_free_;
}

void BlockPool::list_push_front(int32_t b) {
    assert(!linked_[b]);
    prev_[b] = kNone;
    next_[b] = head_;
    if (head_ != kNone)
        prev_[head_] = b;
    else
        tail_ = b;
    head_ = b;
    linked_[b] = 1;
    ++num_free_;
}

void BlockPool::evict(int32_t b) {
    if (!has_hash_[b])
        return;
    auto it = cached_.find(hash_[b]);
    if (it != cached_.end() && it->second == b)
        cached_.erase(it);
    has_hash_[b] = 0;
    hash_[b] = parent_hash_[b] = 0;
}

std::optional<int32_t> BlockPool::allocate() {
    if (head_ == kNone)
        return std::nullopt;
    const int32_t b = head_;
    list_remove(b);
    evict(b);
    ref_[b] = 1;
    return b;
}

std::optional<std::vector<int32_t>> BlockPool::allocate_n(int32_t n) {
    if (n < 0 || n > num_free_)
        return std::nullopt;
    std::vector<int32_t> out;
    out.reserve(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i)
        out.push_back(*allocate());
    return out;
}

void BlockPool::touch(int32_t block) {
    if (ref_[block] == 0)
        list_remove(block);
    ++ref_[block];
}

void BlockPool::release(int32_t block) {
    assert(ref_[block] > 0);
    if (--ref_[block] > 0)
        return;
    if (has_hash_[block])
        list_push_back(block);
    else
        list_push_front(block);
}

std::optional<int32_t> BlockPool::lookup(uint64_t hash, uint64_t parent_hash,
                                         std::span<const int32_t> tokens) const {
    auto it = cached_.find(hash);
    if (it == cached_.end())
        return std::nullopt;
    const int32_t b = it->second;
    if (parent_hash_[b] != parent_hash || tokens.size() != static_cast<size_t>(block_size_))
        return std::nullopt;
    const int32_t* stored = tokens_.data() + static_cast<size_t>(b) * block_size_;
    if (!std::equal(tokens.begin(), tokens.end(), stored))
        return std::nullopt;
    return b;
}

void BlockPool::register_full_block(int32_t block, uint64_t hash, uint64_t parent_hash,
                                    std::span<const int32_t> tokens) {
    assert(tokens.size() == static_cast<size_t>(block_size_));
    if (has_hash_[block] || cached_.count(hash))
        return;
    cached_.emplace(hash, block);
    has_hash_[block] = 1;
    hash_[block] = hash;
    parent_hash_[block] = parent_hash;
    std::copy(tokens.begin(), tokens.end(),
              tokens_.begin() + static_cast<ptrdiff_t>(block) * block_size_);
}

std::vector<int32_t> BlockPool::free_list() const {
    std::vector<int32_t> out;
    out.reserve(static_cast<size_t>(num_free_));
    for (int32_t b = head_; b != kNone; b = next_[b])
        out.push_back(b);
    return out;
}

Status BlockPool::check_invariants() const {
    auto err = [](const std::string& m) { return Status(make_error("BlockPool: " + m)); };
    int32_t count = 0, prev = kNone;
    std::vector<uint8_t> seen(ref_.size(), 0);
    for (int32_t b = head_; b != kNone; b = next_[b]) {
        if (b < 0 || b >= num_blocks())
            return err("free list holds bad id " + std::to_string(b));
        if (seen[b])
            return err("free list cycles at block " + std::to_string(b));
        seen[b] = 1;
        if (prev_[b] != prev)
            return err("broken prev link at block " + std::to_string(b));
        if (!linked_[b])
            return err("listed block " + std::to_string(b) + " not marked linked");
        if (ref_[b] != 0)
            return err("free block " + std::to_string(b) + " has ref_count " +
                       std::to_string(ref_[b]));
        prev = b;
        ++count;
    }
    if (tail_ != prev)
        return err("tail does not end the list");
    if (count != num_free_)
        return err("num_free " + std::to_string(num_free_) + " but " + std::to_string(count) +
                   " listed");
    int32_t hashed = 0;
    for (int32_t b = 0; b < num_blocks(); ++b) {
        if (ref_[b] < 0)
            return err("negative ref_count at block " + std::to_string(b));
        if ((ref_[b] == 0) != (seen[b] != 0))
            return err("block " + std::to_string(b) + ": ref_count " + std::to_string(ref_[b]) +
                       (seen[b] ? " but in the free list" : " but not in the free list"));
        if (has_hash_[b]) {
            ++hashed;
            auto it = cached_.find(hash_[b]);
            if (it == cached_.end() || it->second != b)
                return err("hashed block " + std::to_string(b) + " missing from the cache map");
        }
    }
    if (hashed != static_cast<int32_t>(cached_.size()))
        return err("cache map has entries for blocks without a hash");
    return ok_status();
}

} // namespace llmwb
