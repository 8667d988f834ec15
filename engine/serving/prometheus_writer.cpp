#include "engine/serving/prometheus_writer.h"

#include <charconv>
#include <cmath>

namespace llmwb::metrics {

void append_label_value(std::string& out, std::string_view value) {
    for (char c : value) {
        switch (c) {
        case '\\':
            out += "\\\\";
            break;
        case '"':
            out += "\\\"";
            break;
        case '\n':
            out += "\\n";
            break;
        default:
            out += c;
        }
    }
}

void append_help_text(std::string& out, std::string_view text) {
    for (char c : text) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
}

void append_number(std::string& out, double v) {
    if (std::isnan(v)) {
        out += "NaN";
        return;
    }
    if (std::isinf(v)) {
        out += v > 0 ? "+Inf" : "-Inf";
        return;
    }
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, v); // shortest round trip
    const std::string_view text(buf, static_cast<size_t>(res.ptr - buf));
    out += text;
    if (text.find_first_of(".e") == std::string_view::npos)
        out += ".0";
}

void TextWriter::family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    append_help_text(out_, help);
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
}

void TextWriter::sample(std::string_view name, std::span<const Label> labels, double value,
                        std::span<const Label> extra) {
    out_ += name;
    bool first = true;
    for (std::span<const Label> list : {labels, extra})
        for (const Label& l : list) {
            out_ += first ? '{' : ',';
            first = false;
            out_ += l.name;
            out_ += "=\"";
            append_label_value(out_, l.value);
            out_ += '"';
        }
    if (!first)
        out_ += '}';
    out_ += ' ';
    append_number(out_, value);
    out_ += '\n';
}

void TextWriter::histogram(std::string_view name, std::string_view help,
                           std::span<const Label> labels, const Histogram& h) {
    family(name, "histogram", help);
    const std::string bucket = std::string(name) + "_bucket";
    uint64_t cumulative = 0;
    for (int32_t i = 0; i <= h.num_bounds(); ++i) {
        cumulative += h.in_bucket(i);
        scratch_.clear();
        if (i < h.num_bounds())
            append_number(scratch_, h.bound(i));
        else
            scratch_ = "+Inf";
        const Label le{"le", scratch_};
        sample(bucket, labels, static_cast<double>(cumulative), std::span<const Label>(&le, 1));
    }
    sample(std::string(name) + "_count", labels, static_cast<double>(h.count()));
    sample(std::string(name) + "_sum", labels, h.sum());
}

} // namespace llmwb::metrics
