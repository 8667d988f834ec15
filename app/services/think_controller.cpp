#include "app/services/think_controller.h"

#include "app/report/report_files.h"
#include "app/report/zip/report_zip.h"
#include "app/services/bench_store.h"

namespace llmwb {

ThinkController::ThinkController(ThinkStore& store, BenchStore* benchStore, QObject* parent)
    : QObject(parent), store_(store), benchStore_(benchStore) {
    registerThinkTypes();
}

QString ThinkController::start(ThinkPlan plan) {
    if (planId_ != 0)
        return tr("Think harder is already running.");
    if (const QString why = plan.validate(); !why.isEmpty())
        return why;
    plan.id = nextPlanId_++;
    planId_ = plan.id;
    emit startRequested(plan);
    return {};
}

void ThinkController::cancel() {
    if (planId_ != 0)
        emit cancelRequested();
}

void ThinkController::onProgress(const ThinkProgress& p) {
    if (p.planId == planId_)
        emit progress(p);
}

void ThinkController::onFinished(const ThinkRunOutcome& o) {
    if (o.planId != planId_)
        return;
    planId_ = 0;
    qint64 stored = 0;
    // A run refused before it started (no model, a bad file) has no rungs: nothing to keep.
    if (o.run.contains("rungs")) {
        if (const auto id = store_.addRun(o.run)) {
            stored = *id;
            lastRun_ = *id;
            emit runsChanged();
        } else {
            emit storageFailed(store_.lastError());
        }
    }
    emit finished(o.run, stored);
}

QString ThinkController::exportReport(const QList<qint64>& thinkIds, const QList<qint64>& benchIds,
                                      const QString& path, const QString& title) {
    if (thinkIds.isEmpty() && benchIds.isEmpty())
        return tr("Choose the runs to export.");
    BenchReport report;
    if (!benchIds.isEmpty()) {
        if (!benchStore_)
            return tr("No benchmark runs are available.");
        auto bench = benchStore_->report(benchIds, title);
        if (!bench)
            return benchStore_->lastError();
        report = std::move(*bench);
    }
    report.title = title.toStdString();
    for (qint64 id : thinkIds) {
        auto run = store_.run(id);
        if (!run)
            return store_.lastError();
        report.think.push_back(std::move(*run));
    }
    if (Status st = write_report_zip(path.toStdString(), report_files(report)); !st)
        return QString::fromStdString(st.message());
    return {};
}

} // namespace llmwb
