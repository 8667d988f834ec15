// The Prometheus text exposition format (version 0.0.4), as /metrics of vLLM, SGLang, llama.cpp's
// server (--metrics) and `llmwb serve` write it: "# HELP name text", "# TYPE name type", and
// samples `name{label="value",...} value [timestamp]`. Label values unescape \\, \" and \n; HELP
// text unescapes \\ and \n. Values are floats, including NaN, +Inf and -Inf (legal in the format;
// the figures built on a scrape decide what a non-finite value means). The text comes from a
// server: bounded (total size, line length, samples, labels per sample), and every failure names
// the line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/util/result.h"

namespace llmwb::remote {

struct PromSample {
    std::string name;
    std::vector<std::pair<std::string, std::string>> labels; // in the text's order
    double value = 0;
    std::optional<int64_t> timestamp_ms;

    // The value of a label, nullptr when the sample has none of that name.
    const std::string* label(std::string_view key) const;
};

struct PromFamily {
    std::string type; // counter | gauge | histogram | summary | untyped ("" when not given)
    std::string help;
};

struct PromScrape {
    std::vector<PromSample> samples;            // in the text's order
    std::map<std::string, PromFamily> families; // by the name HELP/TYPE gave
};

struct PromLimits {
    size_t max_bytes = 32u << 20;
    size_t max_line = 64u << 10;
    size_t max_samples = 200000;
    size_t max_labels = 64; // per sample
};

// Errors ("line N: ..."): a line or text past the limits, too many samples or labels, a bad
// metric or label name, an unterminated or badly escaped label value, a duplicate label, a
// value that is not a number, a TYPE that is not one of the five, a duplicate TYPE.
Result<PromScrape> parse_prometheus_text(std::string_view text, const PromLimits& limits = {});

} // namespace llmwb::remote
