#include "engine/tokenizer/bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "engine/tokenizer/byte_level.h"
#include "engine/tokenizer/utf8.h"

namespace llmwb {

Result<std::unique_ptr<BpeModel>> BpeModel::create(const TokenizerData& data, TokenIdMap vocab,
                                                   Options options) {
    std::unique_ptr<BpeModel> m(new BpeModel());
    m->options_ = options;
    m->vocab_ = std::move(vocab);
    m->byte_ids_.fill(-1);
    if (options.byte_level) {
        const auto& table = ByteLevelTable::instance();
        for (int b = 0; b < 256; ++b) {
            const std::int32_t id = m->find(table.encode_byte(static_cast<std::uint8_t>(b)));
            if (id < 0)
                return make_error("tokenizer: byte-level vocabulary lacks the token for byte " +
                                  std::to_string(b));
            m->byte_ids_[static_cast<std::size_t>(b)] = id;
        }
    } else {
        for (int b = 0; b < 256; ++b) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            m->byte_ids_[static_cast<std::size_t>(b)] = m->find(name);
        }
    }
    m->merges_.reserve(data.merges.size());
    std::string joined;
    for (std::size_t rank = 0; rank < data.merges.size(); ++rank) {
        const auto& [a, b] = data.merges[rank];
        const std::int32_t ia = m->find(a), ib = m->find(b);
        joined.assign(a).append(b);
        const std::int32_t merged = m->find(joined);
        if (ia < 0 || ib < 0 || merged < 0)
            return make_error("tokenizer: merge " + std::to_string(rank) + " ('" + a + "' '" + b +
                              "') refers to a token that is not in the vocabulary");
        // A later duplicate overrides an earlier one, as in Hugging Face tokenizers.
        m->merges_[pair_key(ia, ib)] = Merge{static_cast<std::int32_t>(rank), merged};
    }
    return m;
}

void BpeModel::initial_symbols(std::string_view word, std::vector<std::int32_t>& ids) const {
    if (options_.byte_level) {
        for (char c : word)
            ids.push_back(byte_ids_[static_cast<std::uint8_t>(c)]);
        return;
    }
    bool last_unk = false;
    for (std::size_t i = 0; i < word.size();) {
        const utf8::Decoded d = utf8::decode(word, i);
        const std::string_view ch = word.substr(i, d.length);
        i += d.length;
        const std::int32_t id = d.cp == utf8::kInvalid ? -1 : find(ch);
        if (id >= 0) {
            ids.push_back(id);
            last_unk = false;
            continue;
        }
        if (options_.byte_fallback) {
            bool all = true;
            for (char c : ch)
                all = all && byte_ids_[static_cast<std::uint8_t>(c)] >= 0;
            if (all) {
                for (char c : ch)
                    ids.push_back(byte_ids_[static_cast<std::uint8_t>(c)]);
                last_unk = false;
                continue;
            }
        }
        if (options_.unk_id < 0)
            continue; // nothing to stand for it
        if (!(options_.fuse_unk && last_unk))
            ids.push_back(options_.unk_id);
        last_unk = true;
    }
}

void BpeModel::merge(std::vector<std::int32_t>& ids) const {
    const std::size_t n = ids.size();
    if (n < 2)
        return;
    struct Entry {
        std::int32_t rank, pos, new_id;
        bool operator>(const Entry& o) const {
            return rank != o.rank ? rank > o.rank : pos > o.pos;
        }
    };
    // Per-thread scratch buffers: words are short and many, allocations would dominate.
    thread_local std::vector<std::int32_t> prev, next;
    thread_local std::vector<char> alive;
    thread_local std::vector<Entry> heap;
    prev.resize(n);
    next.resize(n);
    alive.assign(n, 1);
    heap.clear();
    for (std::size_t i = 0; i < n; ++i) {
        prev[i] = static_cast<std::int32_t>(i) - 1;
        next[i] = i + 1 < n ? static_cast<std::int32_t>(i + 1) : -1;
    }
    const auto greater = std::greater<>{};
    auto push_pair = [&](std::int32_t pos) {
        const std::int32_t nx = next[static_cast<std::size_t>(pos)];
        if (nx < 0)
            return;
        auto it = merges_.find(
            pair_key(ids[static_cast<std::size_t>(pos)], ids[static_cast<std::size_t>(nx)]));
        if (it == merges_.end())
            return;
        heap.push_back({it->second.rank, pos, it->second.new_id});
        std::push_heap(heap.begin(), heap.end(), greater);
    };
    for (std::size_t i = 0; i + 1 < n; ++i)
        push_pair(static_cast<std::int32_t>(i));
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), greater);
        const Entry top = heap.back();
        heap.pop_back();
        const auto pos = static_cast<std::size_t>(top.pos);
        if (!alive[pos] || next[pos] < 0)
            continue;
        const auto nx = static_cast<std::size_t>(next[pos]);
        // Skip entries made stale by an earlier merge (same check as Hugging Face).
        auto it = merges_.find(pair_key(ids[pos], ids[nx]));
        if (it == merges_.end() || it->second.new_id != top.new_id)
            continue;
        ids[pos] = top.new_id;
        alive[nx] = 0;
        next[pos] = next[nx];
        if (next[nx] >= 0)
            prev[static_cast<std::size_t>(next[nx])] = static_cast<std::int32_t>(pos);
        if (prev[pos] >= 0)
            push_pair(prev[pos]);
        push_pair(static_cast<std::int32_t>(pos));
    }
    std::size_t w = 0;
    for (std::int32_t i = 0; i >= 0; i = next[static_cast<std::size_t>(i)])
        ids[w++] = ids[static_cast<std::size_t>(i)];
    ids.resize(w);
}

void BpeModel::encode_word(std::string_view word, std::vector<std::int32_t>& out) const {
    if (word.empty())
        return;
    const bool cacheable = word.size() <= kMaxCachedWordBytes;
    if (cacheable) {
        std::lock_guard lock(cache_mutex_);
        auto it = cache_.find(word);
        if (it != cache_.end()) {
            out.insert(out.end(), it->second.begin(), it->second.end());
            return;
        }
    }
    std::vector<std::int32_t> ids;
    bool whole = false;
    if (options_.ignore_merges) {
        std::int32_t id = -1;
        if (options_.byte_level) {
            std::string mapped;
            ByteLevelTable::instance().encode(word, mapped);
            id = find(mapped);
        } else {
            id = find(word);
        }
        if (id >= 0) {
            ids.push_back(id);
            whole = true;
        }
    }
    if (!whole) {
        ids.reserve(word.size());
        initial_symbols(word, ids);
        merge(ids);
    }
    out.insert(out.end(), ids.begin(), ids.end());
    if (cacheable) {
        std::lock_guard lock(cache_mutex_);
        if (cache_.size() >= kCacheCapacity)
            cache_.clear();
        cache_.emplace(std::string(word), std::move(ids));
    }
}

} // namespace llmwb
