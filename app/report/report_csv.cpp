// requests.csv and steps.csv: RFC 4180, a header of field names (first column "run"), numbers
// in the shortest text that reads back exactly. The reader is bounded by the bytes it gets:
// a record is at least one byte, nothing is allocated from a count the file claims.
#include <limits>

#include "app/report/report_files.h"
#include "app/report/report_text.h"

namespace llmwb {

namespace {

using report_detail::format_double;

const std::vector<std::string>& request_columns() {
    static const std::vector<std::string> c = {
        "run",          "index",         "arrival_s",   "first_token_s",     "finish_s",
        "input_tokens", "output_tokens", "preemptions", "prefix_hit_tokens", "error"};
    return c;
}
const std::vector<std::string>& step_columns() {
    static const std::vector<std::string> c = {
        "run",     "time_s",    "step_ms",  "prefill_tokens", "decode_tokens",  "running",
        "waiting", "preempted", "kv_usage", "draft_tokens",   "accepted_tokens"};
    return c;
}

void append_field(std::string& out, std::string_view s) {
    const bool quote = s.find_first_of(",\"\r\n") != s.npos ||
                       (!s.empty() && (s.front() == ' ' || s.back() == ' '));
    if (!quote) {
        out += s;
        return;
    }
    out += '"';
    for (const char c : s) {
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
}

std::string header_line(const std::vector<std::string>& cols) {
    std::string out;
    for (size_t i = 0; i < cols.size(); ++i)
        out += (i ? "," : "") + cols[i];
    return out + "\n";
}

// One record at a time from CSV text. Fields of the current record are views into the text
// or, for quoted fields with doubled quotes, into `unquoted_` storage.
class CsvReader {
  public:
    CsvReader(std::string_view text, std::string file) : t_(text), file_(std::move(file)) {}

    bool at_end() const { return pos_ >= t_.size(); }
    int64_t line() const { return record_line_; }
    const std::string& error() const { return err_; }

    // Reads the next record into `fields`; false at the end or on an error (error() says).
    bool next(std::vector<std::string>& fields) {
        fields.clear();
        if (at_end())
            return false;
        record_line_ = line_;
        std::string field;
        while (true) {
            if (pos_ < t_.size() && t_[pos_] == '"') {
                ++pos_;
                while (true) {
                    if (pos_ >= t_.size()) {
                        err_ = where() + ": a quoted field is not closed";
                        return false;
                    }
                    const char c = t_[pos_++];
                    if (c == '"') {
                        if (pos_ < t_.size() && t_[pos_] == '"') {
                            field += '"';
                            ++pos_;
                            continue;
                        }
                        break;
                    }
                    if (c == '\n')
                        ++line_;
                    field += c;
                }
                if (pos_ < t_.size() && t_[pos_] != ',' && t_[pos_] != '\n' && t_[pos_] != '\r') {
                    err_ = where() + ": text after a closing quote";
                    return false;
                }
            } else {
                const size_t b = pos_;
                while (pos_ < t_.size() && t_[pos_] != ',' && t_[pos_] != '\n' &&
                       t_[pos_] != '\r') {
                    if (t_[pos_] == '"') {
                        err_ = where() + ": a quote inside an unquoted field";
                        return false;
                    }
                    ++pos_;
                }
                field.assign(t_.substr(b, pos_ - b));
            }
            fields.push_back(std::move(field));
            field.clear();
            if (pos_ >= t_.size())
                return true;
            const char c = t_[pos_++];
            if (c == ',')
                continue;
            if (c == '\r') {
                if (pos_ < t_.size() && t_[pos_] == '\n')
                    ++pos_;
                else {
                    err_ = where() + ": a carriage return outside quotes";
                    return false;
                }
            }
            ++line_;
            return true;
        }
    }

    std::string where() const { return file_ + ":" + std::to_string(record_line_); }

  private:
    std::string_view t_;
    std::string file_;
    size_t pos_ = 0;
    int64_t line_ = 1, record_line_ = 1;
    std::string err_;
};

// Converts cells of one record, naming the first bad one.
class CellReader {
  public:
    CellReader(const std::vector<std::string>& fields, const std::vector<std::string>& cols,
               std::string where)
        : f_(fields), cols_(cols), where_(std::move(where)) {}

    const std::string& error() const { return err_; }
    bool failed() const { return !err_.empty(); }

    double number(size_t i, double lo, double hi) {
        double v = 0;
        if (failed())
            return 0;
        if (!report_detail::parse_double(f_[i], &v)) {
            fail(i, "'" + report_detail::printable(f_[i]) + "' is not a number");
            return 0;
        }
        if (v < lo || v > hi) {
            fail(i, format_double(v) + " is out of range [" + format_double(lo) + ", " +
                        format_double(hi) + "]");
            return 0;
        }
        return v;
    }
    int32_t int32(size_t i, int64_t lo = 0) {
        int64_t v = 0;
        if (failed())
            return 0;
        if (!report_detail::parse_int64(f_[i], &v)) {
            fail(i, "'" + report_detail::printable(f_[i]) + "' is not an integer");
            return 0;
        }
        if (v < lo || v > std::numeric_limits<int32_t>::max()) {
            fail(i, std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " +
                        std::to_string(std::numeric_limits<int32_t>::max()) + "]");
            return 0;
        }
        return static_cast<int32_t>(v);
    }
    // An engine-only count: an empty cell where the run has no such figure (an endpoint run),
    // an integer otherwise.
    int32_t engine_int32(size_t i, bool available) {
        if (failed())
            return 0;
        if (!available) {
            if (!f_[i].empty())
                fail(i, "'" + report_detail::printable(f_[i]) +
                            "' where the run has no engine figures (empty expected)");
            return 0;
        }
        return int32(i);
    }
    void fail(size_t i, const std::string& why) {
        if (err_.empty())
            err_ = where_ + ": column " + cols_[i] + ": " + why;
    }

  private:
    const std::vector<std::string>& f_;
    const std::vector<std::string>& cols_;
    std::string where_;
    std::string err_;
};

constexpr double kCsvBig = std::numeric_limits<double>::max();

// Reads the header and every record, calling on_row(run index, cells) for each.
template <class OnRow>
Status read_csv(std::string_view csv, const char* file, const std::vector<std::string>& cols,
                size_t num_runs, OnRow on_row) {
    if (csv.size() > report_detail::kMaxReportFileBytes)
        return make_error(std::string(file) + ": larger than " +
                          std::to_string(report_detail::kMaxReportFileBytes >> 20) + " MiB");
    CsvReader rd(csv, file);
    std::vector<std::string> fields;
    if (!rd.next(fields)) {
        if (!rd.error().empty())
            return make_error(rd.error());
        return make_error(std::string(file) + ": empty file (no header line)");
    }
    if (fields != cols) {
        std::string expected;
        for (size_t i = 0; i < cols.size(); ++i)
            expected += (i ? "," : "") + cols[i];
        return make_error(std::string(file) + ":1: the header is not '" + expected + "'");
    }
    while (rd.next(fields)) {
        if (fields.size() == 1 && fields[0].empty())
            continue; // a blank line
        const std::string where = rd.where();
        if (fields.size() != cols.size())
            return make_error(where + ": " + std::to_string(fields.size()) + " fields, expected " +
                              std::to_string(cols.size()));
        int64_t run = 0;
        if (!report_detail::parse_int64(fields[0], &run))
            return make_error(where + ": column run: '" + report_detail::printable(fields[0]) +
                              "' is not an integer");
        if (run < 0 || static_cast<uint64_t>(run) >= num_runs)
            return make_error(where + ": run " + std::to_string(run) + " is not in the report (" +
                              std::to_string(num_runs) + " runs)");
        CellReader cells(fields, cols, where);
        on_row(static_cast<size_t>(run), cells, fields);
        if (cells.failed())
            return make_error(cells.error());
    }
    if (!rd.error().empty())
        return make_error(rd.error());
    return ok_status();
}

} // namespace

std::string requests_csv(const std::vector<const BenchRun*>& runs) {
    std::string out = header_line(request_columns());
    for (size_t k = 0; k < runs.size(); ++k) {
        for (const BenchRequestRow& r : runs[k]->requests) {
            out += std::to_string(k) + ',' + std::to_string(r.index) + ',' +
                   format_double(r.arrival_s) + ',' + format_double(r.first_token_s) + ',' +
                   format_double(r.finish_s) + ',' + std::to_string(r.input_tokens) + ',' +
                   std::to_string(r.output_tokens) + ',';
            // Engine-only: empty where the run could not see them (an endpoint run).
            if (runs[k]->figures.available.engine)
                out += std::to_string(r.preemptions) + ',' + std::to_string(r.prefix_hit_tokens);
            else
                out += ',';
            out += ',';
            append_field(out, r.error);
            out += '\n';
        }
    }
    return out;
}

std::string steps_csv(const std::vector<const BenchRun*>& runs) {
    std::string out = header_line(step_columns());
    for (size_t k = 0; k < runs.size(); ++k) {
        for (const BenchStepRow& s : runs[k]->steps) {
            out += std::to_string(k) + ',' + format_double(s.time_s) + ',' +
                   format_double(s.step_ms) + ',' + std::to_string(s.prefill_tokens) + ',' +
                   std::to_string(s.decode_tokens) + ',' + std::to_string(s.running) + ',' +
                   std::to_string(s.waiting) + ',' + std::to_string(s.preempted) + ',' +
                   format_double(s.kv_usage) + ',' + std::to_string(s.draft_tokens) + ',' +
                   std::to_string(s.accepted_tokens) + '\n';
        }
    }
    return out;
}

Status parse_requests_csv(std::string_view csv, std::vector<BenchRun>& runs) {
    return read_csv(csv, kReportRequests, request_columns(), runs.size(),
                    [&](size_t run, CellReader& c, std::vector<std::string>& fields) {
                        BenchRequestRow r;
                        r.index = c.int32(1);
                        r.arrival_s = c.number(2, 0, kCsvBig);
                        r.first_token_s = c.number(3, -1, kCsvBig);
                        r.finish_s = c.number(4, -1, kCsvBig);
                        r.input_tokens = c.int32(5);
                        r.output_tokens = c.int32(6);
                        const bool engine = runs[run].figures.available.engine;
                        r.preemptions = c.engine_int32(7, engine);
                        r.prefix_hit_tokens = c.engine_int32(8, engine);
                        r.error = std::move(fields[9]);
                        if (!c.failed())
                            runs[run].requests.push_back(std::move(r));
                    });
}

Status parse_steps_csv(std::string_view csv, std::vector<BenchRun>& runs) {
    return read_csv(csv, kReportSteps, step_columns(), runs.size(),
                    [&](size_t run, CellReader& c, std::vector<std::string>&) {
                        BenchStepRow s;
                        s.time_s = c.number(1, 0, kCsvBig);
                        s.step_ms = c.number(2, 0, kCsvBig);
                        s.prefill_tokens = c.int32(3);
                        s.decode_tokens = c.int32(4);
                        s.running = c.int32(5);
                        s.waiting = c.int32(6);
                        s.preempted = c.int32(7);
                        s.kv_usage = c.number(8, 0, 1);
                        s.draft_tokens = c.int32(9);
                        s.accepted_tokens = c.int32(10);
                        if (!c.failed())
                            runs[run].steps.push_back(s);
                    });
}

} // namespace llmwb
