// The first-run panel (ui/first_run_dialog.h) on a fixture HOME made here: an LM Studio model,
// an Ollama store and a broken GGUF in a user folder fill the list; the context and sequence
// choosers update the Fits column (colour and reason); Add folder adds rows and reports the
// folders; a double-click asks to load the model (not for an error row); the machine's facts;
// the zh_CN translation. Offscreen.
#include <QColor>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTranslator>
#include <QtTest>

#include "app/discovery/model_discovery.h"
#include "engine/model/model_writer.h"
#include "ui/first_run_dialog.h"

using namespace llmwb;

namespace {

bool writeTinyGguf(const QString& path) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    ModelWriterSpec s;
    s.arch = Architecture::Qwen2;
    s.hidden_size = 64;
    s.intermediate_size = 128;
    s.num_layers = 2;
    s.num_heads = 4;
    s.num_kv_heads = 2;
    s.max_position = 1024;
    return bool(write_model(s, path.toStdString()));
}

bool writeText(const QString& path, const QByteArray& text) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
}

// A CPU machine with `available` bytes of RAM free.
MachineFacts machineWith(int64_t available) {
    MachineFacts m;
    m.cpu_model = "Test CPU 9000";
    m.simd_level = "avx2";
    m.logical_cores = 8;
    m.physical_cores = 4;
    m.ram_bytes = available * 2;
    m.ram_available_bytes = available;
    m.os = "Test OS";
    m.kernel = "Linux 6.1 x86_64";
    m.gpu_note = "no driver";
    return m;
}

int rowOf(const QTableWidget* t, const QString& name) {
    for (int r = 0; r < t->rowCount(); ++r)
        if (t->item(r, FirstRunDialog::ColName)->text() == name)
            return r;
    return -1;
}

} // namespace

class TstFirstRun : public QObject {
    Q_OBJECT

    QTemporaryDir home_;
    DiscoveryRoots roots_;
    QString userDir_;

