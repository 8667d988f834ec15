#include "app/services/bench_types.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <cmath>

namespace llmwb {

QString BenchWorkload::datasetName() const {
    if (!prompts.isEmpty())
        return QStringLiteral("conversations");
    if (!dataset.isEmpty())
        return QFileInfo(dataset).fileName();
    return QStringLiteral("random");
}

QStringList BenchPlan::sweepableSettings() {
    return {QStringLiteral("gpu_memory_utilization"), QStringLiteral("max_num_seqs"),
            QStringLiteral("max_num_batched_tokens"), QStringLiteral("block_size"),
            QStringLiteral("num_speculative_tokens")};
}

int BenchPlan::runCount() const {
    const auto values = sweepSetting.isEmpty() ? 1 : std::max<qsizetype>(1, sweepValues.size());
    return int(values * policies.size());
}

QString BenchPlan::validate() const {
    const BenchWorkload& w = workload;
    if (policies.isEmpty())
        return tr("Choose at least one policy.");
    for (const QString& p : policies)
        if (p != QLatin1String("continuous") && p != QLatin1String("static") &&
            p != QLatin1String("sequential"))
            return tr("Unknown policy \"%1\".").arg(p);
    if (w.prompts.isEmpty() && w.dataset.isEmpty()) {
        if (w.numPrompts < 1 || w.numPrompts > BenchWorkload::kMaxPrompts)
            return tr("The number of requests must be between 1 and %1.")
                .arg(BenchWorkload::kMaxPrompts);
        if (w.inputLen < 1)
            return tr("The input length must be at least 1 token.");
    }
    if (w.outputLen < 1)
        return tr("The output length must be at least 1 token.");
    if (!(w.rangeRatio >= 0 && w.rangeRatio < 1))
        return tr("The range ratio must be at least 0 and below 1.");
    if (w.prefixLen < 0)
        return tr("The shared prefix cannot be negative.");
    if (!(w.requestRate >= 0) || !std::isfinite(w.requestRate))
        return tr("The request rate must be 0 (all at once) or a number of requests per second.");
    if (!(w.burstiness > 0) || !std::isfinite(w.burstiness))
        return tr("Burstiness must be above 0.");
    if (w.maxConcurrency < 0)
        return tr("Max concurrency cannot be negative.");
    if (!sweepSetting.isEmpty()) {
        if (!sweepableSettings().contains(sweepSetting))
            return tr("\"%1\" cannot be swept.").arg(sweepSetting);
        if (sweepValues.isEmpty())
            return tr("Give the values of %1 to sweep over.").arg(sweepSetting);
        if (sweepValues.size() > 64)
            return tr("At most 64 sweep values.");
        for (double v : sweepValues) {
            const bool fraction = sweepSetting == QLatin1String("gpu_memory_utilization");
            if (!std::isfinite(v) ||
                (fraction ? !(v > 0 && v <= 1) : (v < 0 || v != std::floor(v))))
                return fraction ? tr("gpu_memory_utilization values must be in (0, 1].")
                                : tr("%1 values must be whole numbers.").arg(sweepSetting);
            if (sweepSetting == QLatin1String("block_size") && v != 8 && v != 16 && v != 32)
                return tr("block_size values must be 8, 16 or 32.");
            if ((sweepSetting == QLatin1String("max_num_seqs") ||
                 sweepSetting == QLatin1String("max_num_batched_tokens")) &&
                v < 1)
                return tr("%1 values must be at least 1.").arg(sweepSetting);
            if (sweepSetting == QLatin1String("num_speculative_tokens") && v > 16)
                return tr("num_speculative_tokens values must be 0 to 16.");
        }
    }
    const QStringList metrics = percentileMetrics.split(QLatin1Char(','), Qt::SkipEmptyParts);
    if (metrics.isEmpty())
        return tr("Choose at least one percentile metric.");
    for (const QString& m : metrics)
        if (!QStringList{QStringLiteral("ttft"), QStringLiteral("tpot"), QStringLiteral("itl"),
                         QStringLiteral("e2el")}
                 .contains(m.trimmed()))
            return tr("Unknown percentile metric \"%1\" (ttft, tpot, itl, e2el).").arg(m);
    for (double q : metricPercentiles)
        if (!(q > 0 && q < 100))
            return tr("Percentiles must be above 0 and below 100.");
    return {};
}

void registerBenchTypes() {
    qRegisterMetaType<BenchPlan>();
    qRegisterMetaType<BenchProgress>();
    qRegisterMetaType<BenchRunOutcome>();
}

} // namespace llmwb
