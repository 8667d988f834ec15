#include "app/report/report_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

namespace llmwb::report_detail {

std::string format_double(double v) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    if (r.ec != std::errc())
        return "0";
    return std::string(buf, r.ptr);
}

bool parse_double(std::string_view s, double* out) {
    if (s.empty())
        return false;
    const char* b = s.data();
    const char* e = b + s.size();
    // from_chars takes no leading '+', and would read "inf"/"nan": neither is a report number.
    double v = 0;
    const auto r = std::from_chars(b, e, v, std::chars_format::general);
    if (r.ec != std::errc() || r.ptr != e || !std::isfinite(v))
        return false;
    *out = v;
    return true;
}

bool parse_int64(std::string_view s, int64_t* out) {
    if (s.empty())
        return false;
    const char* b = s.data();
    const char* e = b + s.size();
    int64_t v = 0;
    const auto r = std::from_chars(b, e, v);
    if (r.ec != std::errc() || r.ptr != e)
        return false;
    *out = v;
    return true;
}

Result<nlohmann::ordered_json> parse_json_text(std::string_view text, const std::string& where) {
    if (text.size() > kMaxReportFileBytes)
        return make_error(where + ": larger than " + std::to_string(kMaxReportFileBytes >> 20) +
                          " MiB");
    if (Status st = check_json_depth(text, kMaxReportJsonDepth, where); !st)
        return st.error();
    try {
        return nlohmann::ordered_json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::exception& e) {
        std::string what = e.what();
        // "[json.exception.parse_error.101] parse error at line 1, ..." -> "parse error at ..."
        if (const size_t k = what.find("] ");
            what.rfind("[json.exception", 0) == 0 && k != what.npos)
            what.erase(0, k + 2);
        return make_error(where + ": malformed JSON: " + what);
    }
}

std::string printable(std::string_view s, size_t max_bytes) {
    std::string out;
    size_t n = std::min(s.size(), max_bytes);
    while (n < s.size() && n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
        --n; // not inside a UTF-8 sequence
    for (size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02X", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (n < s.size())
        out += "...";
    return out;
}

} // namespace llmwb::report_detail
