#include "app/report/zip/report_zip.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QSet>
#include <QString>
#include <quazip/quazip.h>
#include <quazip/quazipfile.h>
#include <quazip/quazipfileinfo.h>
#include <quazip/quazipnewinfo.h>
#include <quazip/unzip.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>

namespace llmwb {

namespace {

constexpr int64_t kRatioFloorBytes = 1ll << 20; // the ratio cap applies above 1 MiB inflated
constexpr qint64 kChunk = 64 * 1024;
constexpr int kMaxNameBytes = 255;

// Unix file types in the high 16 bits of a zip entry's external attributes.
constexpr quint32 kModeTypeMask = 0170000;
constexpr quint32 kModeRegular = 0100000;
constexpr quint32 kModeDirectory = 0040000;
constexpr quint32 kModeSymlink = 0120000;
constexpr quint32 kDosDirectory = 0x10;

std::string utf8(const QString& s) {
    return s.toStdString();
}

std::string native(const std::string& path) {
    return utf8(QDir::toNativeSeparators(QString::fromStdString(path)));
}

// Why `name` (without a directory entry's trailing '/') is not a safe relative name, or "" when
// it is: the archive's names must stay inside its root whatever system reads them.
std::string name_problem(const QString& name) {
    if (name.isEmpty())
        return "empty name";
    if (name.toUtf8().size() > kMaxNameBytes)
        return "name longer than 255 bytes";
    if (name.startsWith(QLatin1Char('/')))
        return "absolute path";
    if (name.contains(QLatin1Char('\\')))
        return "backslash in the name";
    if (name.contains(QLatin1Char(':')))
        return "drive letter or ':' in the name";
    for (const QChar c : name) {
        const char16_t u = c.unicode();
        if (u < 0x20 || u == 0x7f || u == 0xfffd)
            return "control or undecodable character in the name";
    }
    for (const QString& part : name.split(QLatin1Char('/'))) {
        if (part == QLatin1String(".."))
            return "path outside the archive ('..')";
        if (part.isEmpty() || part == QLatin1String("."))
            return "empty or '.' path component";
    }
    return {};
}

// A hostile name as it may be shown in one line: control characters escaped, at most 80
// characters.
std::string printable(const QString& name) {
    QString out;
    for (const QChar c : name) {
        if (out.size() >= 80) {
            out += QStringLiteral("...");
            break;
        }
        const char16_t u = c.unicode();
        if (u < 0x20 || u == 0x7f)
            out += QStringLiteral("\\x%1").arg(static_cast<int>(u), 2, 16, QLatin1Char('0'));
        else
            out += c;
    }
    return utf8(out);
}

Error entry_error(const std::string& archive, const QString& name, const std::string& reason) {
    return make_error(native(archive) + ": entry '" + printable(name) + "': " + reason);
}

Error archive_error(const std::string& archive, const std::string& reason) {
    return make_error(native(archive) + ": " + reason);
}

// The entries' modification time: the run's date from results.json ("YYYYmmdd-HHMMSS") when
// there is one, so that the same report gives the same bytes; else now. Zip times are local
// times with 2-second steps and start in 1980.
QDateTime entry_time(const ReportFiles& files) {
    for (const auto& [name, bytes] : files) {
        if (name != kReportResults)
            continue;
        const auto pos = bytes.find("\"date\"");
        if (pos == std::string::npos)
            break;
        const auto open = bytes.find('"', pos + 6);
        if (open == std::string::npos || open + 16 >= bytes.size())
            break;
        const QDateTime t = QDateTime::fromString(
            QString::fromStdString(bytes.substr(open + 1, 15)), QStringLiteral("yyyyMMdd-HHmmss"));
        if (t.isValid() && t.date().year() >= 1980 && t.date().year() <= 2107)
            return t;
        break;
    }
    return QDateTime::currentDateTime();
}

// minizip's and zlib's status codes in words.
std::string zip_status(int code) {
    const char* what = "error";
    switch (code) {
    case UNZ_ERRNO:
        what = "read or write error";
        break;
    case UNZ_BADZIPFILE:
        what = "bad zip structure";
        break;
    case UNZ_CRCERROR:
        what = "CRC mismatch";
        break;
    case UNZ_PARAMERROR:
        what = "bad parameter";
        break;
    case UNZ_INTERNALERROR:
        what = "internal error";
        break;
    case -1000:
        what = "cannot open or not a zip";
        break; // QuaZip: unzOpen returned null
    case Z_DATA_ERROR:
        what = "corrupt deflate data";
        break;
    case Z_BUF_ERROR:
        what = "deflate data cut short";
        break;
    case Z_MEM_ERROR:
        what = "out of memory";
        break;
    default:
        break;
    }
    return std::string(what) + ", code " + std::to_string(code);
}

// QuaZip's view of the QSaveFile: it passes everything through and keeps the first error of
// the file (QFileDevice forgets it at the next seek, and QuaZip only reports "I/O error").
class RecordingDevice : public QIODevice {
  public:
    explicit RecordingDevice(QSaveFile& file) : file_(file) {}
    bool isSequential() const override { return false; }
    qint64 size() const override { return file_.size(); }
    bool seek(qint64 pos) override {
        if (!file_.seek(pos)) {
            record();
            return false;
        }
        return QIODevice::seek(pos);
    }
    const std::string& firstError() const { return first_error_; }

