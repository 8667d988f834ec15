#include "kernels/cuda/sim/executor.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/cuda/sim/fiber.h"

namespace cudasim {

ThreadState* g_thread = nullptr;
BlockState* g_block = nullptr;

namespace detail {

namespace {

constexpr unsigned kFull = 0xffffffffu;

enum class Wait { None, Block, Warp };

struct Thread {
    Fiber fiber;
    ThreadState state;
    Wait wait = Wait::None;
    uint64_t wait_gen = 0;
};

struct Warp {
    unsigned present = 0;  // lanes that exist (blockDim may end mid-warp)
    unsigned exited = 0;   // lanes whose thread returned
    unsigned expected = 0; // mask of the collective in progress (0: none)
    unsigned arrived = 0;
    uint64_t gen = 0;
    uint64_t slots[2][32] = {}; // shuffle values, double-buffered by generation
    uint64_t once_tag = ~uint64_t{0};
    alignas(64) unsigned char once[kWarpOnceBytes];
};

struct Block {
    const KernelRun* run = nullptr;
    BlockState state;
    std::vector<Thread>* threads = nullptr; // one per thread of the block
    std::vector<Warp> warps;
    unsigned live = 0;    // threads not yet returned
    unsigned arrived = 0; // at the block barrier
    uint64_t gen = 0;
    Thread* current = nullptr;
};

Block* g_exec = nullptr; // the block running (kernels run under the runtime's lock)

[[noreturn]] void fail(const Block& b, const char* fmt, unsigned a = 0, unsigned c = 0) {
    char msg[256];
    std::snprintf(msg, sizeof msg, fmt, a, c);
    std::fprintf(
        stderr, "cudasim: kernel %s, block (%u,%u,%u) of grid (%u,%u,%u), %u threads: %s\n",
        b.run->spec.name, b.state.idx.x, b.state.idx.y, b.state.idx.z, b.state.grid.x,
        b.state.grid.y, b.state.grid.z, b.state.dim.x * b.state.dim.y * b.state.dim.z, msg);
    std::abort();
}

Block& current_block() {
    if (!g_exec || !g_exec->current) {
        std::fprintf(stderr, "cudasim: a device built-in was used outside a kernel\n");
        std::abort();
    }
    return *g_exec;
}

bool released(const Block& b, const Thread& t) {
    switch (t.wait) {
    case Wait::None:
        return true;
    case Wait::Block:
        return b.gen > t.wait_gen;
    case Wait::Warp:
        return b.warps[t.state.warp].gen > t.wait_gen;
    }
    return true;
}

void thread_entry(void*) {
    g_exec->run->body();
}

FiberStack& stack_for(size_t i) {
    static std::vector<std::unique_ptr<FiberStack>> stacks;
    while (stacks.size() <= i)
        stacks.push_back(std::make_unique<FiberStack>(kFiberStackBytes));
    return *stacks[i];
}

std::vector<unsigned char>& shared_buffer() {
    static std::vector<unsigned char> buf;
    return buf;
}

// Runs block b.state.idx; `seq` is the order in which runnable threads are resumed.
void run_block(Block& b, std::vector<unsigned>& seq, Schedule order, std::mt19937& rng) {
    std::vector<Thread>& threads = *b.threads;
    const unsigned n = static_cast<unsigned>(threads.size());
    const unsigned nwarps = (n + 31) / 32;
    if (b.warps.size() != nwarps)
        b.warps = std::vector<Warp>(nwarps);
    for (unsigned w = 0; w < nwarps; ++w) {
        Warp& wp = b.warps[w];
        const unsigned lanes = std::min(32u, n - 32 * w);
        wp.present = lanes == 32 ? kFull : ((1u << lanes) - 1);
        wp.exited = wp.expected = wp.arrived = 0;
        wp.gen = 0;
        wp.once_tag = ~uint64_t{0};
    }
    b.live = n;
    b.arrived = 0;
    b.gen = 0;
    const dim3 d = b.state.dim;
    for (unsigned i = 0; i < n; ++i) {
        Thread& t = threads[i];
        t.state.idx = uint3{i % d.x, (i / d.x) % d.y, i / (d.x * d.y)};
        t.state.linear = i;
        t.state.warp = i / 32;
        t.state.lane = i % 32;
        t.wait = Wait::None;
        t.wait_gen = 0;
        t.fiber.start(stack_for(i), &thread_entry, &t);
    }
    while (b.live > 0) {
        if (order == Schedule::Shuffle)
            std::shuffle(seq.begin(), seq.end(), rng);
        bool progressed = false;
        for (unsigned i : seq) {
            Thread& t = threads[i];
            if (t.fiber.done() || !released(b, t))
                continue;
            t.wait = Wait::None;
            b.current = &t;
            g_thread = &t.state;
            t.fiber.resume();
            b.current = nullptr;
            g_thread = nullptr;
            progressed = true;
            if (t.fiber.done()) {
                --b.live;
                Warp& w = b.warps[t.state.warp];
                w.exited |= 1u << t.state.lane;
                if (w.expected & w.exited)
                    fail(b,
                         "lane %u of warp %u exited while the rest of its warp waits in a "
                         "warp collective (__shfl_*_sync / __syncwarp) that includes it",
                         t.state.lane, t.state.warp);
                if (b.arrived > 0)
                    fail(b,
                         "thread %u exited while %u threads wait at __syncthreads (a barrier "
                         "in divergent code)",
                         t.state.linear, b.arrived);
            }
        }
        if (!progressed) {
            unsigned at_block = 0, at_warp = 0;
            for (const Thread& t : threads) {
                if (t.fiber.done())
                    continue;
                if (t.wait == Wait::Block)
                    ++at_block;
                if (t.wait == Wait::Warp)
                    ++at_warp;
            }
            fail(b,
                 "deadlock: %u threads wait at __syncthreads and %u in warp collectives that "
                 "the rest of the block never reaches (a barrier in divergent code)",
                 at_block, at_warp);
        }
    }
}

// Arrives at the warp collective `mask` with `value`; returns the slot row of this generation
// once every lane of the mask has arrived.
const uint64_t* warp_collective(unsigned mask, uint64_t value) {
    Block& b = current_block();
    Thread& t = *b.current;
    Warp& w = b.warps[t.state.warp];
    const unsigned me = 1u << t.state.lane;
    const unsigned participants = mask & w.present;
    if (!(participants & me))
        fail(b,
             "lane %u of warp %u called a warp collective with a mask (0x%x) that excludes "
             "itself",
             t.state.lane, mask);
    if (participants & w.exited)
        fail(b, "warp collective with mask 0x%x includes lanes that have exited (0x%x)", mask,
             participants & w.exited);
    if (w.expected == 0) {
        w.expected = participants;
    } else if (w.expected != participants) {
        fail(b, "lanes of one warp wait in warp collectives with different masks (0x%x vs 0x%x)",
             w.expected, participants);
    }
    const uint64_t gen = w.gen;
    w.slots[gen & 1][t.state.lane] = value;
    w.arrived |= me;
    if (w.arrived == w.expected) {
        w.arrived = 0;
        w.expected = 0;
        ++w.gen;
    } else {
        t.wait = Wait::Warp;
        t.wait_gen = gen;
        t.fiber.yield();
    }
    return w.slots[gen & 1];
}

} // namespace

Schedule schedule_from_env() {
    const char* s = std::getenv("CUDASIM_SCHEDULE");
    if (!s || !*s || std::strcmp(s, "forward") == 0)
        return Schedule::Forward;
    if (std::strcmp(s, "reverse") == 0)
        return Schedule::Reverse;
    if (std::strcmp(s, "shuffle") == 0)
        return Schedule::Shuffle;
    std::fprintf(stderr, "cudasim: CUDASIM_SCHEDULE=%s is not forward, reverse or shuffle\n", s);
    std::abort();
}

void execute(const KernelRun& run) {
    static const Schedule order = schedule_from_env();
    static std::mt19937 rng(12345);
    const dim3 g = run.spec.grid, d = run.spec.block;
    const size_t n = size_t{d.x} * d.y * d.z;
    static std::vector<Thread> threads;
    if (threads.size() != n)
        threads = std::vector<Thread>(n);
    auto& smem = shared_buffer();
    smem.resize(std::max<size_t>(run.spec.shared_bytes, 16) + 256);
    auto* dyn = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem.data()) + 255) &
                                                 ~uintptr_t{255});
    std::vector<unsigned> seq(n);
    std::iota(seq.begin(), seq.end(), 0u);
    if (order == Schedule::Reverse)
        std::reverse(seq.begin(), seq.end());
    Block b;
    b.run = &run;
    b.threads = &threads;
    b.state.dim = d;
    b.state.grid = g;
    b.state.dynamic_shared = dyn;
    g_exec = &b;
    g_block = &b.state;
    for (unsigned z = 0; z < g.z; ++z)
        for (unsigned y = 0; y < g.y; ++y)
            for (unsigned x = 0; x < g.x; ++x) {
                b.state.idx = uint3{x, y, z};
                // Shared memory starts as garbage on a GPU: NaN bytes here, so a read before
                // the first write shows.
                std::memset(dyn, 0xFF, run.spec.shared_bytes);
                run_block(b, seq, order, rng);
            }
    g_exec = nullptr;
    g_block = nullptr;
}

} // namespace detail

