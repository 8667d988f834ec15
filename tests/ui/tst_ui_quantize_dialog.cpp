// Model > Quantize... (ui/quantize_dialog.h) with a fake runner in its controller: the output
// suggestion, Start / progress / report / Load the new model, Cancel, a failure's whole message,
// closing while a run is going (asks; stops then closes), replacing an existing file, and the
// zh_CN translation. Offscreen.
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTranslator>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "app/services/app_settings.h"
#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "ui/main_window.h"
#include "ui/quantize_dialog.h"

using namespace llmwb;

namespace {

// A run the test steers: reports `total` tensors one by one while `go` is set, holds while it is
// not, ends on cancel (an error) or after the last tensor (a report with one fallback).
struct Steered {
    std::atomic<bool> go{true};
    std::atomic<int> runs{0};
    int total = 4;
    bool fail = false;

    QuantizeController::Runner runner() {
        return [this](const QuantizeOptions& o, const QuantizeProgressFn& progress,
                      const std::atomic<bool>* cancel) -> Result<QuantizeReport> {
            ++runs;
            QuantizeProgress p;
            p.tensors_total = total;
            p.bytes_total = int64_t{total} << 20;
            p.stage = "quantizing";
            for (int i = 0; i <= total; ++i) {
                while (!go && !*cancel)
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                if (*cancel)
                    return make_error("cancelled");
                p.tensors_done = i;
                p.bytes_done = int64_t{i} << 20;
                p.seconds = 0.5 * (i + 1);
                p.current_tensor = "blk." + std::to_string(i) + ".ffn_down.weight";
                progress(p);
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
            if (fail)
                return make_error("quantize: " + o.input +
                                  ": tensor blk.0.attn_q.weight has 100 columns, which no type "
                                  "of the Q4_K_M recipe can hold (Q4_K -> Q5_0 -> none); "
                                  "nothing was written");
            QuantizeReport r;
            r.tensors = {{"token_embd.weight", DType::Q4_K, DType::Q4_K, 1000, 256},
                         {"blk.0.ffn_down.weight", DType::Q5_0, DType::Q4_K, 256, 896},
                         {"blk.0.attn_v.weight", DType::Q6_K, DType::Q6_K, 128, 256},
                         {"output_norm.weight", DType::F32, DType::F32, 1, 256}};
            r.fallback_tensors = 1;
            r.bytes_in = 4 << 20;
            r.bytes_out = 1 << 20;
            r.bits_per_weight = 4.91;
            r.seconds = 2.25;
            r.notes = {"importance: none (round-to-nearest)"};
            return r;
        };
    }
};

bool waitFor(const std::function<bool()>& cond, int ms = 5000) {
    QElapsedTimer t;
    t.start();
    while (!cond() && t.elapsed() < ms)
        QTest::qWait(5);
    return cond();
}

QPushButton* button(QuantizeDialog& d, const char* name) {
    return d.findChild<QPushButton*>(QLatin1String(name));
}

} // namespace

class TestUiQuantizeDialog : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QTranslator en_;
    QString path(const QString& name) const { return dir_.filePath(name); }

  private slots:
    void initTestCase() {
        // As the app does in English: the plurals come from llmwb_en.qm.
        QVERIFY(en_.load(QStringLiteral(":/i18n/llmwb_en.qm")));
        QCoreApplication::installTranslator(&en_);
    }

    void suggestedOutput() {
        QCOMPARE(QuantizeDialog::suggestedOutput(QStringLiteral("/m/foo-F16.gguf"), "Q4_K_M"),
                 QDir::toNativeSeparators(QStringLiteral("/m/foo-Q4_K_M.gguf")));
        QCOMPARE(QuantizeDialog::suggestedOutput(QStringLiteral("/m/bar.gguf"), "Q8_0"),
                 QDir::toNativeSeparators(QStringLiteral("/m/bar-Q8_0.gguf")));
        QCOMPARE(QuantizeDialog::suggestedOutput(QStringLiteral("/m/x_bf16.GGUF"), "IQ4_XS"),
                 QDir::toNativeSeparators(QStringLiteral("/m/x-IQ4_XS.gguf")));
        // A Hugging Face folder: its name, next to it.
        QVERIFY(QDir().mkpath(path("Qwen2.5-0.5B")));
        QCOMPARE(QuantizeDialog::suggestedOutput(path("Qwen2.5-0.5B"), "Q5_K_M"),
                 QDir::toNativeSeparators(path("Qwen2.5-0.5B-Q5_K_M.gguf")));
        QCOMPARE(QuantizeDialog::suggestedOutput(QString(), "Q8_0"), QString());
    }

