// BlockPool and KvCacheManager: free-list order and O(1) operations, lazy LRU eviction of
// cached blocks, prefix hits that compare tokens, the last prompt token never served from the
// cache, copy-on-write for forks, resize, and randomised interleavings that must always leave
// consistent ref counts and return every block.
#include <map>
#include <random>

#include "engine/serving/block_pool.h"
#include "engine/serving/kv_cache_manager.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

std::vector<int32_t> seq(int32_t first, int32_t n) {
    std::vector<int32_t> v;
    for (int32_t i = 0; i < n; ++i)
        v.push_back(first + i);
    return v;
}

} // namespace

MT_TEST(allocate_until_empty_then_does_not_fit) {
    BlockPool pool(4, 16);
    MT_REQUIRE_COMPARE(pool.num_free(), 4);
    std::vector<int32_t> got;
    for (int i = 0; i < 4; ++i) {
        auto b = pool.allocate();
        MT_REQUIRE(b.has_value());
        got.push_back(*b);
    }
    MT_REQUIRE_COMPARE(got, (std::vector<int32_t>{0, 1, 2, 3}));
    MT_REQUIRE(!pool.allocate().has_value());
    MT_REQUIRE(!pool.allocate_n(1).has_value());
    MT_REQUIRE(pool.check_invariants().ok());
    for (int32_t b : got)
        MT_REQUIRE_COMPARE(pool.ref_count(b), 1);
    pool.release(2);
    MT_REQUIRE_COMPARE(pool.num_free(), 1);
    MT_REQUIRE(pool.in_free_list(2));
    MT_REQUIRE(pool.check_invariants().ok());
    MT_REQUIRE(!pool.allocate_n(2).has_value());
    MT_REQUIRE_COMPARE(pool.num_free(), 1); // a failed allocate_n takes nothing
}

MT_TEST(cached_blocks_are_evicted_least_recently_freed_first) {
    BlockPool pool(4, 8);
    auto blocks = *pool.allocate_n(4);
    // Blocks 0..2 become cached; 3 stays plain.
    uint64_t parent = 0;
    for (int i = 0; i < 3; ++i) {
        auto toks = seq(100 + i * 8, 8);
        const uint64_t h = hash_block_tokens(parent, toks, 0);
        pool.register_full_block(blocks[i], h, parent, toks);
        parent = h;
    }
    MT_REQUIRE_COMPARE(pool.num_cached(), 3);
    // Free tail first (2, 1, 0), then the plain block 3.
    pool.release(2);
    pool.release(1);
    pool.release(0);
    pool.release(3);
    MT_REQUIRE(pool.check_invariants().ok());
    // Plain block first, then the chain tail before its head.
    MT_REQUIRE_COMPARE(pool.free_list(), (std::vector<int32_t>{3, 2, 1, 0}));
    MT_REQUIRE_COMPARE(pool.num_cached(), 3); // lazy: hashes survive the free
    MT_REQUIRE_COMPARE(*pool.allocate(), 3);
    MT_REQUIRE_COMPARE(pool.num_cached(), 3);
    MT_REQUIRE_COMPARE(*pool.allocate(), 2); // evicts block 2's hash
    MT_REQUIRE_COMPARE(pool.num_cached(), 2);
    MT_REQUIRE(!pool.has_hash(2));
    MT_REQUIRE(pool.has_hash(0) && pool.has_hash(1));
    MT_REQUIRE(pool.check_invariants().ok());
}

MT_TEST(touch_takes_a_cached_block_out_of_the_middle) {
    BlockPool pool(5, 8);
    auto blocks = *pool.allocate_n(5);
    for (int32_t b : blocks)
        pool.release(b); // plain: each goes to the head
    MT_REQUIRE_COMPARE(pool.free_list(), (std::vector<int32_t>{4, 3, 2, 1, 0}));
    pool.touch(2);
    MT_REQUIRE_COMPARE(pool.ref_count(2), 1);
    MT_REQUIRE_COMPARE(pool.free_list(), (std::vector<int32_t>{4, 3, 1, 0}));
    pool.touch(2);
    MT_REQUIRE_COMPARE(pool.ref_count(2), 2);
    pool.release(2);
    MT_REQUIRE(!pool.in_free_list(2));
    pool.release(2);
    MT_REQUIRE(pool.in_free_list(2));
    MT_REQUIRE(pool.check_invariants().ok());
}

MT_TEST(lookup_compares_tokens_and_parent) {
    BlockPool pool(2, 8);
    const int32_t b = *pool.allocate();
    auto toks = seq(5, 8);
    const uint64_t h = hash_block_tokens(0, toks, 7);
    pool.register_full_block(b, h, 0, toks);
    MT_REQUIRE_COMPARE(pool.lookup(h, 0, toks).value_or(-1), b);
    auto other = toks;
    other[3] = 99; // same hash forced, different tokens: no hit
    MT_REQUIRE(!pool.lookup(h, 0, other).has_value());
    MT_REQUIRE(!pool.lookup(h, 123, toks).has_value());
    MT_REQUIRE(hash_block_tokens(0, toks, 7) != hash_block_tokens(0, toks, 8)); // extra key
    MT_REQUIRE(hash_block_tokens(1, toks, 7) != hash_block_tokens(2, toks, 7)); // parent
    MT_REQUIRE(hash_block_tokens(0, toks, 7) != hash_block_tokens(0, other, 7));
}

