// The BPE model of Hugging Face tokenizers: a vocabulary, merges by rank, and the merge loop
// that turns one pre-tokenized word into ids (lowest-ranked adjacent pair first, leftmost on
// ties), with byte fallback / unk for SentencePiece and a bounded per-word cache.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/tokenizer/tokenizer_data.h"
#include "engine/util/result.h"

namespace llmwb {

struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenIdMap = std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>>;

class BpeModel {
  public:
    struct Options {
        bool byte_level = false;    // words are raw bytes, mapped through the GPT-2 table
        bool byte_fallback = false; // SentencePiece: <0xNN> for characters not in the vocab
        bool fuse_unk = false;
        bool ignore_merges = false; // a word that is a vocab entry is that one token
        std::int32_t unk_id = -1;
    };
    // `vocab` maps model-vocab strings to ids. Errors name the first bad merge.
    static Result<std::unique_ptr<BpeModel>> create(const TokenizerData& data, TokenIdMap vocab,
                                                    Options options);

    // Appends the ids of one word (raw bytes for byte-level, "▁"-text for SentencePiece).
    void encode_word(std::string_view word, std::vector<std::int32_t>& out) const;

    std::int32_t find(std::string_view token) const {
        auto it = vocab_.find(token);
        return it == vocab_.end() ? -1 : it->second;
    }

  private:
    BpeModel() = default;
    void initial_symbols(std::string_view word, std::vector<std::int32_t>& ids) const;
    void merge(std::vector<std::int32_t>& ids) const;

    struct Merge {
        std::int32_t rank;
        std::int32_t new_id;
    };
    static std::uint64_t pair_key(std::int32_t a, std::int32_t b) {
        return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) |
               static_cast<std::uint32_t>(b);
    }

    Options options_;
    TokenIdMap vocab_;
    std::unordered_map<std::uint64_t, Merge> merges_;
    std::array<std::int32_t, 256> byte_ids_{}; // byte-level: id of each byte's character;
                                               // SentencePiece: id of <0xNN> (-1 if absent)

    static constexpr std::size_t kCacheCapacity = 1 << 16;
    static constexpr std::size_t kMaxCachedWordBytes = 256;
    mutable std::mutex cache_mutex_;
    mutable std::unordered_map<std::string, std::vector<std::int32_t>, StringHash, std::equal_to<>>
        cache_;
};

} // namespace llmwb
