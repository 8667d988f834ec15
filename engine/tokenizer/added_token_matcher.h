// Finds added tokens (<|im_start|>, <s>, ...) in text the way Hugging Face tokenizers does by
// default: leftmost-longest matches, then each token's single_word / lstrip / rstrip flags.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/tokenizer/tokenizer_data.h"

namespace llmwb {

class AddedTokenMatcher {
  public:
    AddedTokenMatcher() = default;
    explicit AddedTokenMatcher(const std::vector<TokenizerData::AddedToken>& tokens);

    struct Piece {
        std::size_t begin, end; // byte range in the text
        std::int32_t id;        // -1: plain text to encode with the model
    };
    // Splits text into added-token matches and the plain text between them (empty plain
    // pieces are omitted).
    void split(std::string_view text, std::vector<Piece>& out) const;
    bool empty() const { return tokens_.empty(); }

  private:
    struct Node {
        std::vector<std::pair<unsigned char, std::int32_t>> children; // sorted by byte
        std::int32_t token = -1;                                      // index into tokens_
    };
    std::int32_t child(std::int32_t node, unsigned char b) const;
    std::vector<Node> nodes_;
    std::vector<TokenizerData::AddedToken> tokens_;
};

} // namespace llmwb
