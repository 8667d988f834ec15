// Report archives (app/report/zip): a round trip of bytes; writing that fails (a missing or
// read-only folder, a full disk simulated with a file size limit) leaves no file under the
// target's name and an existing one intact; and handcrafted hostile archives (names outside the
// root, symlinks, bombs, lying headers, too many entries, duplicates, truncation, CRC) are each
// refused with the archive, the entry and the reason, writing nothing anywhere.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <quazip/quazip.h>
#include <quazip/quazipfileinfo.h>
#include <sys/resource.h>
#include <unistd.h>

#include "app/report/zip/report_zip.h"
#include "report/zip_builder.h"

using namespace llmwb;
using namespace llmwb::test;

namespace {

std::string str(const QString& s) {
    return s.toStdString();
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeBytes(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

// Bytes that do not compress (a fixed xorshift stream).
std::string noise(size_t n, uint64_t seed) {
    std::string s(n, '\0');
    for (char& c : s) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        c = static_cast<char>(seed >> 32);
    }
    return s;
}

ReportFiles sampleFiles() {
    std::string csv = "run,id,arrival_s,first_token_s,finish_s,input_tokens,output_tokens\n";
    for (int64_t i = 0; csv.size() < (2u << 20); ++i)
        csv += "0," + std::to_string(i) + ",0." + std::to_string(i * 7919 % 1000) + ",1." +
               std::to_string(i * 104729 % 997) + ",2.5," + std::to_string(100 + i % 37) + "," +
               std::to_string(i % 255) + "\n";
    std::string binary;
    for (int i = 0; i < 256; ++i)
        binary += static_cast<char>(i);
    return {{"report.html", "<!doctype html><title>r</title>\xe4\xbd\xa0\xe5\xa5\xbd"},
            {"results.json", "{\"date\": \"20241201-123456\", \"completed\": 16}\n"},
            {"requests.csv", csv},
            {"empty.txt", ""},
            {"extra/bytes.bin", binary},
            {"noise.bin", noise(300000, 7)}};
}

QStringList entriesOf(const QString& dir) {
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System |
                               QDir::NoDotAndDotDot);
}

// Lowers this process's file size limit (writes past it fail with EFBIG, as on a full disk)
// for the scope's lifetime.
class FileSizeLimit {
  public:
    explicit FileSizeLimit(rlim_t bytes) {
        getrlimit(RLIMIT_FSIZE, &old_);
        previous_ = std::signal(SIGXFSZ, SIG_IGN);
        rlimit lim = old_;
        lim.rlim_cur = bytes;
        ok_ = setrlimit(RLIMIT_FSIZE, &lim) == 0;
    }
    ~FileSizeLimit() {
        setrlimit(RLIMIT_FSIZE, &old_);
        std::signal(SIGXFSZ, previous_);
    }
    bool ok() const { return ok_; }

  private:
    rlimit old_{};
    void (*previous_)(int) = nullptr;
    bool ok_ = false;
};

} // namespace