    void outputFollowsInputAndTarget() {
        Steered s;
        QuantizeController c(s.runner());
        QuantizeDialog d(&c);
        auto* combo = d.findChild<QComboBox*>(QStringLiteral("quantizeTarget"));
        QVERIFY(combo->count() >= 10); // every target of quantize_targets()
        QCOMPARE(d.target(), QStringLiteral("Q4_K_M"));
        auto* description = d.findChild<QLabel*>(QStringLiteral("quantizeTargetDescription"));
        QVERIFY2(description->text().contains("Q4_K + Q6_K"), qPrintable(description->text()));
        d.setInput(path("m-F16.gguf"));
        QCOMPARE(d.output(), path("m-Q4_K_M.gguf"));
        d.setTarget("q8_0");
        QCOMPARE(d.target(), QStringLiteral("Q8_0"));
        QCOMPARE(d.output(), path("m-Q8_0.gguf"));
        QVERIFY(description->text().contains("Q8_0"));
        // Once the user typed an output, it stays.
        auto* out = d.findChild<QLineEdit*>(QStringLiteral("quantizeOutput"));
        out->clear();
        QTest::keyClicks(out, path("mine.gguf"));
        d.setTarget("Q6_K");
        QCOMPARE(d.output(), path("mine.gguf"));
    }

    void runShowsProgressAndReport() {
        Steered s;
        s.go = false;
        QuantizeController c(s.runner());
        QuantizeDialog d(&c);
        d.show();
        d.setInput(path("run-F16.gguf"));
        QSignalSpy load(&d, &QuantizeDialog::loadModelRequested);
        QTest::mouseClick(button(d, "quantizeStart"), Qt::LeftButton);
        QVERIFY(d.isRunning());
        QVERIFY(button(d, "quantizeCancel")->isVisible());
        QVERIFY(!button(d, "quantizeStart")->isVisible());
        QVERIFY(!d.findChild<QLineEdit*>(QStringLiteral("quantizeInput"))->isEnabled());
        QVERIFY(!d.findChild<QComboBox*>(QStringLiteral("quantizeTarget"))->isEnabled());
        s.go = true;
        auto* bar = d.findChild<QProgressBar*>(QStringLiteral("quantizeProgress"));
        QVERIFY(waitFor([&] { return bar->maximum() == 4 || !d.isRunning(); }));
        QVERIFY(waitFor([&] { return !d.isRunning(); }));
        QCOMPARE(bar->value(), 4);
        QVERIFY2(d.statusText().contains(path("run-Q4_K_M.gguf")), qPrintable(d.statusText()));
        const QString report = d.reportText();
        for (const char* t : {"Q4_K ×1", "Q5_0 ×1", "Q6_K ×1", "F32 ×1"})
            QVERIFY2(report.contains(QString::fromUtf8(t)), qPrintable(report));
        QVERIFY2(report.contains("4.91"), qPrintable(report));
        QVERIFY2(report.contains("1 tensor in a fallback type"), qPrintable(report));
        QVERIFY2(report.contains("blk.0.ffn_down.weight: Q4_K → Q5_0"), qPrintable(report));
        QVERIFY2(report.contains("importance: none"), qPrintable(report));
        QVERIFY2(report.contains("2.2 s") || report.contains("2.3 s"), qPrintable(report));
        QVERIFY(d.findChild<QLineEdit*>(QStringLiteral("quantizeInput"))->isEnabled());
        QPushButton* loadButton = button(d, "quantizeLoad");
        QVERIFY(loadButton->isVisible());
        QTest::mouseClick(loadButton, Qt::LeftButton);
        QCOMPARE(load.size(), 1);
        QCOMPARE(load.at(0).at(0).toString(), path("run-Q4_K_M.gguf"));
        QVERIFY(!d.isVisible());
    }

