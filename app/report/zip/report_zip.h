// Reports as zip archives (QuaZip). Writing goes to a temporary name in the target's folder and
// is renamed over the target only when every byte is written and the archive is closed: a full
// disk or a read-only folder is an error and leaves no half-written zip under the target's name.
// Reading treats the archive as hostile: names outside the archive root ("../", absolute, drive
// letters, backslashes), symlinks and other non-regular entries, duplicates, too many entries,
// and zip bombs (caps on every entry's and the total inflated size and on the compression ratio,
// counted on the bytes actually inflated, never the sizes the headers claim) are refused with an
// error naming the archive, the entry and the reason. Nothing is extracted to disk.
#pragma once

#include <cstdint>
#include <string>

#include "app/report/report_files.h"

namespace llmwb {

struct ZipLimits {
    int32_t max_entries = 64;
    int64_t max_entry_bytes = 256ll << 20; // inflated, per entry
    int64_t max_total_bytes = 512ll << 20; // inflated, all entries
    double max_ratio = 200.0;              // inflated / compressed, per entry (above 1 MiB)
};

// No files is an error (a report always has some; minizip cannot read an archive of none).
Status write_report_zip(const std::string& path, const ReportFiles& files);
// The archive's regular files (every one that passes the checks; unknown names are kept so that
// the caller can ignore them).
Result<ReportFiles> read_report_zip(const std::string& path, const ZipLimits& limits = {});

} // namespace llmwb
