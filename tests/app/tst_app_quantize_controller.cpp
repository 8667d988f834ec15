// QuantizeController (Model > Quantize...): a fake runner on the worker thread checks the order
// of the signals, coalesced progress, Cancel, a failure's whole message, refusals, a runner
// that throws, and destruction while a run is going; the real quantize_model on a small float
// model written by the model writer, where it is built in.
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "app/services/quantize_controller.h"
#include "engine/model/model_writer.h"

using namespace llmwb;

namespace {

QuantizeOptions options(const QString& dir) {
    QuantizeOptions o;
    o.input = (dir + "/in.gguf").toStdString();
    o.output = (dir + "/out-Q4_K_M.gguf").toStdString();
    o.target = "Q4_K_M";
    return o;
}

// Reports `n` tensors, a few updates within each, then a report.
QuantizeController::Runner steps(int n, std::atomic<std::thread::id>* thread = nullptr) {
    return [n, thread](const QuantizeOptions& o, const QuantizeProgressFn& progress,
                       const std::atomic<bool>* cancel) -> Result<QuantizeReport> {
        if (thread)
            *thread = std::this_thread::get_id();
        QuantizeProgress p;
        p.tensors_total = n;
        p.bytes_total = int64_t{n} * 1000;
        p.stage = "quantizing";
        for (int i = 0; i < n; ++i) {
            for (int part = 1; part <= 3; ++part) {
                if (*cancel)
                    return make_error("cancelled");
                p.tensors_done = i;
                p.bytes_done = int64_t{i} * 1000 + part * 300;
                p.current_tensor = "blk." + std::to_string(i) + ".attn_q.weight";
                progress(p);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        p.tensors_done = n;
        p.bytes_done = p.bytes_total;
        p.stage = "writing";
        progress(p);
        QuantizeReport r;
        r.bytes_in = p.bytes_total;
        r.bytes_out = p.bytes_total / 4;
        r.bits_per_weight = 4.85;
        r.seconds = 0.1;
        r.notes = {"wrote " + o.output};
        return r;
    };
}

// Runs until cancelled, reporting progress every millisecond.
QuantizeController::Runner untilCancelled(std::atomic<bool>* sawCancel) {
    return [sawCancel](const QuantizeOptions&, const QuantizeProgressFn& progress,
                       const std::atomic<bool>* cancel) -> Result<QuantizeReport> {
        QuantizeProgress p;
        p.tensors_total = 100;
        while (!*cancel) {
            p.tensors_done = (p.tensors_done + 1) % 100;
            progress(p);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        *sawCancel = true;
        return make_error("cancelled");
    };
}

} // namespace

class TstAppQuantizeController : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;

  private slots:
    void signalsInOrder() {
        std::atomic<std::thread::id> runnerThread;
        QuantizeController c(steps(20, &runnerThread));
        QStringList order;
        int lastDone = -1;
        bool monotonic = true;
        QuantizeProgress last;
        connect(&c, &QuantizeController::started, this, [&] { order << "started"; });
        connect(&c, &QuantizeController::progress, this, [&](const QuantizeProgress& p) {
            if (order.isEmpty() || order.last() != "progress")
                order << "progress";
            monotonic = monotonic && p.tensors_done >= lastDone;
            lastDone = p.tensors_done;
            last = p;
        });
        QSignalSpy progress(&c, &QuantizeController::progress);
        QSignalSpy finished(&c, &QuantizeController::finished);
        QSignalSpy failed(&c, &QuantizeController::failed);
        QSignalSpy running(&c, &QuantizeController::runningChanged);
        connect(&c, &QuantizeController::finished, this, [&] { order << "finished"; });
        QCOMPARE(c.start(options(dir_.path())), QString());
        QVERIFY(c.isRunning());
        QVERIFY(c.waitForFinished(10000));
        QVERIFY(!c.isRunning());
        QCOMPARE(order, (QStringList{"started", "progress", "finished"}));
        QVERIFY(monotonic);
        // The last update arrives before finished(): all tensors done.
        QCOMPARE(last.tensors_done, 20);
        QVERIFY(last.stage == "writing");
        // Coalesced: never more updates than the runner sent (61), at least one.
        QVERIFY(progress.size() >= 1 && progress.size() <= 61);
        QCOMPARE(finished.size(), 1);
        QCOMPARE(failed.size(), 0);
        const auto report = finished.at(0).at(0).value<QuantizeReport>();
        QCOMPARE(report.bits_per_weight, 4.85);
        QVERIFY(report.notes.at(0) == "wrote " + options(dir_.path()).output);
        QCOMPARE(running.size(), 2);
        QCOMPARE(running.at(0).at(0).toBool(), true);
        QCOMPARE(running.at(1).at(0).toBool(), false);
        QVERIFY(runnerThread.load() != std::this_thread::get_id()); // off the GUI thread

        // A second run with the same controller.
        QCOMPARE(c.start(options(dir_.path())), QString());
        QVERIFY(c.waitForFinished(10000));
        QCOMPARE(finished.size(), 2);
    }

    void cancel() {
        std::atomic<bool> sawCancel{false};
        QuantizeController c(untilCancelled(&sawCancel));
        QSignalSpy progress(&c, &QuantizeController::progress);
        QSignalSpy cancelled(&c, &QuantizeController::cancelled);
        QSignalSpy failed(&c, &QuantizeController::failed);
        QSignalSpy finished(&c, &QuantizeController::finished);
        QCOMPARE(c.start(options(dir_.path())), QString());
        QVERIFY(progress.wait(5000));
        QVERIFY(!c.isCancelling());
        c.cancel();
        QVERIFY(c.isCancelling());
        QVERIFY(c.isRunning()); // until the runner notices
        QVERIFY(c.waitForFinished(5000));
        QVERIFY(sawCancel);
        QCOMPARE(cancelled.size(), 1);
        QCOMPARE(failed.size(), 0);
        QCOMPARE(finished.size(), 0);
        QVERIFY(!c.isCancelling());
        c.cancel(); // nothing running: no effect
        QVERIFY(!c.isCancelling());
    }

    void failureMessageWhole() {
        const std::string message =
            "quantize: /models/in.gguf: tensor blk.3.ffn_down.weight: row length 100 is not a "
            "multiple of 32; no type of the Q4_K_M recipe can hold it (Q4_K -> Q5_0 -> none)";
        QuantizeController c([&](const QuantizeOptions&, const QuantizeProgressFn&,
                                 const std::atomic<bool>*) -> Result<QuantizeReport> {
            return make_error(message);
        });
        QSignalSpy failed(&c, &QuantizeController::failed);
        QSignalSpy cancelled(&c, &QuantizeController::cancelled);
        QCOMPARE(c.start(options(dir_.path())), QString());
        QVERIFY(c.waitForFinished(5000));
        QCOMPARE(failed.size(), 1);
        QCOMPARE(failed.at(0).at(0).toString(), QString::fromStdString(message));
        QCOMPARE(cancelled.size(), 0);
    }

    void runnerThrows() {
        QuantizeController c([](const QuantizeOptions&, const QuantizeProgressFn&,
                                const std::atomic<bool>*) -> Result<QuantizeReport> {
            throw std::runtime_error("out of memory for tensor token_embd.weight");
        });
        QSignalSpy failed(&c, &QuantizeController::failed);
        QCOMPARE(c.start(options(dir_.path())), QString());
        QVERIFY(c.waitForFinished(5000));
        QCOMPARE(failed.size(), 1);
        QVERIFY(failed.at(0).at(0).toString().contains("out of memory for tensor token_embd"));
    }

    void refusals() {
        std::atomic<bool> sawCancel{false};
        QuantizeController c(untilCancelled(&sawCancel));
        QSignalSpy started(&c, &QuantizeController::started);
        QuantizeOptions o = options(dir_.path());
        o.input.clear();
        QVERIFY(!c.start(o).isEmpty());
        o = options(dir_.path());
        o.output.clear();
        QVERIFY(!c.start(o).isEmpty());
        o = options(dir_.path());
        o.output = o.input;
        QVERIFY(c.start(o).contains("another file"));
        QCOMPARE(started.size(), 0);
        QVERIFY(!c.isRunning());
        QCOMPARE(c.start(options(dir_.path())), QString());
        QVERIFY(c.start(options(dir_.path())).contains("already running"));
        QCOMPARE(started.size(), 1);
        c.cancel();
        QVERIFY(c.waitForFinished(5000));
    }

    // Deleting the controller mid-run (the app quits) cancels the run and joins the thread
    // promptly; nothing is delivered afterwards.
    void destroyWhileRunning() {
        std::atomic<bool> sawCancel{false};
        auto* c = new QuantizeController(untilCancelled(&sawCancel));
        int delivered = 0;
        connect(c, &QuantizeController::progress, this, [&] { ++delivered; });
        QCOMPARE(c->start(options(dir_.path())), QString());
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const auto t0 = std::chrono::steady_clock::now();
        delete c;
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY(sawCancel);
        QVERIFY2(s < 2.0, qPrintable(QString::number(s)));
        const int before = delivered;
        QCoreApplication::processEvents();
        QCOMPARE(delivered, before);
    }

    // The default runner: quantize_model on a small float model (or, in a build without it,
    // its clear refusal).
    void realQuantizeModel() {
        ModelWriterSpec spec;
        spec.hidden_size = 256;
        spec.intermediate_size = 512;
        spec.num_layers = 2;
        spec.max_position = 256;
        const QString in = dir_.filePath("f32.gguf");
        QVERIFY(write_model(spec, in.toStdString()).ok());
        QuantizeController c;
        QSignalSpy finished(&c, &QuantizeController::finished);
        QSignalSpy failed(&c, &QuantizeController::failed);
        QuantizeOptions o;
        o.input = in.toStdString();
        o.output = dir_.filePath("f32-Q8_0.gguf").toStdString();
        o.target = "Q8_0";
        QCOMPARE(c.start(o), QString());
        QVERIFY(c.waitForFinished(120000));
#ifdef LLMWB_HAVE_QUANTIZE_MODEL
        QVERIFY2(finished.size() == 1,
                 failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
        QVERIFY(QFileInfo::exists(dir_.filePath("f32-Q8_0.gguf")));
        const auto report = finished.at(0).at(0).value<QuantizeReport>();
        QVERIFY(!report.tensors.empty());
        QVERIFY(report.bits_per_weight > 8.0 && report.bits_per_weight < 9.0);
#else
        QCOMPARE(failed.size(), 1);
        QVERIFY(failed.at(0).at(0).toString().contains("not built"));
        QVERIFY(!QFileInfo::exists(dir_.filePath("f32-Q8_0.gguf")));
#endif
    }
};

QTEST_GUILESS_MAIN(TstAppQuantizeController)
#include "tst_app_quantize_controller.moc"