class TestReportZip : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QString work_; // the current directory while hostile archives are read: must stay empty

    // Reads `archive` (written into a fresh folder) and checks it is refused with a message that
    // names the archive and contains every one of `parts`; nothing appears anywhere.
    void expectRefused(const QByteArray& archive, const QStringList& parts,
                       const ZipLimits& limits = {}) {
        QTemporaryDir folder(dir_.filePath(QStringLiteral("case-XXXXXX")));
        QVERIFY(folder.isValid());
        const QString path = folder.filePath(QStringLiteral("hostile.zip"));
        QVERIFY(writeBytes(path, archive));
        const auto result = read_report_zip(str(path), limits);
        QVERIFY2(!result.ok(), "a hostile archive was accepted");
        const QString message = QString::fromStdString(result.message());
        qInfo("%s", qPrintable(message));
        QVERIFY2(message.startsWith(path + QStringLiteral(": ")), qPrintable(message));
        for (const QString& part : parts)
            QVERIFY2(message.contains(part),
                     qPrintable(message + QStringLiteral("  (wanted: ") + part + QLatin1Char(')')));
        QCOMPARE(entriesOf(folder.path()), QStringList{QStringLiteral("hostile.zip")});
        QCOMPARE(entriesOf(work_), QStringList());
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        work_ = dir_.filePath(QStringLiteral("cwd"));
        QVERIFY(QDir().mkpath(work_));
        QVERIFY(QDir::setCurrent(work_));
    }

    void roundTripIsByteExact() {
        const ReportFiles files = sampleFiles();
        const QString path = dir_.filePath(QStringLiteral("round.zip"));
        const Status written = write_report_zip(str(path), files);
        QVERIFY2(written.ok(), written.ok() ? "" : written.message().c_str());
        const auto read = read_report_zip(str(path));
        QVERIFY2(read.ok(), read.ok() ? "" : read.message().c_str());
        QCOMPARE(read->size(), files.size());
        for (size_t i = 0; i < files.size(); ++i) {
            QCOMPARE(read->at(i).first, files[i].first);
            QVERIFY2(read->at(i).second == files[i].second, files[i].first.c_str());
        }
        // Deflated, regular files with the run's date, and no temporary file left beside it.
        QuaZip zip(path);
        QVERIFY(zip.open(QuaZip::mdUnzip));
        for (bool more = zip.goToFirstFile(); more; more = zip.goToNextFile()) {
            QuaZipFileInfo64 info;
            QVERIFY(zip.getCurrentFileInfo(&info));
            QCOMPARE(info.method, quint16(Z_DEFLATED));
            QCOMPARE(info.externalAttr >> 16, quint32(0100644));
            QCOMPARE(info.dateTime, QDateTime(QDate(2024, 12, 1), QTime(12, 34, 56)));
        }
        zip.close();
        QCOMPARE(entriesOf(dir_.path()).filter(QStringLiteral("round")),
                 QStringList{QStringLiteral("round.zip")});
        // The same report gives the same bytes (fixed entry times).
        const QString again = dir_.filePath(QStringLiteral("round-again.zip"));
        QVERIFY(write_report_zip(str(again), files).ok());
        QCOMPARE(readAll(again), readAll(path));
    }

    // A report always has files: writing none is refused; an archive with no entries (which
    // minizip cannot open) is refused by name.
    void emptyArchivesAreRefused() {
        const QString path = dir_.filePath(QStringLiteral("empty.zip"));
        const Status s = write_report_zip(str(path), {});
        QVERIFY(!s.ok());
        QVERIFY2(QString::fromStdString(s.message()).contains(QStringLiteral("no files")),
                 s.message().c_str());
        QVERIFY(!QFile::exists(path));
        expectRefused(ZipBuilder().bytes(), {QStringLiteral("an empty zip archive")});
    }

    void refusesUnsafeNamesWhenWriting() {
        const QString path = dir_.filePath(QStringLiteral("bad-names.zip"));
        for (const char* name : {"../x", "/abs", "a\\b", ""}) {
            const Status s = write_report_zip(str(path), {{name, "x"}});
            QVERIFY2(!s.ok(), name);
            QVERIFY(!QFile::exists(path));
        }
        const Status dup = write_report_zip(str(path), {{"a", "1"}, {"a", "2"}});
        QVERIFY(!dup.ok());
        QVERIFY(QString::fromStdString(dup.message()).contains(QStringLiteral("duplicate")));
        QVERIFY(!QFile::exists(path));
    }

    void writeIntoMissingFolderFails() {
        const QString path = dir_.filePath(QStringLiteral("missing/sub/report.zip"));
        const Status s = write_report_zip(str(path), sampleFiles());
        QVERIFY(!s.ok());
        const QString message = QString::fromStdString(s.message());
        QVERIFY2(message.startsWith(path) && message.contains(QStringLiteral("does not exist")),
                 qPrintable(message));
        QVERIFY(!QFileInfo::exists(dir_.filePath(QStringLiteral("missing"))));
    }

    void writeIntoReadOnlyFolderFails() {
        // A folder where no one may create files, root included.
        const QString proc = QStringLiteral("/proc/llmwb-report.zip");
        if (QFileInfo::exists(QStringLiteral("/proc/self"))) {
            const Status s = write_report_zip(str(proc), sampleFiles());
            QVERIFY(!s.ok());
            qInfo("%s", s.message().c_str());
            QVERIFY2(QString::fromStdString(s.message())
                         .startsWith(proc + QStringLiteral(": cannot write: ")),
                     s.message().c_str());
            QVERIFY(!QFileInfo::exists(proc));
        }
        // A folder made read-only (root ignores the mode: then only the /proc case ran).
        const QString folder = dir_.filePath(QStringLiteral("readonly"));
        QVERIFY(QDir().mkpath(folder));
        QVERIFY(QFile::setPermissions(folder, QFile::ReadOwner | QFile::ExeOwner));
        const bool honoured = ::access(QFile::encodeName(folder).constData(), W_OK) != 0;
        if (honoured) {
            const QString path = folder + QStringLiteral("/report.zip");
            const Status s = write_report_zip(str(path), sampleFiles());
            QVERIFY(!s.ok());
            QVERIFY2(QString::fromStdString(s.message())
                         .startsWith(path + QStringLiteral(": cannot write: ")),
                     s.message().c_str());
            QCOMPARE(entriesOf(folder), QStringList());
        }
        QVERIFY(
            QFile::setPermissions(folder, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        if (!honoured)
            qInfo("running as root: the read-only folder case ran on /proc only");
    }

    // A full disk: the file size limit makes the archive's writes fail (EFBIG) part way, as
    // ENOSPC would. Neither the target nor a temporary file may be left; an existing report
    // under the target's name stays as it was.
    void fullDiskLeavesNothingAndKeepsTheOldFile() {
        const QString folder = dir_.filePath(QStringLiteral("full"));
        QVERIFY(QDir().mkpath(folder));
        const QString path = folder + QStringLiteral("/report.zip");
        ReportFiles big = sampleFiles();
        big.emplace_back("more-noise.bin", noise(1 << 20, 99));
        {
            FileSizeLimit limit(256 * 1024);
            QVERIFY(limit.ok());
            const Status s = write_report_zip(str(path), big);
            QVERIFY(!s.ok());
            qInfo("%s", s.message().c_str());
            // The system's reason (EFBIG here, ENOSPC on a full disk), not a zip status code.
            QVERIFY2(QString::fromStdString(s.message())
                             .startsWith(path + QStringLiteral(": cannot write: ")) &&
                         !QString::fromStdString(s.message()).contains(QStringLiteral("Unknown")) &&
                         !QString::fromStdString(s.message()).contains(QStringLiteral("code")),
                     s.message().c_str());
        }
        QCOMPARE(entriesOf(folder), QStringList());

        const ReportFiles small = {{"results.json", "{}\n"}};
        QVERIFY(write_report_zip(str(path), small).ok());
        const QByteArray before = readAll(path);
        QVERIFY(!before.isEmpty());
        {
            FileSizeLimit limit(256 * 1024);
            QVERIFY(limit.ok());
            QVERIFY(!write_report_zip(str(path), big).ok());
        }
        QCOMPARE(entriesOf(folder), QStringList{QStringLiteral("report.zip")});
        QCOMPARE(readAll(path), before);
        const auto old = read_report_zip(str(path));
        QVERIFY(old.ok());
        QCOMPARE(old->size(), size_t(1));
    }

    void handcraftedArchiveIsRead() { // the builder itself makes valid archives
        const QByteArray a = ZipBuilder()
                                 .add(zip_entry("sub/", {}, false))
                                 .add(zip_entry("results.json", "{\"x\": 1}\n"))
                                 .add(zip_entry("sub/steps.csv", "run,step\n0,1\n", false))
                                 .bytes();
        const QString path = dir_.filePath(QStringLiteral("handmade.zip"));
        QVERIFY(writeBytes(path, a));
        const auto files = read_report_zip(str(path));
        QVERIFY2(files.ok(), files.ok() ? "" : files.message().c_str());
        QCOMPARE(files->size(), size_t(2)); // the folder entry is skipped
        QCOMPARE(files->at(0).first, std::string("results.json"));
        QCOMPARE(files->at(0).second, std::string("{\"x\": 1}\n"));
        QCOMPARE(files->at(1).first, std::string("sub/steps.csv"));
    }

    void refusesNamesOutsideTheRoot_data() {
        QTest::addColumn<QByteArray>("name");
        QTest::addColumn<QString>("reason");
        QTest::newRow("dotdot") << QByteArray("../evil.txt")
                                << QStringLiteral("outside the archive");
        QTest::newRow("inner dotdot")
            << QByteArray("a/../../b") << QStringLiteral("outside the archive");
        QTest::newRow("absolute") << QByteArray("/abs.txt") << QStringLiteral("absolute path");
        QTest::newRow("backslash") << QByteArray("a\\..\\b") << QStringLiteral("backslash");
        QTest::newRow("drive") << QByteArray("C:/x.txt") << QStringLiteral("drive letter");
        QTest::newRow("empty component") << QByteArray("a//b") << QStringLiteral("empty or '.'");
        QTest::newRow("dot") << QByteArray("./a") << QStringLiteral("empty or '.'");
        QTest::newRow("control") << QByteArray("a\nb") << QStringLiteral("control");
        QTest::newRow("undecodable")
            << QByteArray("a\xff\xfe.txt") << QStringLiteral("undecodable");
        QTest::newRow("long") << QByteArray(300, 'n') << QStringLiteral("longer than 255");
    }
    void refusesNamesOutsideTheRoot() {
        QFETCH(QByteArray, name);
        QFETCH(QString, reason);
        expectRefused(
            ZipBuilder().add(zip_entry("ok.txt", "fine")).add(zip_entry(name, "x")).bytes(),
            {QStringLiteral("entry '%1")
                 .arg(QString::fromUtf8(name.left(10)).split(QLatin1Char('\n')).first()),
             reason});
    }

    void refusesEmptyName() {
        expectRefused(ZipBuilder().add(zip_entry("", "x")).bytes(),
                      {QStringLiteral("entry ''"), QStringLiteral("empty name")});
    }

    void refusesSymlinksAndSpecialFiles() {
        ZipEntrySpec link = zip_entry("link", "/etc/passwd", false);
        link.external = 0120777u << 16;
        expectRefused(ZipBuilder().add(link).bytes(),
                      {QStringLiteral("entry 'link'"), QStringLiteral("is a symlink")});
        ZipEntrySpec fifo = zip_entry("fifo", "", false);
        fifo.external = 0010644u << 16;
        expectRefused(
            ZipBuilder().add(fifo).bytes(),
            {QStringLiteral("entry 'fifo'"), QStringLiteral("not a regular file (mode 010644)")});
    }

    void refusesDuplicates() {
        expectRefused(ZipBuilder()
                          .add(zip_entry("results.json", "{}"))
                          .add(zip_entry("results.json", "{\"evil\": 1}"))
                          .bytes(),
                      {QStringLiteral("entry 'results.json'"), QStringLiteral("duplicate name")});
    }

    void refusesTooManyEntries() {
        // The end record's claim is checked before any entry is read.
        ZipBuilder plain;
        for (int i = 0; i < 3; ++i)
            plain.add(zip_entry(QByteArray("f") + QByteArray::number(i), "x"));
        expectRefused(plain.claimEntries(65535).bytes(), {QStringLiteral("65535 entries")});
        ZipBuilder zip64;
        for (int i = 0; i < 3; ++i)
            zip64.add(zip_entry(QByteArray("f") + QByteArray::number(i), "x"));
        expectRefused(zip64.claimEntries(100000, true).bytes(),
                      {QStringLiteral("100000 entries (at most 64 allowed)")});
        // 2^32 + 2: would be 2 as a 32-bit count.
        ZipBuilder wrap;
        for (int i = 0; i < 2; ++i)
            wrap.add(zip_entry(QByteArray("f") + QByteArray::number(i), "x"));
        expectRefused(wrap.claimEntries((1ull << 32) + 2, true).bytes(),
                      {QStringLiteral("entries")});
        // Real entries past a lower limit.
        ZipLimits few;
        few.max_entries = 2;
        expectRefused(plain.claimEntries(0).bytes(), {QStringLiteral("3 entries (at most 2")}, few);
    }

    // 300 MiB of zeros in ~300 KiB. Claimed honestly it is refused by its claim; claiming a
    // small size, only that many bytes come out and the CRC (of the whole) does not match; with
    // a claim under the caps, the inflated bytes are counted and stopped at each cap.
    void refusesDeflateBombs() {
        uint32_t crc = 0;
        const QByteArray payload = deflate_zeros(300ll << 20, &crc);
        QVERIFY(payload.size() < (1 << 20));
        ZipEntrySpec bomb;
        bomb.name = "results.json";
        bomb.payload = payload;
        bomb.method = 8;
        bomb.crc = crc;
        bomb.csize = static_cast<uint32_t>(payload.size());

        bomb.usize = 300u << 20;
        expectRefused(ZipBuilder().add(bomb).bytes(), {QStringLiteral("entry 'results.json'"),
                                                       QStringLiteral("claims 314572800 bytes")});

        bomb.usize = 1000;
        expectRefused(ZipBuilder().add(bomb).bytes(),
                      {QStringLiteral("entry 'results.json'"), QStringLiteral("CRC mismatch")});

        bomb.usize = 100u << 20; // a lie under the per-entry cap: the ratio stops it
        expectRefused(ZipBuilder().add(bomb).bytes(),
                      {QStringLiteral("entry 'results.json'"),
                       QStringLiteral("compression ratio above 200:1")});

        ZipLimits noRatio;
        noRatio.max_ratio = 1e12;
        noRatio.max_entry_bytes = 50ll << 20;
        expectRefused(
            ZipBuilder().add(bomb).bytes(),
            {QStringLiteral("entry 'results.json'"), QStringLiteral("claims 104857600 bytes")},
            noRatio);
        // Claims 20 MiB, under every cap with the ratio off: minizip stops at the claim (it
        // never inflates past it), and the CRC of the whole does not match the bytes read.
        bomb.usize = 20u << 20;
        expectRefused(ZipBuilder().add(bomb).bytes(),
                      {QStringLiteral("entry 'results.json'"), QStringLiteral("CRC mismatch")},
                      noRatio);
    }

    void countsInflatedBytesAgainstTheCaps() {
        uint32_t crc = 0;
        const QByteArray payload = deflate_zeros(40ll << 20, &crc);
        ZipEntrySpec e;
        e.payload = payload;
        e.method = 8;
        e.crc = crc;
        e.csize = static_cast<uint32_t>(payload.size());
        e.usize = 40u << 20;
        ZipLimits limits;
        limits.max_ratio = 1e12;

        // A high-ratio entry under every size cap: the ratio (counted on what came out).
        e.name = "steps.csv";
        expectRefused(ZipBuilder().add(e).bytes(),
                      {QStringLiteral("entry 'steps.csv'"), QStringLiteral("compression ratio")});

        // Two entries, each under the per-entry cap, together over the total.
        limits.max_total_bytes = 60ll << 20;
        ZipEntrySpec second = e;
        second.name = "requests.csv";
        expectRefused(ZipBuilder().add(e).add(second).bytes(),
                      {QStringLiteral("entry 'requests.csv'"), QStringLiteral("total limit")},
                      limits);

        // A claim above the per-entry cap is refused before anything is inflated.
        limits.max_total_bytes = 512ll << 20;
        limits.max_entry_bytes = 30ll << 20;
        expectRefused(
            ZipBuilder().add(e).bytes(),
            {QStringLiteral("entry 'steps.csv'"), QStringLiteral("claims 41943040 bytes")}, limits);
    }

    void refusesLyingSizes() {
        // The stream ends before the size the headers claim.
        ZipEntrySpec e = zip_entry("results.json", QByteArray(5000, 'a'));
        e.usize = 9000;
        expectRefused(ZipBuilder().add(e).bytes(), {QStringLiteral("entry 'results.json'"),
                                                    QStringLiteral("the header says 9000")});
        // More compressed bytes claimed than the archive holds.
        ZipEntrySpec big = zip_entry("steps.csv", "abc", false);
        big.csize = 0x7fffffff;
        big.usize = 3;
        expectRefused(ZipBuilder().add(big).bytes(), {QStringLiteral("entry 'steps.csv'"),
                                                      QStringLiteral("more compressed bytes")});
    }

    void refusesCrcMismatch() {
        ZipEntrySpec stored = zip_entry("results.json", "{\"completed\": 16}", false);
        stored.crc ^= 1;
        expectRefused(ZipBuilder().add(stored).bytes(),
                      {QStringLiteral("entry 'results.json'"), QStringLiteral("CRC mismatch")});
        ZipEntrySpec deflated = zip_entry("steps.csv", QByteArray(100000, 'z'));
        deflated.crc ^= 0x80000000u;
        expectRefused(ZipBuilder().add(deflated).bytes(),
                      {QStringLiteral("entry 'steps.csv'"), QStringLiteral("CRC mismatch")});
    }

    void refusesEncryptedAndUnknownMethods() {
        ZipEntrySpec enc = zip_entry("results.json", "{}", false);
        enc.flags = 1;
        expectRefused(ZipBuilder().add(enc).bytes(),
                      {QStringLiteral("entry 'results.json'"), QStringLiteral("encrypted")});
        ZipEntrySpec bz = zip_entry("results.json", "{}", false);
        bz.method = 12;
        expectRefused(ZipBuilder().add(bz).bytes(), {QStringLiteral("entry 'results.json'"),
                                                     QStringLiteral("compression method 12")});
    }

    void refusesTruncatedAndDamagedArchives() {
        const QString good = dir_.filePath(QStringLiteral("good.zip"));
        QVERIFY(write_report_zip(str(good), sampleFiles()).ok());
        const QByteArray bytes = readAll(good);
        expectRefused(bytes.left(bytes.size() / 2), {QStringLiteral("not a zip archive")});
        // Bytes cut from the middle: the central directory no longer is where the end says.
        const QByteArray handmade =
            ZipBuilder()
                .add(zip_entry("results.json", QByteArray(4000, 'r')))
                .add(zip_entry("steps.csv", QByteArray::fromStdString(noise(4000, 3))))
                .bytes();
        QByteArray cut = handmade;
        cut.remove(10, 40);
        expectRefused(cut, {QStringLiteral("not a zip archive")});
        // The second entry's local header overwritten: the central directory points at junk.
        QByteArray smashed = handmade;
        const qsizetype second = smashed.indexOf("PK\x03\x04", 4);
        QVERIFY(second > 0);
        smashed[second + 2] = 'X';
        expectRefused(smashed,
                      {QStringLiteral("entry 'steps.csv'"), QStringLiteral("bad zip structure")});
        // A deflate stream cut short (sizes claim the cut length).
        ZipEntrySpec shortStream =
            zip_entry("results.json", QByteArray::fromStdString(noise(20000, 5)));
        shortStream.payload.truncate(shortStream.payload.size() / 2);
        shortStream.csize = static_cast<uint32_t>(shortStream.payload.size());
        expectRefused(ZipBuilder().add(shortStream).bytes(),
                      {QStringLiteral("entry 'results.json'")});
    }

    // Archives damaged at random (bytes changed, cut, or both; a fixed seed): each is read or
    // refused, never a crash, and reading writes nothing.
    void randomlyDamagedArchivesNeverCrash() {
        const ReportFiles files = {{"results.json", std::string(3000, 'r') + "{}\n"},
                                   {"steps.csv", noise(2000, 11)},
                                   {"requests.csv", "run,index\n0,1\n"}};
        const QString good = dir_.filePath(QStringLiteral("fuzz-seed.zip"));
        QVERIFY(write_report_zip(str(good), files).ok());
        const QByteArray seed = readAll(good);
        const QString path = dir_.filePath(QStringLiteral("fuzz.zip"));
        uint64_t state = 0x9e3779b97f4a7c15ull;
        const auto next = [&state] {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            return state;
        };
        int refused = 0, read = 0;
        for (int i = 0; i < 1500; ++i) {
            QByteArray b = seed;
            const int edits = 1 + int(next() % 8);
            for (int e = 0; e < edits; ++e)
                b[qsizetype(next() % uint64_t(b.size()))] = char(next());
            if (i % 4 == 0)
                b.truncate(qsizetype(next() % uint64_t(b.size())));
            QVERIFY(writeBytes(path, b));
            const auto r = read_report_zip(str(path));
            r.ok() ? ++read : ++refused;
        }
        qInfo("1500 damaged archives: %d read, %d refused", read, refused);
        QVERIFY(refused > 0);
        QCOMPARE(entriesOf(work_), QStringList());
    }

    void refusesWhatIsNotAZip() {
        expectRefused("this is a text file, not a zip archive\n",
                      {QStringLiteral("not a zip archive")});
        expectRefused(QByteArray(), {QStringLiteral("empty file")});
        const auto missing = read_report_zip(str(dir_.filePath(QStringLiteral("nope.zip"))));
        QVERIFY(!missing.ok());
        QVERIFY(QString::fromStdString(missing.message()).contains(QStringLiteral("no such file")));
        const auto folder = read_report_zip(str(dir_.path()));
        QVERIFY(!folder.ok());
        QVERIFY(QString::fromStdString(folder.message()).contains(QStringLiteral("is a folder")));
    }
};

QTEST_GUILESS_MAIN(TestReportZip)
#include "tst_report_zip.moc"
