// BlockPool and KvCacheManager: free-list order and O(1) operations, lazy LRU eviction of
// cached blocks, prefix hits that compare tokens, the last prompt token never served from the
// cache, copy-on-write for forks, resize, and randomised interleavings that must always leave
// consistent ref counts and return every block.
#include <QtTest>

#include <map>
#include <random>

#include "engine/serving/block_pool.h"
#include "engine/serving/kv_cache_manager.h"

using namespace llmwb;

namespace {

std::vector<int32_t> seq(int32_t first, int32_t n) {
    std::vector<int32_t> v;
    for (int32_t i = 0; i < n; ++i)
        v.push_back(first + i);
    return v;
}

} // namespace

class TestBlockPool : public QObject {
    Q_OBJECT

  private slots:
    void allocate_until_empty_then_does_not_fit() {
        BlockPool pool(4, 16);
        QCOMPARE(pool.num_free(), 4);
        std::vector<int32_t> got;
        for (int i = 0; i < 4; ++i) {
            auto b = pool.allocate();
            QVERIFY(b.has_value());
            got.push_back(*b);
        }
        QCOMPARE(got, (std::vector<int32_t>{0, 1, 2, 3}));
        QVERIFY(!pool.allocate().has_value());
        QVERIFY(!pool.allocate_n(1).has_value());
        QVERIFY(pool.check_invariants().ok());
        for (int32_t b : got)
            QCOMPARE(pool.ref_count(b), 1);
        pool.release(2);
        QCOMPARE(pool.num_free(), 1);
        QVERIFY(pool.in_free_list(2));
        QVERIFY(pool.check_invariants().ok());
        QVERIFY(!pool.allocate_n(2).has_value());
        QCOMPARE(pool.num_free(), 1); // a failed allocate_n takes nothing
    }

    void cached_blocks_are_evicted_least_recently_freed_first() {
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
        QCOMPARE(pool.num_cached(), 3);
        // Free tail first (2, 1, 0), then the plain block 3.
        pool.release(2);
        pool.release(1);
        pool.release(0);
        pool.release(3);
        QVERIFY(pool.check_invariants().ok());
        // Plain block first, then the chain tail before its head.
        QCOMPARE(pool.free_list(), (std::vector<int32_t>{3, 2, 1, 0}));
        QCOMPARE(pool.num_cached(), 3); // lazy: hashes survive the free
        QCOMPARE(*pool.allocate(), 3);
        QCOMPARE(pool.num_cached(), 3);
        QCOMPARE(*pool.allocate(), 2); // evicts block 2's hash
        QCOMPARE(pool.num_cached(), 2);
        QVERIFY(!pool.has_hash(2));
        QVERIFY(pool.has_hash(0) && pool.has_hash(1));
        QVERIFY(pool.check_invariants().ok());
    }

    void touch_takes_a_cached_block_out_of_the_middle() {
        BlockPool pool(5, 8);
        auto blocks = *pool.allocate_n(5);
        for (int32_t b : blocks)
            pool.release(b); // plain: each goes to the head
        QCOMPARE(pool.free_list(), (std::vector<int32_t>{4, 3, 2, 1, 0}));
        pool.touch(2);
        QCOMPARE(pool.ref_count(2), 1);
        QCOMPARE(pool.free_list(), (std::vector<int32_t>{4, 3, 1, 0}));
        pool.touch(2);
        QCOMPARE(pool.ref_count(2), 2);
        pool.release(2);
        QVERIFY(!pool.in_free_list(2));
        pool.release(2);
        QVERIFY(pool.in_free_list(2));
        QVERIFY(pool.check_invariants().ok());
    }

    void lookup_compares_tokens_and_parent() {
        BlockPool pool(2, 8);
        const int32_t b = *pool.allocate();
        auto toks = seq(5, 8);
        const uint64_t h = hash_block_tokens(0, toks, 7);
        pool.register_full_block(b, h, 0, toks);
        QCOMPARE(pool.lookup(h, 0, toks).value_or(-1), b);
        auto other = toks;
        other[3] = 99; // same hash forced, different tokens: no hit
        QVERIFY(!pool.lookup(h, 0, other).has_value());
        QVERIFY(!pool.lookup(h, 123, toks).has_value());
        QVERIFY(hash_block_tokens(0, toks, 7) != hash_block_tokens(0, toks, 8)); // extra key
        QVERIFY(hash_block_tokens(1, toks, 7) != hash_block_tokens(2, toks, 7)); // parent
        QVERIFY(hash_block_tokens(0, toks, 7) != hash_block_tokens(0, other, 7));
    }

    void prefix_hit_never_covers_the_last_token() {
        for (int32_t bs : {8, 16, 32}) {
            KvCacheManager m(16, bs, true);
            auto toks = seq(1, 3 * bs);
            QVERIFY(m.allocate_slots(1, toks.size(), 0, nullptr, nullptr));
            m.commit_computed(1, toks, static_cast<int64_t>(toks.size()));
            QCOMPARE(m.pool().num_cached(), 3);
            m.free(1);
            QCOMPARE(m.pool().num_used(), 0);
            // Exactly 3 blocks of prompt: only 2 may come from the cache.
            PrefixHit hit = m.find_cached_prefix(toks);
            QCOMPARE(hit.num_tokens, 2 * bs);
            // One more token: all 3.
            auto longer = toks;
            longer.push_back(7);
            QCOMPARE(m.find_cached_prefix(longer).num_tokens, 3 * bs);
            // A different first block: nothing (chained hashes).
            auto changed = longer;
            changed[0] = 999;
            QCOMPARE(m.find_cached_prefix(changed).num_tokens, 0);
            // Take the hit: the blocks leave the free list and get ref_count 1.
            QVERIFY(m.allocate_slots(2, longer.size(), hit.num_tokens, &hit, nullptr));
            auto blocks = m.blocks(2);
            QCOMPARE(blocks.size(), size_t(4));
            QCOMPARE(blocks[0], hit.blocks[0]);
            QCOMPARE(blocks[1], hit.blocks[1]);
            QVERIFY(m.check_consistency().ok());
            m.free(2);
            QVERIFY(m.check_consistency().ok());
            QCOMPARE(m.pool().num_free(), 16);
        }
    }

