#include "ui/memory_plan_text.h"

#include <QLocale>

namespace llmwb {

QString MemoryPlanText::kvDtype(KvDtype dtype) {
    switch (dtype) {
    case KvDtype::F32:
        return QStringLiteral("fp32");
    case KvDtype::F16:
        return QStringLiteral("fp16");
    case KvDtype::BF16:
        return QStringLiteral("bf16");
    case KvDtype::Fp8E4M3:
        return QStringLiteral("fp8_e4m3");
    case KvDtype::Fp8E5M2:
        return QStringLiteral("fp8_e5m2");
    case KvDtype::Int8:
        return QStringLiteral("int8");
    }
    return {};
}

QString MemoryPlanText::kvDtypeCost(KvDtype dtype) {
    switch (dtype) {
    case KvDtype::F32:
        return tr("4 bytes per value: exact, and the most memory.");
    case KvDtype::F16:
        return tr("2 bytes per value, half of fp32: 11 significant bits, values up to 65,504.");
    case KvDtype::BF16:
        return tr("2 bytes per value, half of fp32: fp32's range with 8 significant bits.");
    case KvDtype::Fp8E4M3:
        return tr("1 byte per value, a quarter of fp32: 4 significant bits; K and V of each layer "
                  "are divided by a scale calibrated on a short built-in text when it is chosen "
                  "(1.0 if that fails).");
    case KvDtype::Fp8E5M2:
        return tr("1 byte per value, a quarter of fp32: 3 significant bits and a wider range "
                  "than e4m3; K and V of each layer are divided by a scale calibrated on a short "
                  "built-in text when it is chosen (1.0 if that fails).");
    case KvDtype::Int8:
        return tr("1 byte per value plus a 4-byte scale per token and KV head (about 1.06 bytes "
                  "per value at head size 64): symmetric, each token's K and V rows scaled by "
                  "their own largest value, robust to outlier tokens.");
    }
    return {};
}

QString MemoryPlanText::kvPool(KvDtype dtype, qint64 blocks, int blockSize, qint64 bytesPerBlock) {
    const QLocale loc;
    return tr("%1: %2 blocks × %3 tokens = %4 tokens (%5 per block)")
        .arg(kvDtype(dtype), loc.toString(blocks), loc.toString(blockSize),
             loc.toString(blocks * blockSize), loc.formattedDataSize(bytesPerBlock, 1));
}

QString MemoryPlanText::memoryName(DeviceKind device) {
    return device == DeviceKind::Cuda ? tr("GPU memory") : tr("RAM");
}

QString MemoryPlanText::device(DeviceKind device, const QString& name) {
    if (device == DeviceKind::Cuda)
        return tr("CUDA: %1").arg(name);
    // The CPU executor calls itself "CPU": no need to say it twice.
    return name.isEmpty() || name == QLatin1String("CPU") ? tr("CPU") : tr("CPU: %1").arg(name);
}

QString MemoryPlanText::backendNote(DeviceKind device, KvDtype dtype) {
    if (device == DeviceKind::Cuda)
        return tr("On the CUDA backend the device memory is the GPU's memory; the KV cache is "
                  "stored in %1.")
            .arg(kvDtype(dtype));
    return tr("On the CPU backend the device memory is the machine's RAM; the KV cache is stored "
              "in %1.")
        .arg(kvDtype(dtype));
}

QString MemoryPlanText::limit(const MemoryPlan& plan, int maxNumSeqs) {
    const QLocale loc;
    switch (plan.limit) {
    case KvPoolLimit::Blocks:
        return tr("Set to %1 blocks.").arg(loc.toString(plan.num_blocks));
    case KvPoolLimit::KvBytes:
        return tr("Set by a KV-cache budget of %1.").arg(loc.formattedDataSize(plan.kv_bytes, 1));
    case KvPoolLimit::Utilization:
        return plan.device == DeviceKind::Cuda
                   ? tr("gpu_memory_utilization × the GPU's memory, less the weights and the "
                        "workspace.")
                   : tr("gpu_memory_utilization × the RAM available to the engine, less the "
                        "weights and the workspace.");
    case KvPoolLimit::Available:
        return tr("The memory free when the pool was planned (the budget would allow more).");
    case KvPoolLimit::Need:
        return tr("What the requests can use (the budget would allow more).");
    case KvPoolLimit::Context:
        return tr("Capped: %1 sequences of the full context never use more than %2 blocks.")
            .arg(plan.cap_seqs > 0 ? plan.cap_seqs : maxNumSeqs)
            .arg(loc.toString(plan.cap_blocks));
    case KvPoolLimit::Fallback:
        return tr("The budget does not hold the weights, so a small pool is used instead: %1")
            .arg(QString::fromStdString(plan.note));
    case KvPoolLimit::Live:
        return tr("Kept large enough for the longest running request.");
    }
    return {};
}

QString MemoryPlanText::utilizationMeaning(DeviceKind device) {
    if (device == DeviceKind::Cuda)
        return tr("GPU memory utilization: the fraction of the GPU's memory the engine may use "
                  "for weights, workspace and the KV cache (as in vLLM).");
    return tr("GPU memory utilization on the CPU: the share of the memory available to the "
              "engine (free RAM plus what it already holds) that it may use for weights, "
              "workspace and the KV cache. The pool holds at most %1 sequences of the model's "
              "full context, and its pages take RAM only as blocks fill.")
        .arg(kCpuContextSeqs);
}

QString MemoryPlanText::budget(const MemoryPlan& plan, DeviceKind device) {
    const QLocale loc;
    const QString u = loc.toString(plan.utilization, 'g', 4);
    if (device == DeviceKind::Cuda)
        return tr("Budget: %1 = %2 × %3 of GPU memory (weights, workspace and KV cache)")
            .arg(loc.formattedDataSize(plan.budget_bytes, 1), u,
                 loc.formattedDataSize(plan.base_bytes, 1));
    return tr("Budget: %1 = %2 × %3 of RAM available (weights, workspace and KV cache)")
        .arg(loc.formattedDataSize(plan.budget_bytes, 1), u,
             loc.formattedDataSize(plan.base_bytes, 1));
}

} // namespace llmwb
