// Tokenizer: text <-> token ids with Hugging Face `tokenizers` semantics (ids equal to HF's).
//
//   encode: added tokens are found in the raw text first (leftmost-longest, honouring
//   lstrip/rstrip/single_word); each plain segment between them is normalized (NFC; the
//   SentencePiece "▁" prefix and space replacement), pre-tokenized (GPT-2 / Llama 3 / Qwen 2
//   splitter for byte-level BPE; Metaspace words) and BPE-merged by merge rank; then bos/eos as
//   the post-processor says when add_special_tokens is true. Tokenizers the flags cannot
//   express run the general pipeline instead (normalizer.h, pre_tokenizer_sequence.h).
//   decode: per the tokenizer's decoder (GPT-2 byte table; or "▁" -> " ", <0xNN> byte fallback
//   and the leading-space strip); the result is valid UTF-8 (ill-formed bytes become U+FFFD as
//   Hugging Face does). StreamingDecoder (streaming_decoder.h) produces the same text in chunks.
//
// A Tokenizer is immutable after create() and safe to use from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/tokenizer_data.h"
#include "engine/util/result.h"

namespace llmwb {

class AddedTokenMatcher;
class BpeModel;
class Normalizer;
class PreTokenizer;
class PreTokenizerSequence;

class Tokenizer {
  public:
    // Validates the data (ids in range, merges refer to vocab entries, known pre-tokenizer);
    // errors are one line naming the problem.
    static Result<std::unique_ptr<Tokenizer>> create(const TokenizerData& data);
    ~Tokenizer();

    std::vector<std::int32_t> encode(std::string_view text, bool add_special_tokens = true) const;
    std::string decode(std::span<const std::int32_t> ids, bool skip_special_tokens = false) const;
    // Raw bytes this token stands for (no leading-space strip; "" for an unknown id).
    std::string token_bytes(std::int32_t id) const;

    std::int32_t vocab_size() const { return static_cast<std::int32_t>(data_.tokens.size()); }
    std::int32_t bos_id() const { return data_.bos_id; }
    std::int32_t eos_id() const { return data_.eos_id; }
    bool is_special(std::int32_t id) const;
    // eos plus the end-of-turn ids, without duplicates.
    std::vector<std::int32_t> stop_ids() const;
    const TokenizerData& data() const { return data_; }

    // The settings in effect after defaults were applied (see TokenizerData).
    bool uses_nfc() const { return nfc_; }
    bool uses_byte_fallback() const { return byte_fallback_; }
    const TokenizerData::Decoder& decoder() const { return decoder_; }
    // The text one token contributes before decoder-wide steps (for the decoders).
    const std::string& token_text(std::int32_t id) const;
    bool valid_id(std::int32_t id) const { return id >= 0 && id < vocab_size(); }

  private:
    Tokenizer();
    void encode_plain(std::string_view text, bool at_text_start,
                      std::vector<std::int32_t>& out) const;
    void encode_normalized(std::string_view text, bool at_text_start,
                           std::vector<std::int32_t>& out) const;

    TokenizerData data_;
    bool byte_level_ = true;
    bool nfc_ = false;
    bool byte_fallback_ = false;
    TokenizerData::Decoder decoder_;
    std::vector<char> special_;                           // per id
    std::unique_ptr<AddedTokenMatcher> raw_added_;        // added tokens with normalized=false
    std::unique_ptr<AddedTokenMatcher> normalized_added_; // normalized=true (after NFC)
    std::unique_ptr<BpeModel> model_;
    std::shared_ptr<const PreTokenizer> pre_tokenizer_; // byte-level only; null = no split
    // The general pipeline (TokenizerData::pre_tokenizer_steps, or a GGUF pre value that
    // stands for several steps); when set, used instead of the flags above.
    std::unique_ptr<Normalizer> normalizer_;
    std::unique_ptr<PreTokenizerSequence> sequence_;
};

} // namespace llmwb
