#include "app/services/think_types.h"

#include <QFileInfo>

#include "engine/serving/think_ladder.h"

namespace llmwb {

QString ThinkPlan::validate() const {
    if (taskKind == QLatin1String("file")) {
        if (taskFile.isEmpty())
            return QCoreApplication::translate("llmwb::ThinkPlan", "Choose a task file.");
    } else if (taskKind != QLatin1String("arith") && taskKind != QLatin1String("logic")) {
        return QCoreApplication::translate("llmwb::ThinkPlan", "Unknown task set \"%1\".")
            .arg(taskKind);
    } else if (level < 1 || level > 5) {
        return QCoreApplication::translate("llmwb::ThinkPlan", "The level must be 1 to 5.");
    }
    if (count < 1 || count > kMaxCount)
        return QCoreApplication::translate("llmwb::ThinkPlan", "The task count must be 1 to %1.")
            .arg(kMaxCount);
    if (maxTokens < 1 || maxTokens > 8192)
        return QCoreApplication::translate("llmwb::ThinkPlan", "Max tokens must be 1 to 8192.");
    if (!(temperature >= 0 && temperature <= 2))
        return QCoreApplication::translate("llmwb::ThinkPlan", "The temperature must be 0 to 2.");
    if (!(pricePerHour >= 0 && pricePerHour < 1e6))
        return QCoreApplication::translate("llmwb::ThinkPlan",
                                           "The price per hour must be 0 or more.");
    if (auto rungs = parse_think_ladder(ladder.toStdString()); !rungs)
        return QString::fromStdString(rungs.message());
    return {};
}

QString ThinkPlan::taskSetName() const {
    if (taskKind == QLatin1String("file"))
        return QStringLiteral("file:") + QFileInfo(taskFile).fileName();
    return taskKind + QLatin1Char(':') + QString::number(level);
}

void registerThinkTypes() {
    qRegisterMetaType<ThinkPlan>();
    qRegisterMetaType<ThinkProgress>();
    qRegisterMetaType<ThinkRunOutcome>();
}

} // namespace llmwb