void syncthreads() {
    using namespace detail;
    Block& b = current_block();
    Thread& t = *b.current;
    const auto total = static_cast<unsigned>(b.threads->size());
    // The programming guide requires every thread of the block (exited ones make it divergent).
    if (b.live < total)
        fail(b,
             "__syncthreads after %u of the block's %u threads exited (a barrier in divergent "
             "code)",
             total - b.live, total);
    const uint64_t gen = b.gen;
    ++b.arrived;
    if (b.arrived == b.live) {
        b.arrived = 0;
        ++b.gen;
        return;
    }
    t.wait = Wait::Block;
    t.wait_gen = gen;
    t.fiber.yield();
}

void syncwarp(unsigned mask) {
    detail::warp_collective(mask, 0);
}

bool warp_uniform(uint64_t v) {
    return detail::warp_collective(0xffffffffu, v)[0] == v;
}

WarpOnceSlot warp_once_slot() {
    using namespace detail;
    Block& b = current_block();
    Warp& w = b.warps[b.current->state.warp];
    return WarpOnceSlot{&w.once_tag, w.once, w.gen};
}

uint64_t shuffle_bits(unsigned mask, uint64_t bits, int arg, int width, Shfl kind) {
    using namespace detail;
    if (width <= 0 || width > 32 || (width & (width - 1)) != 0) {
        Block& b = current_block();
        fail(b, "shuffle width %u is not a power of two up to 32", static_cast<unsigned>(width));
    }
    const unsigned lane = g_thread->lane;
    const uint64_t* slots = warp_collective(mask, bits);
    const unsigned participants = mask & current_block().warps[g_thread->warp].present;
    const unsigned seg = lane & ~static_cast<unsigned>(width - 1); // first lane of the segment
    const unsigned in_seg = lane - seg;
    unsigned src = lane;
    switch (kind) {
    case Shfl::Xor:
        src = seg + ((in_seg ^ static_cast<unsigned>(arg)) & (width - 1));
        break;
    case Shfl::Idx:
        src = seg + (static_cast<unsigned>(arg) & (width - 1));
        break;
    case Shfl::Down:
        src =
            in_seg + static_cast<unsigned>(arg) < static_cast<unsigned>(width) ? lane + arg : lane;
        break;
    case Shfl::Up:
        src = in_seg >= static_cast<unsigned>(arg) ? lane - arg : lane;
        break;
    }
    if (!(participants & (1u << (src % 32))))
        fail(current_block(),
             "lane %u reads a shuffle value from lane %u, which is not in the mask", lane, src);
    return slots[src % 32];
}

} // namespace cudasim
