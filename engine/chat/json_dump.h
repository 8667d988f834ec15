// Python's json.dumps, byte for byte, as Hugging Face's `tojson` filter calls it:
// json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys).
#pragma once

#include <optional>
#include <string>

#include "engine/chat/value.h"

namespace llmwb::jinja {

struct JsonDumpOptions {
    bool ensure_ascii = false;
    std::optional<std::string> indent; // nullopt = single line; "" = newlines without indentation
    std::optional<std::string> item_separator; // default ", " (single line) or "," (indented)
    std::optional<std::string> key_separator;  // default ": "
    bool sort_keys = false;
};

Result<std::string> json_dumps(const Value& v, const JsonDumpOptions& options);

} // namespace llmwb::jinja
