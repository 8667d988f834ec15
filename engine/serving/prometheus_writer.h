// The Prometheus text exposition format (version 0.0.4), written: HELP and TYPE lines, samples
// with escaped label values, numbers as Prometheus' Python client writes them (so that a
// scrape of `llmwb serve` reads like one of vLLM: "1.0", "0.25", "+Inf"), histograms as
// cumulative _bucket samples with an le label, then _count and _sum.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/serving/prometheus_histogram.h"

namespace llmwb::metrics {

struct Label {
    std::string_view name;
    std::string_view value; // raw; the writer escapes it
};

// Label values: backslash, double quote and line feed as \\, \" and \n.
void append_label_value(std::string& out, std::string_view value);
// HELP text: backslash and line feed as \\ and \n.
void append_help_text(std::string& out, std::string_view text);
// The shortest text that reads back as `v`, with ".0" on integral values ("3.0", "0.001",
// "1e-05"); "+Inf", "-Inf", "NaN".
void append_number(std::string& out, double v);

class TextWriter {
  public:
    explicit TextWriter(std::string& out) : out_(out) {}

    // "# HELP name help" and "# TYPE name type" (type: counter, gauge, histogram, untyped).
    void family(std::string_view name, std::string_view type, std::string_view help);
    // name{labels...} value. `extra` (if any) is written after `labels` (e.g. le, a reason).
    void sample(std::string_view name, std::span<const Label> labels, double value,
                std::span<const Label> extra = {});
    // A whole histogram family: HELP, TYPE, cumulative buckets, +Inf, _count, _sum.
    void histogram(std::string_view name, std::string_view help, std::span<const Label> labels,
                   const Histogram& h);

  private:
    std::string& out_;
    std::string scratch_; // sample names with suffixes, le values
};

} // namespace llmwb::metrics