MT_TEST(prefix_hit_never_covers_the_last_token) {
    for (int32_t bs : {8, 16, 32}) {
        KvCacheManager m(16, bs, true);
        auto toks = seq(1, 3 * bs);
        MT_REQUIRE(m.allocate_slots(1, toks.size(), 0, nullptr, nullptr));
        m.commit_computed(1, toks, static_cast<int64_t>(toks.size()));
        MT_REQUIRE_COMPARE(m.pool().num_cached(), 3);
        m.free(1);
        MT_REQUIRE_COMPARE(m.pool().num_used(), 0);
        // Exactly 3 blocks of prompt: only 2 may come from the cache.
        PrefixHit hit = m.find_cached_prefix(toks);
        MT_REQUIRE_COMPARE(hit.num_tokens, 2 * bs);
        // One more token: all 3.
        auto longer = toks;
        longer.push_back(7);
        MT_REQUIRE_COMPARE(m.find_cached_prefix(longer).num_tokens, 3 * bs);
        // A different first block: nothing (chained hashes).
        auto changed = longer;
        changed[0] = 999;
        MT_REQUIRE_COMPARE(m.find_cached_prefix(changed).num_tokens, 0);
        // Take the hit: the blocks leave the free list and get ref_count 1.
        MT_REQUIRE(m.allocate_slots(2, longer.size(), hit.num_tokens, &hit, nullptr));
        auto blocks = m.blocks(2);
        MT_REQUIRE_COMPARE(blocks.size(), size_t(4));
        MT_REQUIRE_COMPARE(blocks[0], hit.blocks[0]);
        MT_REQUIRE_COMPARE(blocks[1], hit.blocks[1]);
        MT_REQUIRE(m.check_consistency().ok());
        m.free(2);
        MT_REQUIRE(m.check_consistency().ok());
        MT_REQUIRE_COMPARE(m.pool().num_free(), 16);
    }
}

MT_TEST(copy_on_write_for_a_fork) {
    KvCacheManager m(8, 8, true);
    auto toks = seq(1, 12); // 1.5 blocks
    MT_REQUIRE(m.allocate_slots(1, 12, 0, nullptr, nullptr));
    m.commit_computed(1, toks, 12);
    m.fork(1, 2);
    auto a = std::vector<int32_t>(m.blocks(1).begin(), m.blocks(1).end());
    MT_REQUIRE_COMPARE(std::vector<int32_t>(m.blocks(2).begin(), m.blocks(2).end()), a);
    MT_REQUIRE_COMPARE(m.pool().ref_count(a[0]), 2);
    MT_REQUIRE_COMPARE(m.pool().ref_count(a[1]), 2);
    MT_REQUIRE(m.check_consistency().ok());
    // Request 2 writes token 12 into the shared partial block 1: it gets a copy.
    std::vector<BlockCopy> copies;
    MT_REQUIRE(m.allocate_slots(2, 13, 12, nullptr, &copies));
    MT_REQUIRE_COMPARE(copies.size(), size_t(1));
    MT_REQUIRE_COMPARE(copies[0].src, a[1]);
    MT_REQUIRE(copies[0].dst != a[1]);
    MT_REQUIRE_COMPARE(m.blocks(2)[0], a[0]); // the full block stays shared
    MT_REQUIRE_COMPARE(m.blocks(2)[1], copies[0].dst);
    MT_REQUIRE_COMPARE(m.pool().ref_count(a[1]), 1);
    MT_REQUIRE_COMPARE(m.pool().ref_count(a[0]), 2);
    // Request 1 now owns its partial block alone: no copy.
    copies.clear();
    MT_REQUIRE(m.allocate_slots(1, 13, 12, nullptr, &copies));
    MT_REQUIRE(copies.empty());
    MT_REQUIRE_COMPARE(m.cow_copies(), int64_t(1));
    MT_REQUIRE(m.check_consistency().ok());
    m.free(1);
    m.free(2);
    MT_REQUIRE_COMPARE(m.pool().num_free(), 8);
    MT_REQUIRE(m.check_consistency().ok());
}

