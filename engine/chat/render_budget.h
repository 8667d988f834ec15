// RenderLimits and RenderBudget: the hard limits a chat template (a program from a stranger) runs
// under, and the account one render keeps against them. Every limit is an error that names it.
//
// The budget of the render running on this thread is reachable through active_budget() so that
// built-ins deep in the value code (repr, iterate, replace, join, range) can refuse an
// allocation before making it without threading a parameter through every helper. The pointer
// is set by a scope object for the duration of one render_template call and restored when it
// ends: repeated, nested and concurrent renders (one per thread) each see their own budget.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace llmwb::jinja {

struct RenderLimits {
    // Bytes of rendered text (the prompt).
    size_t max_output_bytes = size_t(16) << 20;
    // Bytes of strings and lists created during one render, all together (concatenation,
    // repetition, replace, join, list and dict building, range, repr ...), counted before the
    // big ones are made. Cumulative: a loop that makes a 60 MB string 100,000 times is refused
    // on the second one. Real templates allocate a few times their output.
    uint64_t max_alloc_bytes = uint64_t(64) << 20;
    int max_call_depth = 64; // macro recursion
    int64_t max_loop_iterations =
        1'000'000;                  // all loops together; real templates loop over messages
    int64_t max_steps = 20'000'000; // statements + expressions evaluated
    int max_eval_depth = 400;       // nested evaluation (expressions inside macros)
    double max_seconds = 2.0;       // wall time, checked every few hundred steps
    // When set and true, the render stops with "rendering was cancelled" (checked with the
    // wall clock). Not owned.
    const std::atomic<bool>* cancel = nullptr;
};

class RenderBudget {
  public:
    explicit RenderBudget(const RenderLimits& limits);

    const RenderLimits& limits() const { return limits_; }

    // Would `bytes` more still fit? Does not record anything (for checks before allocating).
    bool fits(uint64_t bytes) const;
    // Records `bytes` allocated; false (and the error recorded) when past the limit.
    bool charge(uint64_t bytes);
    // Refuses `bytes` that do not fit: records the error and returns false.
    bool require(uint64_t bytes);
    uint64_t remaining_bytes() const;
    uint64_t allocated_bytes() const { return allocated_; }

    // One evaluation step; every kClockInterval steps the wall clock and the cancel flag.
    bool step();
    bool loop_iteration();
    bool check_output(size_t bytes);

    // The first limit that was exceeded, or empty. Built-ins that cannot return an error (repr)
    // stop early and leave this set; the evaluator turns it into an error after the step.
    bool failed() const { return !error_.empty(); }
    const std::string& error() const { return error_; }
    bool fail(std::string message);

  private:
    static constexpr int64_t kClockInterval = 256;

    RenderLimits limits_;
    uint64_t allocated_ = 0;
    int64_t steps_ = 0;
    int64_t iterations_ = 0;
    std::chrono::steady_clock::time_point deadline_;
    std::string error_;
};

// The budget of the render running on this thread, or null outside a render.
RenderBudget* active_budget();

// Makes `budget` the active one until destroyed (restores the previous one).
class ActiveBudgetScope {
  public:
    explicit ActiveBudgetScope(RenderBudget* budget);
    ~ActiveBudgetScope();
    ActiveBudgetScope(const ActiveBudgetScope&) = delete;
    ActiveBudgetScope& operator=(const ActiveBudgetScope&) = delete;

  private:
    RenderBudget* previous_;
};

// For long loops inside built-ins (repr of shared sub-lists): counts a step, so that the wall
// clock and the cancel flag are seen. False once the budget has failed.
inline bool budget_step() {
    RenderBudget* b = active_budget();
    return !b || b->step();
}

// Helpers for built-ins: true when there is no active budget or the bytes fit / were recorded.
inline bool budget_fits(uint64_t bytes) {
    RenderBudget* b = active_budget();
    return !b || b->fits(bytes);
}
inline bool budget_require(uint64_t bytes) {
    RenderBudget* b = active_budget();
    return !b || b->require(bytes);
}
inline bool budget_charge(uint64_t bytes) {
    RenderBudget* b = active_budget();
    return !b || b->charge(bytes);
}
// The error text for allocations refused by a built-in (the budget's own, when one is active).
std::string budget_error_text();

} // namespace llmwb::jinja
