// Helpers shared by the report readers and writers (internal to app/report): numbers written
// so that they read back bit for bit, bounded JSON parsing (size and nesting depth checked
// before nlohmann's recursive parser sees the text) and HTML escaping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/util/html_escape.h"
#include "engine/util/json_depth.h"
#include "engine/util/result.h"

namespace llmwb::report_detail {

// No report file is read above this size (results.json, a CSV, environment.json).
inline constexpr size_t kMaxReportFileBytes = size_t{256} << 20;
// Deepest nesting of arrays and objects accepted in a report's JSON (engine/util/json_depth.h).
inline constexpr int kMaxReportJsonDepth = 64;

// The shortest text that reads back as exactly `v` (std::to_chars); finite values only.
std::string format_double(double v);
// A whole cell as a finite double / an integer (no spaces, no trailing text).
bool parse_double(std::string_view s, double* out);
bool parse_int64(std::string_view s, int64_t* out);

using llmwb::check_json_depth;
// Parses one JSON value (depth checked first); errors name `where` and nlohmann's reason.
Result<nlohmann::ordered_json> parse_json_text(std::string_view text, const std::string& where);

// A value from a report, shortened and with control characters shown as \xNN, for errors.
std::string printable(std::string_view s, size_t max_bytes = 40);

// &, <, >, " and ' as entities (text and attribute values alike): engine/util/html_escape.h.
using llmwb::html_escape;

} // namespace llmwb::report_detail