  private slots:
    void initTestCase() {
        QVERIFY(home_.isValid());
        const QString h = home_.path();
        QVERIFY(writeTinyGguf(h + "/.lmstudio/models/acme/tiny-GGUF/tiny-F32.gguf"));
        const QString hex(64, QLatin1Char('a'));
        QVERIFY(writeTinyGguf(h + "/ollama/blobs/sha256-" + hex));
        QVERIFY(writeText(h + "/ollama/manifests/registry.ollama.ai/library/tiny/latest",
                          R"({"layers":[{"mediaType":"application/vnd.ollama.image.model",)"
                          R"("digest":"sha256:)" +
                              hex.toLatin1() + R"("}]})"));
        userDir_ = h + "/mine";
        QVERIFY(writeText(userDir_ + "/broken.gguf", QByteArray("GGUF\x03\x00\x00\x00", 8)));
        roots_.home = h.toStdString();
        roots_.ollama = {(h + "/ollama").toStdString()};
    }

    void listsTheModelsFound() {
        FirstRunDialog d(machineWith(int64_t(16) << 30), roots_, {userDir_});
        QTableWidget* t = d.table();
        QCOMPARE(t->rowCount(), 3);
        const int lms = rowOf(t, "acme/tiny-GGUF/tiny-F32.gguf");
        const int ollama = rowOf(t, "tiny:latest");
        const int broken = rowOf(t, "broken.gguf");
        QVERIFY(lms >= 0 && ollama >= 0 && broken >= 0);
        QCOMPARE(t->item(lms, FirstRunDialog::ColSource)->text(), QString("LM Studio"));
        QCOMPARE(t->item(ollama, FirstRunDialog::ColSource)->text(), QString("Ollama"));
        QCOMPARE(t->item(broken, FirstRunDialog::ColSource)->text(), QString("Folder"));
        QCOMPARE(t->item(lms, FirstRunDialog::ColArch)->text(), QString("qwen2"));
        QVERIFY(t->item(lms, FirstRunDialog::ColTypes)->text().startsWith("F32 "));
        QCOMPARE(t->item(lms, FirstRunDialog::ColContext)->text(), QLocale().toString(1024));
        QVERIFY(t->item(lms, FirstRunDialog::ColFit)->text().startsWith("fits"));
        // The broken file: an error row naming the file, grey.
        QVERIFY(t->item(broken, FirstRunDialog::ColFit)->text().startsWith("error:"));
        QVERIFY(t->item(broken, FirstRunDialog::ColFit)->text().contains("broken.gguf"));
        // The machine's facts above the list.
        const QString machine = d.findChild<QLabel*>("machineLabel")->text();
        QVERIFY(machine.contains("Test CPU 9000"));
        QVERIFY(machine.contains("avx2"));
    }

    // 300 MiB available: budget 0.9 x 300 MiB = 270 MiB; the CPU runtime estimate takes 256 MiB,
    // which leaves ~14 MiB for the tiny model's weights, activations and KV (f16: 2 x 2 layers x
    // 2 KV heads x 16 x 2 bytes = 256 bytes per token): 4096 tokens (1 MiB) fit, 2^20 (256 MiB)
    // do not, nor 64 sequences of 4096.
    void fitFollowsTheChoosers() {
        FirstRunDialog d(machineWith(int64_t(300) << 20), roots_, {});
        QTableWidget* t = d.table();
        const int row = rowOf(t, "acme/tiny-GGUF/tiny-F32.gguf");
        QVERIFY(row >= 0);
        QTableWidgetItem* fit = t->item(row, FirstRunDialog::ColFit);
        QVERIFY2(fit->text().startsWith("fits"), qPrintable(fit->text()));
        const QColor green = fit->foreground().color();
        d.contextBox()->setValue(1 << 20);
        QVERIFY2(!fit->text().startsWith("fits"), qPrintable(fit->text()));
        QVERIFY(fit->foreground().color() != green);
        QVERIFY(fit->toolTip().contains("needs"));
        d.contextBox()->setValue(4096);
        QVERIFY(fit->text().startsWith("fits"));
        d.seqsBox()->setValue(64);
        QVERIFY2(!fit->text().startsWith("fits"), qPrintable(fit->text()));
        d.seqsBox()->setValue(1);
        QVERIFY(fit->text().startsWith("fits"));
    }

    void addFolderAddsRows() {
        QTemporaryDir extra;
        QVERIFY(writeTinyGguf(extra.path() + "/more/extra.gguf"));
        FirstRunDialog d(machineWith(int64_t(16) << 30), roots_, {});
        QCOMPARE(d.table()->rowCount(), 2);
        QSignalSpy spy(&d, &FirstRunDialog::foldersChanged);
        d.addFolder(extra.path());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).toStringList(), QStringList{extra.path()});
        QCOMPARE(d.table()->rowCount(), 3);
        QVERIFY(rowOf(d.table(), "more/extra.gguf") >= 0);
        d.addFolder(extra.path()); // already there: nothing
        QCOMPARE(spy.count(), 1);
    }

    void doubleClickLoads() {
        FirstRunDialog d(machineWith(int64_t(16) << 30), roots_, {userDir_});
        QSignalSpy spy(&d, &FirstRunDialog::openModelRequested);
        const int broken = rowOf(d.table(), "broken.gguf");
        emit d.table()->cellDoubleClicked(broken, 0);
        QCOMPARE(spy.count(), 0); // an error row loads nothing
        const int ollama = rowOf(d.table(), "tiny:latest");
        emit d.table()->cellDoubleClicked(ollama, 0);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).toString(),
                 home_.path() + "/ollama/blobs/sha256-" + QString(64, QLatin1Char('a')));
    }

    void machineHtmlNamesTheGpu() {
        MachineFacts m = machineWith(int64_t(8) << 30);
        GpuFacts g;
        g.name = "NVIDIA H200";
        g.memory_bytes = int64_t(141) << 30;
        g.compute_capability = "9.0";
        g.driver = "560.35.03";
        m.gpus.push_back(g);
        const QString html = FirstRunDialog::machineHtml(m);
        QVERIFY(html.contains("NVIDIA H200"));
        QVERIFY(html.contains("9.0"));
        QVERIFY(html.contains("560.35.03"));
        QVERIFY(html.contains("4 cores"));
        QVERIFY(!FirstRunDialog::machineHtml(machineWith(1 << 30)).contains("H200"));
    }

    void chineseTranslation() {
        QTranslator zh;
        QVERIFY(zh.load(QStringLiteral(":/i18n/llmwb_zh_CN.qm")));
        QCoreApplication::installTranslator(&zh);
        FirstRunDialog d(machineWith(int64_t(16) << 30), roots_, {});
        QCoreApplication::removeTranslator(&zh);
        QCOMPARE(d.table()->horizontalHeaderItem(FirstRunDialog::ColFit)->text(),
                 QString::fromUtf8("能否装下"));
        const int row = rowOf(d.table(), "tiny:latest");
        QVERIFY(d.table()
                    ->item(row, FirstRunDialog::ColFit)
                    ->text()
                    .startsWith(QString::fromUtf8("装得下")));
    }
};

QTEST_MAIN(TstFirstRun)
#include "tst_ui_first_run.moc"
