#include "kernels/cuda/sim/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#ifdef CUDASIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace cudasim::detail {

namespace {

[[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "cudasim: %s\n", what);
    std::abort();
}

} // namespace

FiberStack::FiberStack(size_t bytes) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_ = (bytes + page - 1) / page * page;
    map_size_ = size_ + page;
    map_ = mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map_ == MAP_FAILED)
        die("cannot map a fiber stack");
    mprotect(map_, page, PROT_NONE); // overflow faults instead of corrupting the next stack
    base_ = static_cast<char*>(map_) + page;
}

FiberStack::~FiberStack() {
    if (map_ && map_ != MAP_FAILED)
        munmap(map_, map_size_);
}

#if defined(__x86_64__) && !defined(CUDASIM_UCONTEXT)

// cudasim_switch(void** save_sp, void* load_sp): saves the callee-saved registers on the current
// stack (MXCSR and the x87 control word are left alone: every fiber shares the host thread's),
// stores the stack pointer in *save_sp, loads load_sp and restores the state saved there. A new
// fiber's stack is laid out so that this "returns" into cudasim_fiber_start with the fiber in r12.
extern "C" void cudasim_switch(void** save_sp, void* load_sp);
extern "C" void cudasim_fiber_start();
asm(R"(
    .text
    .globl cudasim_switch
    .type cudasim_switch, @function
cudasim_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size cudasim_switch, .-cudasim_switch

    .globl cudasim_fiber_start
    .type cudasim_fiber_start, @function
cudasim_fiber_start:
    movq %r12, %rdi
    call cudasim_fiber_trampoline
    ud2
    .size cudasim_fiber_start, .-cudasim_fiber_start
)");

extern "C" void cudasim_fiber_trampoline(Fiber* f) {
    Fiber::trampoline(f);
}

void Fiber::prepare() {
    auto top = reinterpret_cast<uintptr_t>(stack_->bottom()) + stack_->size();
    top &= ~uintptr_t{15};
    auto* slot = reinterpret_cast<uint64_t*>(top);
    // [top-8] return address, then rbp rbx r12 r13 r14 r15.
    slot[-1] = reinterpret_cast<uint64_t>(&cudasim_fiber_start);
    slot[-2] = 0;                                // rbp
    slot[-3] = 0;                                // rbx
    slot[-4] = reinterpret_cast<uint64_t>(this); // r12
    slot[-5] = 0;                                // r13
    slot[-6] = 0;                                // r14
    slot[-7] = 0;                                // r15
    sp_ = &slot[-7];
}

void Fiber::switch_in() {
    cudasim_switch(&scheduler_sp_, sp_);
}
void Fiber::switch_out() {
    cudasim_switch(&sp_, scheduler_sp_);
}
void Fiber::switch_out_final() {
    void* dead_sp = nullptr;
    cudasim_switch(&dead_sp, scheduler_sp_);
}

#else // ucontext

namespace {
void ucontext_entry(unsigned hi, unsigned lo) {
    auto* f = reinterpret_cast<Fiber*>((static_cast<uintptr_t>(hi) << 32) | lo);
    Fiber::trampoline(f);
}
} // namespace

void Fiber::prepare() {
    getcontext(&ctx_);
    ctx_.uc_stack.ss_sp = stack_->bottom();
    ctx_.uc_stack.ss_size = stack_->size();
    ctx_.uc_link = nullptr;
    const auto p = reinterpret_cast<uintptr_t>(this);
    makecontext(&ctx_, reinterpret_cast<void (*)()>(&ucontext_entry), 2,
                static_cast<unsigned>(p >> 32), static_cast<unsigned>(p & 0xFFFFFFFFu));
}

void Fiber::switch_in() {
    swapcontext(&scheduler_ctx_, &ctx_);
}
void Fiber::switch_out() {
    swapcontext(&ctx_, &scheduler_ctx_);
}
void Fiber::switch_out_final() {
    setcontext(&scheduler_ctx_);
}

#endif

void Fiber::start(FiberStack& stack, Entry entry, void* arg) {
    entry_ = entry;
    arg_ = arg;
    stack_ = &stack;
    done_ = false;
#ifdef CUDASIM_ASAN
    __asan_unpoison_memory_region(stack.bottom(), stack.size());
#endif
    prepare();
}

// AddressSanitizer is told which stack runs after every switch (and that a finished fiber's fake
// stack can go).
void Fiber::resume() {
#ifdef CUDASIM_ASAN
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, stack_->bottom(), stack_->size());
#endif
    switch_in();
#ifdef CUDASIM_ASAN
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

void Fiber::yield() {
#ifdef CUDASIM_ASAN
    __sanitizer_start_switch_fiber(&fake_stack_, scheduler_bottom_, scheduler_size_);
#endif
    switch_out();
#ifdef CUDASIM_ASAN
    __sanitizer_finish_switch_fiber(fake_stack_, &scheduler_bottom_, &scheduler_size_);
#endif
}

void Fiber::trampoline(Fiber* f) {
#ifdef CUDASIM_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &f->scheduler_bottom_, &f->scheduler_size_);
#endif
    f->entry_(f->arg_);
    f->done_ = true;
#ifdef CUDASIM_ASAN
    __sanitizer_start_switch_fiber(nullptr, f->scheduler_bottom_, f->scheduler_size_);
#endif
    f->switch_out_final();
    die("a finished fiber was resumed");
}

} // namespace cudasim::detail