MT_TEST(allocation_failure_changes_nothing) {
    KvCacheManager m(3, 8, true);
    MT_REQUIRE(m.allocate_slots(1, 16, 0, nullptr, nullptr));
    MT_REQUIRE(!m.allocate_slots(2, 9, 0, nullptr, nullptr)); // needs 2, 1 free
    MT_REQUIRE(!m.has_table(2));
    MT_REQUIRE(!m.allocate_slots(1, 25, 16, nullptr, nullptr)); // needs 2 more
    MT_REQUIRE_COMPARE(m.blocks(1).size(), size_t(2));
    MT_REQUIRE(m.allocate_slots(1, 24, 16, nullptr, nullptr));
    MT_REQUIRE_COMPARE(m.pool().num_free(), 0);
    MT_REQUIRE(m.check_consistency().ok());
}

MT_TEST(resize_renumbers_live_blocks) {
    KvCacheManager m(16, 8, true);
    auto toks = seq(1, 20);
    for (RequestId id : {1, 2, 3})
        MT_REQUIRE(m.allocate_slots(id, 20, 0, nullptr, nullptr));
    m.commit_computed(2, toks, 20);
    m.free(1); // leaves holes at low ids
    m.fork(3, 4);
    const int32_t used = m.pool().num_used();
    MT_REQUIRE_COMPARE(used, 6);
    std::vector<BlockCopy> moves;
    m.resize(6, &moves);
    MT_REQUIRE_COMPARE(m.pool().num_blocks(), 6);
    MT_REQUIRE_COMPARE(m.pool().num_free(), 0);
    MT_REQUIRE_COMPARE(moves.size(), size_t(6)); // shared blocks move once
    MT_REQUIRE(m.check_consistency().ok());
    MT_REQUIRE_COMPARE(m.blocks(3).size(), size_t(3));
    MT_REQUIRE_COMPARE(std::vector<int32_t>(m.blocks(3).begin(), m.blocks(3).end()),
                       std::vector<int32_t>(m.blocks(4).begin(), m.blocks(4).end()));
    MT_REQUIRE_COMPARE(m.pool().num_cached(), 2); // request 2's two full blocks keep their hashes
    m.resize(10, &moves);
    MT_REQUIRE_COMPARE(m.pool().num_free(), 4);
    MT_REQUIRE(m.check_consistency().ok());
}

// Random add / grow / commit / fork / free sequences over small pools.
MT_TEST(randomized_interleavings_keep_the_pool_consistent) {
    std::mt19937 rng(12345);
    for (int round = 0; round < 60; ++round) {
        const int32_t bs = std::array<int32_t, 3>{8, 16, 32}[round % 3];
        const int32_t nblocks = 4 + static_cast<int32_t>(rng() % 24);
        KvCacheManager m(nblocks, bs, round % 4 != 0);
        std::map<RequestId, std::vector<int32_t>> live; // id -> tokens with slots
        RequestId next = 1;
        for (int op = 0; op < 300; ++op) {
            const int kind = static_cast<int>(rng() % 10);
            if (kind < 3 || live.empty()) { // admit a request (shared prefixes common)
                std::vector<int32_t> toks;
                const int32_t n = 1 + static_cast<int32_t>(rng() % (3 * bs));
                const int32_t family = static_cast<int32_t>(rng() % 3);
                for (int32_t i = 0; i < n; ++i)
                    toks.push_back(family * 1000 + i);
                PrefixHit hit = m.find_cached_prefix(toks);
                MT_REQUIRE(hit.num_tokens < n);
                if (m.allocate_slots(next, n, hit.num_tokens, &hit, nullptr)) {
                    m.commit_computed(next, toks, n);
                    live[next] = toks;
                }
                ++next;
            } else if (kind < 6) { // grow a random live request by 1..bs tokens
                auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
                auto& toks = it->second;
                const int32_t add = 1 + static_cast<int32_t>(rng() % bs);
                const auto old = static_cast<int64_t>(toks.size());
                std::vector<BlockCopy> copies;
                if (m.allocate_slots(it->first, old + add, old, nullptr, &copies)) {
                    for (int32_t i = 0; i < add; ++i)
                        toks.push_back(static_cast<int32_t>(rng() % 50));
                    m.commit_computed(it->first, toks, static_cast<int64_t>(toks.size()));
                    for (const BlockCopy& c : copies)
                        MT_REQUIRE(c.src != c.dst);
                }
            } else if (kind < 7) { // fork
                auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
                m.fork(it->first, next);
                live[next++] = it->second;
            } else { // finish / abort / preempt
                auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
                m.free(it->first);
                live.erase(it);
            }
            Status st = m.check_consistency();
            MT_REQUIRE_MSG(st.ok(), "%s", st.ok() ? "" : st.message().c_str());
            // Every live request has room for its tokens.
            for (const auto& [id, toks] : live)
                MT_REQUIRE(static_cast<int64_t>(m.blocks(id).size()) * bs >=
                           static_cast<int64_t>(toks.size()));
        }
        for (const auto& [id, toks] : live)
            m.free(id);
        MT_REQUIRE_COMPARE(m.pool().num_free(), nblocks);
        MT_REQUIRE_COMPARE(m.num_requests(), 0);
        MT_REQUIRE(m.check_consistency().ok());
    }
}

MINI_TEST_MAIN()