    // The status line while running: tensors done / total, MB/s, the tensor.
    void progressText() {
        Steered s;
        s.total = 10;
        QuantizeController c(s.runner());
        QuantizeDialog d(&c);
        d.setInput(path("p-F16.gguf"));
        QStringList seen;
        connect(&c, &QuantizeController::progress, this,
                [&] { seen << d.findChild<QLabel*>(QStringLiteral("quantizeStatus"))->text(); });
        d.start();
        QVERIFY(waitFor([&] { return !d.isRunning(); }));
        QVERIFY(!seen.isEmpty());
        bool matched = false;
        const QRegularExpression re(
            QStringLiteral("^Tensor \\d+ of 10 · [\\d.]+ MB/s · Quantizing blk\\.\\d+\\.ffn_down"));
        for (const QString& t : seen)
            matched = matched || re.match(t).hasMatch();
        QVERIFY2(matched, qPrintable(seen.join('\n')));
    }

    void cancelButton() {
        Steered s;
        s.go = false;
        QuantizeController c(s.runner());
        QuantizeDialog d(&c);
        d.show();
        d.setInput(path("c-F16.gguf"));
        d.start();
        QVERIFY(d.isRunning());
        QTest::mouseClick(button(d, "quantizeCancel"), Qt::LeftButton);
        QVERIFY(waitFor([&] { return !d.isRunning(); }));
        QCOMPARE(d.statusText(), QStringLiteral("Cancelled; no output file was written."));
        QVERIFY(!button(d, "quantizeLoad")->isVisible());
        QVERIFY(button(d, "quantizeStart")->isVisible());
        QVERIFY(d.isVisible());
    }

    void failureShownWhole() {
        Steered s;
        s.fail = true;
        QuantizeController c(s.runner());
        QuantizeDialog d(&c);
        d.show();
        d.setInput(path("f-F16.gguf"));
        d.start();
        QVERIFY(waitFor([&] { return !d.isRunning(); }));
        QCOMPARE(d.statusText(), QStringLiteral("Quantization failed."));
        const QString expected =
            "quantize: " + path("f-F16.gguf") +
            ": tensor blk.0.attn_q.weight has 100 columns, which no type of the Q4_K_M recipe "
            "can hold (Q4_K -> Q5_0 -> none); nothing was written";
        QCOMPARE(d.reportText(), expected);
        QVERIFY(!button(d, "quantizeLoad")->isVisible());

        // A refusal before starting (no input) is shown the same way.
        d.setInput(QString());
        d.setOutput(QString());
        d.start();
        QVERIFY(!d.isRunning());
        QCOMPARE(d.reportText(), QStringLiteral("Choose the model to quantize."));
    }

    // Closing while running asks; "no" keeps it running, "yes" stops it and then closes.
    void closeWhileRunning() {
        Steered s;
        s.go = false;
        QuantizeController c(s.runner());
        QuantizeDialog d(&c);
        QStringList questions;
        bool answer = false;
        d.setQuestionHandler([&](const QString& q) {
            questions << q;
            return answer;
        });
        d.show();
        d.setInput(path("x-F16.gguf"));
        d.start();
        QVERIFY(d.isRunning());
        d.close();
        QCOMPARE(questions.size(), 1);
        QVERIFY(questions[0].contains("Stop it and close?"));
        QVERIFY(d.isVisible());
        QVERIFY(d.isRunning());
        QVERIFY(!c.isCancelling());
        QTest::keyClick(&d, Qt::Key_Escape); // Escape asks too
        QCOMPARE(questions.size(), 2);
        QVERIFY(d.isVisible());
        answer = true;
        d.close();
        QCOMPARE(questions.size(), 3);
        QVERIFY(c.isCancelling());
        QVERIFY(d.isVisible()); // until the run has stopped; the GUI thread never waits
        QVERIFY(waitFor([&] { return !d.isVisible(); }));
        QVERIFY(!d.isRunning());
        QCOMPARE(d.statusText(), QStringLiteral("Cancelled; no output file was written."));
    }