  protected:
    qint64 readData(char*, qint64) override { return -1; }
    qint64 writeData(const char* data, qint64 len) override {
        // A short write (the disk filled up part way) is retried: the retry fails with the
        // reason.
        qint64 done = 0;
        while (done < len) {
            const qint64 n = file_.write(data + done, len - done);
            if (n <= 0) {
                record();
                return done > 0 ? done : -1;
            }
            done += n;
        }
        return done;
    }

  private:
    void record() {
        if (first_error_.empty())
            first_error_ = utf8(file_.errorString());
    }
    QSaveFile& file_;
    std::string first_error_;
};

} // namespace

Status write_report_zip(const std::string& path, const ReportFiles& files) {
    const QString target = QString::fromStdString(path);
    if (target.isEmpty())
        return make_error("report archive: empty file name");
    // The names were made by the caller, but the archive must be valid for any reader.
    QSet<QString> seen;
    for (const auto& [name, bytes] : files) {
        const QString qname = QString::fromStdString(name);
        const std::string problem = name_problem(qname);
        if (!problem.empty())
            return entry_error(path, qname, problem);
        if (seen.contains(qname))
            return entry_error(path, qname, "duplicate name");
        seen.insert(qname);
        if (bytes.size() > 0xffffffffull)
            return entry_error(path, qname, "larger than 4 GiB");
    }
    if (files.empty())
        return make_error(native(path) + ": cannot write: no files to write");
    const QFileInfo info(target);
    if (!info.dir().exists())
        return make_error(native(path) + ": cannot write: the folder " +
                          utf8(QDir::toNativeSeparators(info.absolutePath())) + " does not exist");

    // QSaveFile writes a temporary file beside the target and renames it over the target only
    // on commit(); destroyed uncommitted (any error below), it removes the temporary file.
    QSaveFile out(target);
    if (!out.open(QIODevice::WriteOnly))
        return make_error(native(path) + ": cannot write: " + utf8(out.errorString()));

    const QDateTime when = entry_time(files);
    std::string failure;
    RecordingDevice device(out);
    device.open(QIODevice::WriteOnly);
    {
        QuaZip zip(&device);
        zip.setAutoClose(false); // we commit(), after checking the zip's and the file's status
        zip.setUtf8Enabled(true);
        zip.setOsCode(3); // unix: the external attributes below are a unix mode
        if (!zip.open(QuaZip::mdCreate)) {
            failure = "cannot start the archive (" + zip_status(zip.getZipError()) + ")";
        } else {
            for (const auto& [name, bytes] : files) {
                QuaZipNewInfo entry(QString::fromStdString(name));
                entry.dateTime = when;
                entry.externalAttr = (kModeRegular | 0644u) << 16;
                QuaZipFile file(&zip);
                if (!file.open(QIODevice::WriteOnly, entry, nullptr, 0, Z_DEFLATED,
                               Z_DEFAULT_COMPRESSION)) {
                    failure = "entry '" + name + "': cannot start it (" +
                              zip_status(file.getZipError()) + ")";
                    break;
                }
                qint64 done = 0;
                const qint64 total = static_cast<qint64>(bytes.size());
                while (done < total) {
                    const qint64 n =
                        file.write(bytes.data() + done, std::min(kChunk, total - done));
                    if (n <= 0)
                        break;
                    done += n;
                }
                file.close();
                if (done != total || file.getZipError() != ZIP_OK) {
                    failure = "entry '" + name + "': write failed (" +
                              zip_status(file.getZipError()) + ")";
                    break;
                }
            }
            zip.close();
            if (failure.empty() && zip.getZipError() != ZIP_OK)
                failure = "cannot finish the archive (" + zip_status(zip.getZipError()) + ")";
        }
    }
    device.close();
    // A failed write of the file (disk full, quota, file size limit) says more than the zip's
    // status code.
    if (!device.firstError().empty()) {
        out.cancelWriting();
        return make_error(native(path) + ": cannot write: " + device.firstError());
    }
    if (!failure.empty()) {
        out.cancelWriting();
        return make_error(native(path) + ": cannot write: " + failure);
    }
    if (!out.commit())
        return make_error(native(path) + ": cannot write: " + utf8(out.errorString()));
    return ok_status();
}

Result<ReportFiles> read_report_zip(const std::string& path, const ZipLimits& limits) {
    const QString source = QString::fromStdString(path);
    const QFileInfo info(source);
    if (!info.exists())
        return archive_error(path, "no such file");
    if (info.isDir())
        return archive_error(path, "is a folder, not a zip archive");
    if (info.size() == 0)
        return archive_error(path, "empty file, not a zip archive");
    const int64_t archive_bytes = info.size();

    QuaZip zip(source);
    if (!zip.open(QuaZip::mdUnzip)) {
        // minizip does not open an archive of no entries: the end record alone (and a comment).
        QFile f(source);
        if (archive_bytes >= 22 && archive_bytes <= 22 + 0xffff && f.open(QIODevice::ReadOnly) &&
            f.read(4) == QByteArray("PK\x05\x06", 4))
            return archive_error(path, "an empty zip archive (no files)");
        return archive_error(path, "not a zip archive, or its central directory is damaged (" +
                                       zip_status(zip.getZipError()) + ")");
    }
    // The count the archive claims, before reading any entry.
    // (64 bits: QuaZip's int count would wrap a zip64 claim of 2^32 + n entries to n.)
    unz_global_info64 global{};
    if (unzGetGlobalInfo64(zip.getUnzFile(), &global) != UNZ_OK)
        return archive_error(path, "cannot read the entry count");
    const uint64_t claimed = global.number_entry;
    if (claimed > static_cast<uint64_t>(std::max(limits.max_entries, 0)))
        return archive_error(path, std::to_string(claimed) + " entries (at most " +
                                       std::to_string(limits.max_entries) + " allowed)");

    ReportFiles files;
    QSet<QString> names;
    int64_t total = 0;
    uint64_t seen = 0;
    std::string buffer(static_cast<size_t>(kChunk), '\0');
    for (bool more = zip.goToFirstFile(); more; more = zip.goToNextFile()) {
        if (++seen > claimed)
            return archive_error(path,
                                 "more entries than the " + std::to_string(claimed) + " it claims");
        QuaZipFileInfo64 entry;
        if (!zip.getCurrentFileInfo(&entry))
            return archive_error(path, "entry " + std::to_string(seen) + ": unreadable header (" +
                                           zip_status(zip.getZipError()) + ")");
        QString name = entry.name;
        const quint32 mode = entry.externalAttr >> 16;
        const quint32 type = mode & kModeTypeMask;
        bool directory = name.endsWith(QLatin1Char('/')) || type == kModeDirectory ||
                         (mode == 0 && (entry.externalAttr & kDosDirectory));
        if (name.endsWith(QLatin1Char('/')))
            name.chop(1);
        const std::string problem = name_problem(name);
        if (!problem.empty())
            return entry_error(path, entry.name, problem);
        if (type == kModeSymlink)
            return entry_error(path, name, "is a symlink");
        if (directory)
            continue; // nothing is extracted, so folders mean nothing
        if (type != 0 && type != kModeRegular)
            return entry_error(path, name,
                               "is not a regular file (mode 0" +
                                   QString::number(mode, 8).toStdString() + ")");
        if (names.contains(name))
            return entry_error(path, name, "duplicate name");
        names.insert(name);
        if (entry.flags & 0x1)
            return entry_error(path, name, "is encrypted");
        if (entry.method != 0 && entry.method != Z_DEFLATED)
            return entry_error(path, name,
                               "unsupported compression method " + std::to_string(entry.method));
        if (entry.compressedSize > static_cast<quint64>(archive_bytes))
            return entry_error(path, name, "claims more compressed bytes than the archive holds");
        if (entry.uncompressedSize > static_cast<quint64>(limits.max_entry_bytes))
            return entry_error(path, name,
                               "claims " + std::to_string(entry.uncompressedSize) +
                                   " bytes (at most " + std::to_string(limits.max_entry_bytes) +
                                   " allowed)");

        // The headers' sizes are the sender's claims: count the bytes that come out instead.
        QuaZipFile file(&zip);
        if (!file.open(QIODevice::ReadOnly))
            return entry_error(path, name,
                               "cannot open it (" + zip_status(file.getZipError()) + ")");
        std::string bytes;
        uLong crc = crc32(0L, Z_NULL, 0);
        const double compressed = static_cast<double>(std::max<quint64>(entry.compressedSize, 1));
        for (;;) {
            const qint64 n = file.read(buffer.data(), kChunk);
            if (n < 0) {
                const int code = file.getZipError();
                return entry_error(path, name,
                                   code == UNZ_CRCERROR
                                       ? "CRC mismatch"
                                       : "damaged or truncated data (" + zip_status(code) + ")");
            }
            if (n == 0)
                break;
            const auto got = static_cast<int64_t>(bytes.size()) + n;
            if (got > limits.max_entry_bytes)
                return entry_error(path, name,
                                   "inflates past " + std::to_string(limits.max_entry_bytes) +
                                       " bytes (the per-entry limit)");
            if (total + n > limits.max_total_bytes)
                return entry_error(path, name,
                                   "the archive inflates past " +
                                       std::to_string(limits.max_total_bytes) +
                                       " bytes (the total limit)");
            if (got > kRatioFloorBytes && static_cast<double>(got) / compressed > limits.max_ratio)
                return entry_error(path, name,
                                   "compression ratio above " +
                                       std::to_string(static_cast<int64_t>(limits.max_ratio)) +
                                       ":1 (a zip bomb?)");
            crc = crc32(crc, reinterpret_cast<const Bytef*>(buffer.data()), static_cast<uInt>(n));
            bytes.append(buffer.data(), static_cast<size_t>(n));
            total += n;
        }
        file.close();
        if (file.getZipError() == UNZ_CRCERROR)
            return entry_error(path, name, "CRC mismatch");
        if (file.getZipError() != UNZ_OK)
            return entry_error(
                path, name, "damaged or truncated data (" + zip_status(file.getZipError()) + ")");
        // minizip stops at the size the header claims and checks the CRC only then: a stream
        // that ends early, or a header that lies about its size, is caught here.
        if (static_cast<quint64>(bytes.size()) != entry.uncompressedSize)
            return entry_error(path, name,
                               "inflated " + std::to_string(bytes.size()) +
                                   " bytes, the header says " +
                                   std::to_string(entry.uncompressedSize));
        if ((crc & 0xffffffffu) != entry.crc)
            return entry_error(path, name, "CRC mismatch");
        files.emplace_back(utf8(name), std::move(bytes));
    }
    if (zip.getZipError() != UNZ_OK)
        return archive_error(path, "damaged central directory after " + std::to_string(seen) +
                                       " entries (" + zip_status(zip.getZipError()) + ")");
    if (seen != claimed)
        return archive_error(path, "the archive claims " + std::to_string(claimed) +
                                       " entries but holds " + std::to_string(seen));
    return files;
}

} // namespace llmwb
