// MemoryPlanText: the memory plan and the backend that stores the KV cache, in the user's words
// (tr()): the device, the KV-cache element type, and what decided the size of the KV pool. The
// Memory and Tuning panels both use it, so they say the same thing.
#pragma once

#include <QCoreApplication>
#include <QString>

#include "engine/runtime/device_types.h"
#include "engine/serving/memory_plan.h"

namespace llmwb {

class MemoryPlanText {
    Q_DECLARE_TR_FUNCTIONS(llmwb::MemoryPlanText)

  public:
    // "fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8": the KV cache's element type as
    // the executor stores it.
    static QString kvDtype(KvDtype dtype);
    // What the type costs and buys, in a sentence: bytes per value, int8's per-token scales,
    // fp8's calibrated per-layer scale (the Tuning dock's tooltips, the Memory panel).
    static QString kvDtypeCost(KvDtype dtype);
    // "int8: 1,088 blocks × 16 tokens = 17,408 tokens (9.0 KiB per block)".
    static QString kvPool(KvDtype dtype, qint64 blocks, int blockSize, qint64 bytesPerBlock);
    // What the device's memory is called: "RAM" on the CPU, "GPU memory" on CUDA.
    static QString memoryName(DeviceKind device);
    // "CUDA: <name>", "CPU" (or "CPU: <name>" for a CPU with a model name).
    static QString device(DeviceKind device, const QString& name);
    // Where the KV cache lives and in which element type, e.g. "On the CUDA backend the device
    // memory is the GPU's memory; the KV cache is stored in fp16."
    static QString backendNote(DeviceKind device, KvDtype dtype);
    // Which bound decided the number of blocks, in a sentence (with the fallback's reason).
    // The context cap counts plan.cap_seqs sequences (maxNumSeqs, the engine's max_num_seqs,
    // for a plan that does not say).
    static QString limit(const MemoryPlan& plan, int maxNumSeqs);
    // What gpu_memory_utilization means on this backend (memory_plan.h): on CUDA a fraction of
    // the GPU's memory, as in vLLM; on the CPU a share of the memory available to the engine,
    // with a pool of at most kCpuContextSeqs full contexts whose pages take RAM as blocks fill.
    static QString utilizationMeaning(DeviceKind device);
    // "Budget: 5.5 GB = 0.5 × 11 GB of RAM available" for the plan in force.
    static QString budget(const MemoryPlan& plan, DeviceKind device);
};

} // namespace llmwb
