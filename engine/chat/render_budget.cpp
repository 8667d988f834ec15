#include "engine/chat/render_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace llmwb::jinja {

namespace {

thread_local RenderBudget* t_active = nullptr;

std::string bytes_text(uint64_t n) {
    if (n >= (uint64_t(1) << 20) && n % (uint64_t(1) << 20) == 0)
        return std::to_string(n >> 20) + " MiB";
    if (n >= 1024 && n % 1024 == 0)
        return std::to_string(n >> 10) + " KiB";
    return std::to_string(n) + " bytes";
}

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", s);
    return buf;
}

} // namespace

RenderBudget::RenderBudget(const RenderLimits& limits) : limits_(limits) {
    double s =
        std::isfinite(limits.max_seconds) && limits.max_seconds > 0 ? limits.max_seconds : 1e9;
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(std::min(s, 1e9)));
}

bool RenderBudget::fail(std::string message) {
    if (error_.empty())
        error_ = std::move(message);
    return false;
}

bool RenderBudget::fits(uint64_t bytes) const {
    return !failed() &&
           bytes <= limits_.max_alloc_bytes - std::min(allocated_, limits_.max_alloc_bytes);
}

uint64_t RenderBudget::remaining_bytes() const {
    return allocated_ >= limits_.max_alloc_bytes ? 0 : limits_.max_alloc_bytes - allocated_;
}

bool RenderBudget::require(uint64_t bytes) {
    if (failed())
        return false;
    if (fits(bytes))
        return true;
    return fail("exceeded the limit of " + bytes_text(limits_.max_alloc_bytes) +
                " of strings and lists allocated");
}

bool RenderBudget::charge(uint64_t bytes) {
    if (!require(bytes))
        return false;
    allocated_ += bytes;
    return true;
}

bool RenderBudget::step() {
    if (failed())
        return false;
    if (++steps_ > limits_.max_steps)
        return fail("exceeded the limit of " + std::to_string(limits_.max_steps) +
                    " evaluation steps");
    if (steps_ % kClockInterval == 0) {
        if (limits_.cancel && limits_.cancel->load(std::memory_order_relaxed))
            return fail("rendering was cancelled");
        if (std::chrono::steady_clock::now() > deadline_)
            return fail("exceeded the limit of " + seconds_text(limits_.max_seconds) +
                        " s of rendering time");
    }
    return true;
}

bool RenderBudget::loop_iteration() {
    if (!step()) // an empty loop body has no other step: the clock is still seen
        return false;
    if (++iterations_ > limits_.max_loop_iterations)
        return fail("exceeded the limit of " + std::to_string(limits_.max_loop_iterations) +
                    " loop iterations");
    return true;
}

bool RenderBudget::check_output(size_t bytes) {
    if (failed())
        return false;
    if (bytes > limits_.max_output_bytes)
        return fail("exceeded the limit of " + bytes_text(limits_.max_output_bytes) + " of output");
    return true;
}

RenderBudget* active_budget() {
    return t_active;
}

ActiveBudgetScope::ActiveBudgetScope(RenderBudget* budget) : previous_(t_active) {
    t_active = budget;
}

ActiveBudgetScope::~ActiveBudgetScope() {
    t_active = previous_;
}

std::string budget_error_text() {
    RenderBudget* b = active_budget();
    if (b && b->failed())
        return b->error();
    return "result too large";
}

} // namespace llmwb::jinja
