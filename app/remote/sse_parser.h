// Server-sent events (the WHATWG "text/event-stream" format) as OpenAI-compatible servers stream
// completions: "data: {json}" lines, a blank line ending each event, ": comment" keep-alives,
// lines ending in LF, CRLF or CR, and events split anywhere across reads. Bounded: a line or an
// event past its limit is an error (a hostile server cannot make the client buffer without end).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "engine/util/result.h"

namespace llmwb::remote {

struct SseEvent {
    std::string event; // the "event:" field ("" when none: a message)
    std::string data;  // the "data:" lines joined by '\n'
};

struct SseLimits {
    size_t max_line = 1 << 20;  // bytes in one line
    size_t max_event = 4 << 20; // bytes of data in one event
};

class SseParser {
  public:
    explicit SseParser(SseLimits limits = {}) : limits_(limits) {}

    // Parses `bytes` (the next read of the stream) and appends each event it completes to
    // `out`. Errors: a line or an event past the limits (the parser is then unusable).
    Status feed(std::string_view bytes, std::vector<SseEvent>& out);
    // The end of the stream: an event whose blank line never came is dropped, as the format
    // says; true when such a partial event (or line) was pending.
    bool had_partial() const { return !line_.empty() || has_data_; }
    // Comment lines seen (keep-alives).
    size_t comments() const { return comments_; }

  private:
    Status line(std::vector<SseEvent>& out);

    SseLimits limits_;
    std::string line_;
    SseEvent pending_;
    bool has_data_ = false;
    bool after_cr_ = false; // the last byte was a CR: a following LF belongs to it
    size_t comments_ = 0;
};

} // namespace llmwb::remote
