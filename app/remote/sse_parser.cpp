#include "app/remote/sse_parser.h"

namespace llmwb::remote {

Status SseParser::feed(std::string_view bytes, std::vector<SseEvent>& out) {
    for (char c : bytes) {
        if (after_cr_) {
            after_cr_ = false;
            if (c == '\n')
                continue; // CRLF: the line already ended at the CR
        }
        if (c == '\r' || c == '\n') {
            after_cr_ = c == '\r';
            if (Status st = line(out); !st)
                return st;
            line_.clear();
            continue;
        }
        if (line_.size() >= limits_.max_line)
            return make_error("a server-sent event line longer than " +
                              std::to_string(limits_.max_line) + " bytes");
        line_.push_back(c);
    }
    return ok_status();
}

Status SseParser::line(std::vector<SseEvent>& out) {
    if (line_.empty()) { // dispatch
        if (has_data_)
            out.push_back(std::move(pending_));
        pending_ = SseEvent{};
        has_data_ = false;
        return ok_status();
    }
    if (line_[0] == ':') {
        ++comments_;
        return ok_status();
    }
    const size_t colon = line_.find(':');
    std::string_view field(line_.data(), colon == std::string::npos ? line_.size() : colon);
    std::string_view value;
    if (colon != std::string::npos) {
        value = std::string_view(line_).substr(colon + 1);
        if (!value.empty() && value[0] == ' ')
            value.remove_prefix(1);
    }
    if (field == "data") {
        const size_t add = value.size() + (has_data_ ? 1 : 0);
        if (pending_.data.size() + add > limits_.max_event)
            return make_error("a server-sent event larger than " +
                              std::to_string(limits_.max_event) + " bytes");
        if (has_data_)
            pending_.data.push_back('\n');
        pending_.data.append(value);
        has_data_ = true;
    } else if (field == "event") {
        pending_.event.assign(value);
    }
    // "id", "retry" and unknown fields are ignored, as the format says.
    return ok_status();
}

} // namespace llmwb::remote
