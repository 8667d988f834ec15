#include "app/cli/progress_line.h"

#include <cstdio>
#include <unistd.h>

namespace llmwb::cli {

ProgressLine::ProgressLine(bool enabled) : active_(enabled && isatty(STDERR_FILENO) == 1) {}

ProgressLine::~ProgressLine() {
    finish();
}

void ProgressLine::update(const std::string& text, bool force) {
    if (!active_)
        return;
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && !force && now - last_ < std::chrono::milliseconds(50))
        return;
    last_ = now;
    std::string line = "\r" + text;
    if (text.size() < width_)
        line.append(width_ - text.size(), ' '); // clear what a longer line left
    width_ = text.size();
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    drawn_ = true;
}

void ProgressLine::finish() {
    if (drawn_)
        std::fputc('\n', stderr);
    drawn_ = false;
    width_ = 0;
}

} // namespace llmwb::cli
