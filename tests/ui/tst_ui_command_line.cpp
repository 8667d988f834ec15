// `llm-workbench --help` and `--version` answer without a display: run the built binary with
// no QT_QPA_PLATFORM, no DISPLAY and no WAYLAND_DISPLAY (as on a server or in a package build)
// and expect exit code 0 with the text on stdout. Skipped when the GUI was not built.
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QtTest>

class TestUiCommandLine : public QObject {
    Q_OBJECT

  private:
    QString binary_;

    struct Result {
        int exitCode = -1;
        QString out, err;
    };

    Result run(const QStringList& args) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
            env.remove(QLatin1String(name));
        p.setProcessEnvironment(env);
        p.start(binary_, args);
        Result r;
        if (!p.waitForStarted(10000) || !p.waitForFinished(30000)) {
            p.kill();
            p.waitForFinished();
            r.err = QStringLiteral("did not run: ") + p.errorString();
            return r;
        }
        r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
        r.out = QString::fromUtf8(p.readAllStandardOutput());
        r.err += QString::fromUtf8(p.readAllStandardError());
        return r;
    }

  private slots:
    void initTestCase() {
        const QString build = qEnvironmentVariable("LLMWB_BUILD_DIR");
        binary_ = build + QStringLiteral("/app/gui/llm-workbench");
        if (build.isEmpty() || !QFileInfo(binary_).isExecutable())
            QSKIP("llm-workbench is not built (LLMWB_BUILD_DIR/app/gui/llm-workbench)");
    }

    void helpWithoutDisplay() {
        for (const QString& flag : {QStringLiteral("--help"), QStringLiteral("-h")}) {
            const Result r = run({flag});
            QVERIFY2(r.exitCode == 0, qPrintable(flag + ": " + r.err));
            QVERIFY2(r.out.contains(QStringLiteral("Usage:")), qPrintable(r.out));
            QVERIFY(r.out.contains(QStringLiteral("llm-workbench")));
            // Every option of the app is listed.
            for (const char* option : {"--help", "--version", "--data-dir <DIR>",
                                       "--screenshot <DIR>", "--model <PATH>"})
                QVERIFY2(r.out.contains(QLatin1String(option)), option);
        }
    }

    void versionWithoutDisplay() {
        const Result r = run({QStringLiteral("--version")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.startsWith(QStringLiteral("llm-workbench ")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QRegularExpression(QStringLiteral("\\d+\\.\\d+"))),
                 qPrintable(r.out));
        // After other options too: --help/--version win before anything needs a display.
        const Result r2 = run({QStringLiteral("--data-dir"), QStringLiteral("/nonexistent"),
                               QStringLiteral("--version")});
        QCOMPARE(r2.exitCode, 0);
        QCOMPARE(r2.out, r.out);
    }
};

QTEST_GUILESS_MAIN(TestUiCommandLine)
#include "tst_ui_command_line.moc"
