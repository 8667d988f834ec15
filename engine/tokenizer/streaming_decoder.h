// StreamingDecoder: decode tokens one at a time as a model generates them. Each chunk is
// complete UTF-8 (a multi-byte character split over byte-fallback or byte-level tokens is held
// back until it is complete), and the concatenation of all chunks plus flush() equals
// Tokenizer::decode(all ids) exactly, including the SentencePiece leading-space strip.
#pragma once

#include <cstdint>
#include <string>

#include "engine/tokenizer/text_decoder.h"

namespace llmwb {

class StreamingDecoder {
  public:
    // `tokenizer` must outlive the decoder.
    explicit StreamingDecoder(const Tokenizer& tokenizer, bool skip_special_tokens = false)
        : decoder_(tokenizer, skip_special_tokens) {}

    // Text that became final with this token (possibly empty).
    std::string push(std::int32_t id) {
        std::string out;
        decoder_.push(id, out);
        return out;
    }
    // Whatever is still held back; call once at the end of the stream.
    std::string flush() {
        std::string out;
        decoder_.finish(out);
        return out;
    }

  private:
    TextDecoder decoder_;
};

} // namespace llmwb
