// cudasim fibers: the stacks and context switches on which emulated CUDA threads run. x86-64 has a
// hand-written switch (the callee-saved registers; a few ns); other targets, or CUDASIM_UCONTEXT,
// use ucontext. AddressSanitizer is told about every switch.
#pragma once

#include <cstddef>

#if !defined(__x86_64__) || defined(CUDASIM_UCONTEXT)
#include <ucontext.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define CUDASIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CUDASIM_ASAN 1
#endif
#endif

namespace cudasim::detail {

// Stack of one emulated thread (ASan's frames are several times larger).
#ifdef CUDASIM_ASAN
constexpr size_t kFiberStackBytes = size_t{512} << 10;
#else
constexpr size_t kFiberStackBytes = size_t{128} << 10;
#endif

class FiberStack {
  public:
    explicit FiberStack(size_t bytes); // mmap'ed, with a guard page below
    ~FiberStack();
    FiberStack(const FiberStack&) = delete;
    FiberStack& operator=(const FiberStack&) = delete;
    void* bottom() const { return base_; } // lowest usable address
    size_t size() const { return size_; }

  private:
    void* map_ = nullptr;
    size_t map_size_ = 0;
    void* base_ = nullptr;
    size_t size_ = 0;
};

// A fiber runs entry(arg) on its stack. resume() switches to it from the scheduler and returns
// when the fiber calls yield() or its entry returns (then done() is true).
class Fiber {
  public:
    using Entry = void (*)(void*);
    void start(FiberStack& stack, Entry entry, void* arg);
    void resume();
    void yield(); // from inside the fiber
    bool done() const { return done_; }

    static void trampoline(Fiber* f); // internal

  private:
    // The platform's part (x86-64 assembly or ucontext): the initial context, the switches.
    void prepare();
    void switch_in();        // scheduler -> fiber
    void switch_out();       // fiber -> scheduler
    void switch_out_final(); // fiber -> scheduler, never to return

    Entry entry_ = nullptr;
    void* arg_ = nullptr;
    FiberStack* stack_ = nullptr;
    bool done_ = true;
#if defined(__x86_64__) && !defined(CUDASIM_UCONTEXT)
    void* sp_ = nullptr;
    void* scheduler_sp_ = nullptr;
#else
    ucontext_t ctx_{}, scheduler_ctx_{};
#endif
    // AddressSanitizer bookkeeping.
    void* fake_stack_ = nullptr;
    const void* scheduler_bottom_ = nullptr;
    size_t scheduler_size_ = 0;
};

} // namespace cudasim::detail
