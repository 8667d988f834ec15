#include "app/services/bench_controller.h"

#include <QFileInfo>

#include "app/report/report_files.h"
#include "app/report/zip/report_zip.h"

namespace llmwb {

BenchController::BenchController(BenchStore& store, QObject* parent)
    : QObject(parent), store_(store) {
    registerBenchTypes();
}

QString BenchController::start(BenchPlan plan) {
    if (planId_ != 0)
        return tr("A benchmark is already running.");
    if (const QString why = plan.validate(); !why.isEmpty())
        return why;
    plan.id = nextPlanId_++;
    planId_ = plan.id;
    groupId_ = 0;
    planRuns_.clear();
    emit startRequested(plan);
    return {};
}

void BenchController::cancel() {
    if (planId_ != 0)
        emit cancelRequested();
}

void BenchController::onProgress(const BenchProgress& p) {
    if (p.planId == planId_)
        emit progress(p);
}

void BenchController::onRunFinished(const BenchRunOutcome& o) {
    if (o.planId != planId_)
        return;
    const auto id = store_.addRun(o.run, o.environment, groupId_);
    if (!id) {
        emit storageFailed(tr("The benchmark run \"%1\" could not be stored: %2")
                               .arg(QString::fromStdString(o.run.name), store_.lastError()));
        return;
    }
    if (groupId_ == 0)
        groupId_ = *id;
    planRuns_ << *id;
    emit runsChanged(); // the list first: runStored's listeners find the run in it
    emit runStored(*id);
}

void BenchController::onFinished(qint64 planId, const QString& message) {
    if (planId != planId_)
        return;
    planId_ = 0;
    emit finished(message);
}

QString BenchController::exportReport(const QList<qint64>& ids, const QString& path,
                                      const QString& title) {
    if (ids.isEmpty())
        return tr("Choose the runs to export.");
    const auto report = store_.report(ids, title);
    if (!report)
        return store_.lastError();
    if (Status st = write_report_zip(path.toStdString(), report_files(*report)); !st)
        return QString::fromStdString(st.message());
    return {};
}

QList<qint64> BenchController::importReport(const QString& path, QString* error) {
    auto files = read_report_zip(path.toStdString());
    if (!files) {
        *error = QString::fromStdString(files.message());
        return {};
    }
    auto report = parse_report_files(*files);
    if (!report) {
        *error =
            tr("%1: %2").arg(QFileInfo(path).fileName(), QString::fromStdString(report.message()));
        return {};
    }
    if (report->runs.empty()) {
        *error = tr("%1: the report has no runs.").arg(QFileInfo(path).fileName());
        return {};
    }
    const auto ids = store_.addReport(*report, QFileInfo(path).fileName());
    if (!ids) {
        *error = store_.lastError();
        return {};
    }
    emit runsChanged();
    return *ids;
}

} // namespace llmwb
