// Incremental decoding of token ids into text, shared by Tokenizer::decode and
// StreamingDecoder so that streamed chunks always concatenate to exactly decode(all ids).
#pragma once

#include <cstdint>
#include <string>

namespace llmwb {

class Tokenizer;

class TextDecoder {
  public:
    TextDecoder(const Tokenizer& tokenizer, bool skip_special_tokens);

    // Appends to `out` the text that can no longer change after `id` (complete UTF-8 only).
    void push(std::int32_t id, std::string& out);
    // Appends everything still held back (incomplete sequences become U+FFFD).
    void finish(std::string& out);

  private:
    void flush_byte_run(std::string& out);
    void emit_text(std::string_view text, std::string& out);
    void emit_complete_utf8(std::string& out, bool final);

    const Tokenizer& tok_;
    bool skip_special_;
    std::size_t token_index_ = 0; // tokens seen after skipping specials
    std::string byte_run_;        // pending <0xNN> bytes (byte fallback)
    int strip_left_ = 0;          // leading spaces still to strip
    std::string pending_;         // bytes waiting for the rest of a UTF-8 sequence
};

} // namespace llmwb
