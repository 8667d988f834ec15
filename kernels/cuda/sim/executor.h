// cudasim executor: runs one kernel launch (every block of the grid, each block's threads on
// fibers with CUDA barrier and shuffle semantics). Internal to the emulator.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "kernels/cuda/sim/device.h"

namespace cudasim::detail {

// The order in which a block's runnable threads are resumed after each barrier. Code that is
// only correct for one order has a race the barriers do not cover (CUDASIM_SCHEDULE=reverse or
// =shuffle changes it; forward is the default).
enum class Schedule { Forward, Reverse, Shuffle };
Schedule schedule_from_env();

struct KernelRun {
    LaunchSpec spec;
    std::function<void()> body; // one thread
};

// Runs every block; a deadlock (a barrier that part of a block never reaches), a shuffle with an
// exited lane, or mismatched shuffle masks are reported with the kernel's name and abort.
void execute(const KernelRun& run);

} // namespace cudasim::detail
