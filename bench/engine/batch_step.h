// llmwb-bench-decode --batch N: where the time of one decode step of N sequences goes (the
// continuous-batching step of `llmwb bench`), phase by phase, each the best of several rounds
// (the machine may be shared): the whole step (forward + greedy sampling of every sequence),
// the products by kind (q/k/v, o, gate/up, down, lm_head) with the activations the step would
// give them, the attention of every layer over the N contexts, the greedy argmaxes of the N rows
// (in parallel, as CpuExecutor::forward_greedy), and what is left (norms, RoPE, KV writes,
// activations, copies, joins).
#pragma once

#include <cstdint>

#include "kernels/cpu/kv_format.h"

namespace llmwb {
struct LoadedModel;
class CpuTransformer;
namespace kernels {
class ThreadPool;
}

struct BatchStepOptions {
    int32_t n_seqs = 32;   // sequences decoding together
    int32_t context = 128; // tokens already in each sequence's cache
    int32_t block_size = 16;
    int32_t rounds = 3;
    KvDtype kv_dtype = KvDtype::F16; // the CPU backend's auto (kCpuAutoKvDtype)
    bool json = false;
};

// Prints the breakdown; returns the process exit code (1 on an error, printed).
int run_batch_step(const LoadedModel& m, CpuTransformer& tf, kernels::ThreadPool& pool,
                   const BatchStepOptions& o);

} // namespace llmwb
