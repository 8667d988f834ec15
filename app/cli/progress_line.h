// A one-line progress display on stderr ("\r[continuous] 12/32 requests done"), drawn only when
// stderr is a terminal: a log file or a pipe gets nothing (not hundreds of "\r" updates).
#pragma once

#include <chrono>
#include <string>

namespace llmwb::cli {

class ProgressLine {
  public:
    // enabled: the caller wants progress (no --quiet); it is drawn only on a terminal.
    explicit ProgressLine(bool enabled);
    ~ProgressLine();
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

    bool active() const { return active_; }
    // Redraws the line (at most ~20 times a second, and always when `force`).
    void update(const std::string& text, bool force = false);
    // Ends the line with a newline when anything was drawn.
    void finish();

  private:
    bool active_ = false;
    bool drawn_ = false;
    size_t width_ = 0;
    std::chrono::steady_clock::time_point last_{};
};

} // namespace llmwb::cli
