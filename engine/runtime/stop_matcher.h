// StopStringMatcher: finds stop strings in streamed text across token boundaries. Text that
// could still turn into a stop string is held back, so streamed text never contains text that
// is later cut; the stop string itself is never emitted (OpenAI / vLLM semantics).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llmwb {

class StopStringMatcher {
  public:
    explicit StopStringMatcher(std::vector<std::string> stops); // empty strings are ignored

    struct Step {
        std::string text;     // text that is now safe to stream
        bool stopped = false; // a stop string was found; emit ends right before it
        std::string matched;  // the stop string found
    };

    // Appends newly decoded text. After a stop, further pushes emit nothing.
    Step push(std::string_view chunk);
    // End of generation without a stop: releases the held-back text.
    std::string flush();

    bool stopped() const { return stopped_; }
    // Everything emitted so far (== concatenation of all text/flush results).
    std::string_view emitted() const { return std::string_view(text_).substr(0, emitted_); }

  private:
    size_t held_suffix() const; // longest suffix of text_ that is a proper prefix of a stop

    std::vector<std::string> stops_;
    size_t max_len_ = 0;
    std::string text_;
    size_t emitted_ = 0;
    bool stopped_ = false;
};

} // namespace llmwb
