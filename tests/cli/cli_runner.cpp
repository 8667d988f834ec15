#include "cli/cli_runner.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QProcess>
#include <QProcessEnvironment>

namespace clitest {

QString CliResult::describe() const {
    QString status;
    if (!started)
        status = "did not start";
    else if (timedOut)
        status = "timed out";
    else if (crashed)
        status = "crashed (signal)";
    else
        status = QString("exit code %1").arg(exitCode);
    QString e = QString::fromUtf8(err.left(800));
    return QString("`%1`: %2; stderr: %3").arg(command, status, e);
}

QString cliPath() {
    QString build = qEnvironmentVariable("LLMWB_BUILD_DIR");
    if (!build.isEmpty())
        return build + "/app/cli/llmwb";
#ifdef LLMWB_CLI_PATH
    return QStringLiteral(LLMWB_CLI_PATH);
#else
    return QStringLiteral("llmwb");
#endif
}

QString assetsDir() {
    QString a = qEnvironmentVariable("LLMWB_TEST_ASSETS");
    if (!a.isEmpty())
        return a;
    return QDir::homePath() + "/.cache/llmwb/test-assets";
}

QString tokenizerDir(const QString& name) {
    return assetsDir() + "/tokenizers/" + name;
}

CliResult runCli(const QStringList& args, const QString& xdgDataHome, int timeoutMs) {
    CliResult r;
    r.command = "llmwb " + args.join(' ');
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("XDG_DATA_HOME", xdgDataHome);
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::SeparateChannels);
    p.start(cliPath(), args);
    if (!p.waitForStarted(10000)) {
        r.err = p.errorString().toUtf8();
        return r;
    }
    r.started = true;
    p.closeWriteChannel();
    if (!p.waitForFinished(timeoutMs)) {
        r.timedOut = true;
        p.kill();
        p.waitForFinished(5000);
    }
    r.crashed = p.exitStatus() == QProcess::CrashExit && !r.timedOut;
    r.exitCode = p.exitCode();
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QJsonObject parseJsonLine(const QByteArray& out, bool* ok) {
    *ok = false;
    if (!out.endsWith('\n') || out.count('\n') != 1)
        return {};
    QJsonParseError e;
    QJsonDocument d = QJsonDocument::fromJson(out, &e);
    if (e.error != QJsonParseError::NoError || !d.isObject())
        return {};
    *ok = true;
    return d.object();
}

std::vector<int> toIntVector(const QJsonArray& a) {
    std::vector<int> v;
    v.reserve(size_t(a.size()));
    for (const auto& x : a)
        v.push_back(x.toInt(-1));
    return v;
}

QString idList(const std::vector<int>& ids) {
    QStringList s;
    for (int id : ids)
        s << QString::number(id);
    return s.join(',');
}

QByteArray readFile(const QString& path, bool* ok) {
    QFile f(path);
    *ok = f.open(QIODevice::ReadOnly);
    return *ok ? f.readAll() : QByteArray();
}

bool writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    return f.write(bytes) == bytes.size();
}

CliResult makeSmallModel(const QString& path, const QString& arch, int seed,
                         const QString& xdgDataHome) {
    return runCli({"make-model", "--out", path, "--arch", arch, "--layers", "2", "--hidden", "64",
                   "--heads", "4", "--kv-heads", "2", "--intermediate", "128", "--context", "256",
                   "--seed", QString::number(seed)},
                  xdgDataHome);
}

} // namespace clitest