    void replaceAsks() {
        Steered s;
        QuantizeController c(s.runner());
        QuantizeDialog d(&c);
        QFile f(path("exists-Q4_K_M.gguf"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        QStringList questions;
        bool answer = false;
        d.setQuestionHandler([&](const QString& q) {
            questions << q;
            return answer;
        });
        d.setInput(path("exists-F16.gguf"));
        d.start();
        QCOMPARE(questions.size(), 1);
        QVERIFY(questions[0].contains("already exists"));
        QVERIFY(!d.isRunning());
        QCOMPARE(s.runs.load(), 0);
        answer = true;
        d.start();
        QVERIFY(waitFor([&] { return !d.isRunning(); }));
        QCOMPARE(s.runs.load(), 1);
    }

    void chinese() {
        Steered s;
        QuantizeController c(s.runner());
        QuantizeDialog d(&c);
        QTranslator zh;
        QVERIFY(zh.load(QStringLiteral(":/i18n/llmwb_zh_CN.qm")));
        QCoreApplication::installTranslator(&zh);
        QCoreApplication::processEvents();
        QCOMPARE(d.windowTitle(), QStringLiteral("量化模型"));
        QCOMPARE(button(d, "quantizeStart")->text(), QStringLiteral("开始"));
        QCOMPARE(button(d, "quantizeLoad")->text(), QStringLiteral("加载新模型"));
        auto* description = d.findChild<QLabel*>(QStringLiteral("quantizeTargetDescription"));
        QVERIFY2(description->text().contains(QStringLiteral("预设组合")),
                 qPrintable(description->text()));
        d.setInput(path("zh-F16.gguf"));
        s.fail = true;
        d.start();
        QVERIFY(waitFor([&] { return !d.isRunning(); }));
        QCOMPARE(d.statusText(), QStringLiteral("量化失败。"));
        QCoreApplication::removeTranslator(&zh);
        QCoreApplication::processEvents();
        QCOMPARE(d.statusText(), QStringLiteral("Quantization failed."));
    }

    // Model > Quantize... in the main window: the loaded model is the input; "Load the new
    // model" opens the written file as File > Open model does.
    void mainWindowEntry() {
        Database db(path("mw.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        AppSettings settings(path("mw.ini"));
        MainWindow w(controller, settings);
        QAction* quantize = w.action("quantizeModelAction");
        QVERIFY(quantize);
        bool inModelMenu = false;
        for (QAction* a : w.menuBar()->actions()) {
            if (a->menu() && a->menu()->actions().contains(quantize))
                inModelMenu = a->text() == QStringLiteral("&Model");
        }
        QVERIFY(inModelMenu);
        QCOMPARE(quantize->text(), QStringLiteral("&Quantize…"));
        ModelMetadata m;
        m.name = QStringLiteral("Loaded");
        m.path = path("loaded-F16.gguf");
        w.onModelLoaded(m);
        QVERIFY(!w.quantizeDialog());
        quantize->trigger();
        QuantizeDialog* d = w.quantizeDialog();
        QVERIFY(d && d->isVisible());
        QCOMPARE(d->input(), path("loaded-F16.gguf"));
        QCOMPARE(d->output(), path("loaded-Q4_K_M.gguf"));
        QSignalSpy open(&w, &MainWindow::openModelRequested);
        emit d->loadModelRequested(path("loaded-Q4_K_M.gguf"));
        QCOMPARE(open.size(), 1);
        QCOMPARE(open.at(0).at(0).toString(), path("loaded-Q4_K_M.gguf"));
        // Another model loaded later is the new default input (the user chose none).
        m.path = path("other-BF16.gguf");
        w.onModelLoaded(m);
        quantize->trigger();
        QCOMPARE(w.quantizeDialog(), d);
        QCOMPARE(d->input(), path("other-BF16.gguf"));
    }
};

QTEST_MAIN(TestUiQuantizeDialog)
#include "tst_ui_quantize_dialog.moc"