    void copy_on_write_for_a_fork() {
        KvCacheManager m(8, 8, true);
        auto toks = seq(1, 12); // 1.5 blocks
        QVERIFY(m.allocate_slots(1, 12, 0, nullptr, nullptr));
        m.commit_computed(1, toks, 12);
        m.fork(1, 2);
        auto a = std::vector<int32_t>(m.blocks(1).begin(), m.blocks(1).end());
        QCOMPARE(std::vector<int32_t>(m.blocks(2).begin(), m.blocks(2).end()), a);
        QCOMPARE(m.pool().ref_count(a[0]), 2);
        QCOMPARE(m.pool().ref_count(a[1]), 2);
        QVERIFY(m.check_consistency().ok());
        // Request 2 writes token 12 into the shared partial block 1: it gets a copy.
        std::vector<BlockCopy> copies;
        QVERIFY(m.allocate_slots(2, 13, 12, nullptr, &copies));
        QCOMPARE(copies.size(), size_t(1));
        QCOMPARE(copies[0].src, a[1]);
        QVERIFY(copies[0].dst != a[1]);
        QCOMPARE(m.blocks(2)[0], a[0]); // the full block stays shared
        QCOMPARE(m.blocks(2)[1], copies[0].dst);
        QCOMPARE(m.pool().ref_count(a[1]), 1);
        QCOMPARE(m.pool().ref_count(a[0]), 2);
        // Request 1 now owns its partial block alone: no copy.
        copies.clear();
        QVERIFY(m.allocate_slots(1, 13, 12, nullptr, &copies));
        QVERIFY(copies.empty());
        QCOMPARE(m.cow_copies(), int64_t(1));
        QVERIFY(m.check_consistency().ok());
        m.free(1);
        m.free(2);
        QCOMPARE(m.pool().num_free(), 8);
        QVERIFY(m.check_consistency().ok());
    }

    void allocation_failure_changes_nothing() {
        KvCacheManager m(3, 8, true);
        QVERIFY(m.allocate_slots(1, 16, 0, nullptr, nullptr));
        QVERIFY(!m.allocate_slots(2, 9, 0, nullptr, nullptr)); // needs 2, 1 free
        QVERIFY(!m.has_table(2));
        QVERIFY(!m.allocate_slots(1, 25, 16, nullptr, nullptr)); // needs 2 more
        QCOMPARE(m.blocks(1).size(), size_t(2));
        QVERIFY(m.allocate_slots(1, 24, 16, nullptr, nullptr));
        QCOMPARE(m.pool().num_free(), 0);
        QVERIFY(m.check_consistency().ok());
    }

    void resize_renumbers_live_blocks() {
        KvCacheManager m(16, 8, true);
        auto toks = seq(1, 20);
        for (RequestId id : {1, 2, 3})
            QVERIFY(m.allocate_slots(id, 20, 0, nullptr, nullptr));
        m.commit_computed(2, toks, 20);
        m.free(1); // leaves holes at low ids
        m.fork(3, 4);
        const int32_t used = m.pool().num_used();
        QCOMPARE(used, 6);
        std::vector<BlockCopy> moves;
        m.resize(6, &moves);
        QCOMPARE(m.pool().num_blocks(), 6);
        QCOMPARE(m.pool().num_free(), 0);
        QCOMPARE(moves.size(), size_t(6)); // shared blocks move once
        QVERIFY(m.check_consistency().ok());
        QCOMPARE(m.blocks(3).size(), size_t(3));
        QCOMPARE(std::vector<int32_t>(m.blocks(3).begin(), m.blocks(3).end()),
                 std::vector<int32_t>(m.blocks(4).begin(), m.blocks(4).end()));
        QCOMPARE(m.pool().num_cached(), 2); // request 2's two full blocks keep their hashes
        m.resize(10, &moves);
        QCOMPARE(m.pool().num_free(), 4);
        QVERIFY(m.check_consistency().ok());
    }

    // Random add / grow / commit / fork / free sequences over small pools.
    void randomized_interleavings_keep_the_pool_consistent() {
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
                    QVERIFY(hit.num_tokens < n);
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
                            QVERIFY(c.src != c.dst);
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
                QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
                // Every live request has room for its tokens.
                for (const auto& [id, toks] : live)
                    QVERIFY(static_cast<int64_t>(m.blocks(id).size()) * bs >=
                            static_cast<int64_t>(toks.size()));
            }
            for (const auto& [id, toks] : live)
                m.free(id);
            QCOMPARE(m.pool().num_free(), nblocks);
            QCOMPARE(m.num_requests(), 0);
            QVERIFY(m.check_consistency().ok());
        }
    }
};

QTEST_APPLESS_MAIN(TestBlockPool)
#include "test_block_pool.moc"
