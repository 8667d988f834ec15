#include "engine/runtime/stop_matcher.h"

#include <algorithm>

namespace llmwb {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) {
    for (std::string& s : stops)
        if (!s.empty()) {
            max_len_ = std::max(max_len_, s.size());
            stops_.push_back(std::move(s));
        }
}

size_t StopStringMatcher::held_suffix() const {
    size_t best = 0;
    const std::string_view t(text_);
    for (const std::string& s : stops_) {
        const size_t top = std::min(s.size() - 1, t.size());
        for (size_t k = top; k > best; --k)
            if (t.substr(t.size() - k) == std::string_view(s).substr(0, k)) {
                best = k;
                break;
            }
    }
    return best;
}

StopStringMatcher::Step StopStringMatcher::push(std::string_view chunk) {
    Step step;
    if (stopped_)
        return step;
    const size_t old_len = text_.size();
    text_.append(chunk);

    // Earliest occurrence of any stop string that ends inside the new text.
    size_t hit = std::string::npos;
    const std::string* which = nullptr;
    for (const std::string& s : stops_) {
        const size_t from = old_len >= s.size() - 1 ? old_len - (s.size() - 1) : 0;
        const size_t at = text_.find(s, std::max(from, emitted_));
        if (at != std::string::npos && (hit == std::string::npos || at < hit)) {
            hit = at;
            which = &s;
        }
    }
    if (which) {
        text_.resize(hit);
        step.text = text_.substr(emitted_);
        emitted_ = text_.size();
        step.stopped = stopped_ = true;
        step.matched = *which;
        return step;
    }
    const size_t safe = std::max(emitted_, text_.size() - held_suffix());
    step.text = text_.substr(emitted_, safe - emitted_);
    emitted_ = safe;
    return step;
}

std::string StopStringMatcher::flush() {
    if (stopped_)
        return {};
    std::string rest = text_.substr(emitted_);
    emitted_ = text_.size();
    return rest;
}

} // namespace llmwb
