// Helpers of the llmwb CLI tests: run the real binary with QProcess, locate the fetched test
// assets, parse the CLI's one-line JSON output, write models with `llmwb make-model`.
#pragma once

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <vector>

namespace clitest {

// The outcome of one llmwb process.
struct CliResult {
    bool started = false;
    bool timedOut = false;
    bool crashed = false; // ended by a signal (QProcess::CrashExit)
    int exitCode = -1;
    QByteArray out;
    QByteArray err;

    bool ok() const { return started && !timedOut && !crashed && exitCode == 0; }
    // The command line, exit status and (shortened) stderr, for failure messages.
    QString describe() const;
    QString command;
};

// $LLMWB_BUILD_DIR/app/cli/llmwb, else the path the build system compiled in.
QString cliPath();
// $LLMWB_TEST_ASSETS, else ~/.cache/llmwb/test-assets.
QString assetsDir();
// assetsDir()/tokenizers/<name> (holds tokenizer.json and tokenizer_config.json).
QString tokenizerDir(const QString& name);

// Runs `llmwb args...` with XDG_DATA_HOME=xdgDataHome (the demo model goes there) and the
// stdin closed; kills it after timeoutMs.
CliResult runCli(const QStringList& args, const QString& xdgDataHome, int timeoutMs = 60000);

// `llmwb make-model` of a small model (2 layers, hidden 64, 4 heads / 2 KV heads, FFN 128,
// context 256) at `path`.
CliResult makeSmallModel(const QString& path, const QString& arch, int seed,
                         const QString& xdgDataHome);

// The single JSON object the CLI prints with --json; *ok is false when stdout is not exactly
// one JSON object followed by a newline.
QJsonObject parseJsonLine(const QByteArray& out, bool* ok);

std::vector<int> toIntVector(const QJsonArray& a);
QString idList(const std::vector<int>& ids); // "1,2,3"

// Reads a whole file (empty QByteArray and *ok false when it cannot be read).
QByteArray readFile(const QString& path, bool* ok);
bool writeFile(const QString& path, const QByteArray& bytes);

} // namespace clitest

// QVERIFY that a CliResult exited normally with code 0, printing its stderr otherwise.
#define CLI_VERIFY_OK(r) QVERIFY2((r).ok(), qPrintable((r).describe()))
