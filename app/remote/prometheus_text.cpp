#include "app/remote/prometheus_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace llmwb::remote {

const std::string* PromSample::label(std::string_view key) const {
    for (const auto& [k, v] : labels)
        if (k == key)
            return &v;
    return nullptr;
}

namespace {

bool name_start(char c, bool colon_ok) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon_ok && c == ':');
}
bool name_char(char c, bool colon_ok) {
    return name_start(c, colon_ok) || (c >= '0' && c <= '9');
}

// Reads [a-zA-Z_:][a-zA-Z0-9_:]* (labels: without ':') at `pos`; "" when none.
std::string_view read_name(std::string_view s, size_t& pos, bool colon_ok) {
    const size_t b = pos;
    if (pos < s.size() && name_start(s[pos], colon_ok))
        while (pos < s.size() && name_char(s[pos], colon_ok))
            ++pos;
    return s.substr(b, pos - b);
}

void skip_blanks(std::string_view s, size_t& pos) {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t'))
        ++pos;
}

std::string_view read_token(std::string_view s, size_t& pos) {
    const size_t b = pos;
    while (pos < s.size() && s[pos] != ' ' && s[pos] != '\t')
        ++pos;
    return s.substr(b, pos - b);
}

// A float as Go's ParseFloat (Prometheus) reads it: decimal or exponent notation, NaN, Inf with
// an optional sign, case-insensitive.
std::optional<double> parse_value(std::string_view t) {
    if (t.empty())
        return std::nullopt;
    bool neg = false;
    std::string_view body = t;
    if (body[0] == '+' || body[0] == '-') {
        neg = body[0] == '-';
        body.remove_prefix(1);
    }
    std::string lower(body);
    for (char& c : lower)
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (lower == "inf" || lower == "infinity")
        return neg ? -std::numeric_limits<double>::infinity()
                   : std::numeric_limits<double>::infinity();
    if (lower == "nan")
        return std::numeric_limits<double>::quiet_NaN();
    if (body.empty() || !((body[0] >= '0' && body[0] <= '9') || body[0] == '.'))
        return std::nullopt;
    double v = 0;
    auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
    if (end != body.data() + body.size() ||
        (ec != std::errc() && ec != std::errc::result_out_of_range))
        return std::nullopt;
    if (ec == std::errc::result_out_of_range) // as ParseFloat: +-Inf on overflow
        v = std::abs(v) > 1 ? std::numeric_limits<double>::infinity() : 0.0;
    return neg ? -v : v;
}

bool valid_type(std::string_view t) {
    return t == "counter" || t == "gauge" || t == "histogram" || t == "summary" || t == "untyped";
}

} // namespace

Result<PromScrape> parse_prometheus_text(std::string_view text, const PromLimits& limits) {
    if (text.size() > limits.max_bytes)
        return make_error("metrics text larger than " + std::to_string(limits.max_bytes) +
                          " bytes");
    PromScrape out;
    std::map<std::string, bool> typed; // names with a TYPE line
    size_t line_no = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        ++line_no;
        size_t eol = text.find('\n', pos);
        if (eol == std::string_view::npos)
            eol = text.size();
        std::string_view line = text.substr(pos, eol - pos);
        pos = eol + 1;
        const std::string at = "line " + std::to_string(line_no) + ": ";
        if (line.size() > limits.max_line)
            return make_error(at + "longer than " + std::to_string(limits.max_line) + " bytes");
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        size_t p = 0;
        skip_blanks(line, p);
        if (p == line.size())
            continue;
        if (line[p] == '#') {
            ++p;
            skip_blanks(line, p);
            std::string_view kw = read_token(line, p);
            if (kw != "HELP" && kw != "TYPE")
                continue; // a plain comment
            skip_blanks(line, p);
            std::string_view name = read_name(line, p, true);
            if (name.empty())
                return make_error(at + "# " + std::string(kw) + " without a metric name");
            if (p < line.size() && line[p] != ' ' && line[p] != '\t')
                return make_error(at + "bad metric name in # " + std::string(kw));
            skip_blanks(line, p);
            std::string_view rest = line.substr(p);
            PromFamily& fam = out.families[std::string(name)];
            if (kw == "TYPE") {
                while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t'))
                    rest.remove_suffix(1);
                if (!valid_type(rest))
                    return make_error(at + "unknown metric type '" +
                                      std::string(rest.substr(0, 40)) + "' for " +
                                      std::string(name));
                if (typed[std::string(name)])
                    return make_error(at + "a second # TYPE for " + std::string(name));
                typed[std::string(name)] = true;
                fam.type = std::string(rest);
            } else {
                std::string help;
                for (size_t i = 0; i < rest.size(); ++i) {
                    if (rest[i] == '\\' && i + 1 < rest.size() &&
                        (rest[i + 1] == '\\' || rest[i + 1] == 'n')) {
                        help.push_back(rest[i + 1] == 'n' ? '\n' : '\\');
                        ++i;
                    } else {
                        help.push_back(rest[i]);
                    }
                }
                fam.help = std::move(help);
            }
            continue;
        }
        if (out.samples.size() >= limits.max_samples)
            return make_error(at + "more than " + std::to_string(limits.max_samples) + " samples");
        PromSample s;
        std::string_view name = read_name(line, p, true);
        if (name.empty())
            return make_error(at + "a sample without a valid metric name");
        s.name = std::string(name);
        if (p < line.size() && line[p] == '{') {
            ++p;
            while (true) {
                skip_blanks(line, p);
                if (p < line.size() && line[p] == '}') {
                    ++p;
                    break;
                }
                std::string_view key = read_name(line, p, false);
                if (key.empty())
                    return make_error(at + "a bad label name in " + s.name);
                skip_blanks(line, p);
                if (p >= line.size() || line[p] != '=')
                    return make_error(at + "label " + std::string(key) + " of " + s.name +
                                      " without '='");
                ++p;
                skip_blanks(line, p);
                if (p >= line.size() || line[p] != '"')
                    return make_error(at + "label " + std::string(key) + " of " + s.name +
                                      ": the value is not quoted");
                ++p;
                std::string value;
                bool closed = false;
                while (p < line.size()) {
                    const char c = line[p++];
                    if (c == '"') {
                        closed = true;
                        break;
                    }
                    if (c == '\\') {
                        if (p >= line.size())
                            break;
                        const char e = line[p++];
                        if (e == '\\' || e == '"')
                            value.push_back(e);
                        else if (e == 'n')
                            value.push_back('\n');
                        else
                            return make_error(at + "label " + std::string(key) + " of " + s.name +
                                              ": bad escape \\" + std::string(1, e));
                    } else {
                        value.push_back(c);
                    }
                }
                if (!closed)
                    return make_error(at + "label " + std::string(key) + " of " + s.name +
                                      ": unterminated value");
                if (s.label(key))
                    return make_error(at + "label " + std::string(key) + " twice in " + s.name);
                if (s.labels.size() >= limits.max_labels)
                    return make_error(at + "more than " + std::to_string(limits.max_labels) +
                                      " labels in " + s.name);
                s.labels.emplace_back(std::string(key), std::move(value));
                skip_blanks(line, p);
                if (p < line.size() && line[p] == ',') {
                    ++p;
                    continue;
                }
                if (p < line.size() && line[p] == '}') {
                    ++p;
                    break;
                }
                return make_error(at + "labels of " + s.name + " not closed with '}'");
            }
        }
        if (p < line.size() && line[p] != ' ' && line[p] != '\t')
            return make_error(at + "junk after the name of " + s.name);
        skip_blanks(line, p);
        std::string_view vt = read_token(line, p);
        auto v = parse_value(vt);
        if (!v)
            return make_error(at + s.name + ": the value '" + std::string(vt.substr(0, 40)) +
                              "' is not a number");
        s.value = *v;
        skip_blanks(line, p);
        if (p < line.size()) {
            std::string_view ts = read_token(line, p);
            int64_t t = 0;
            auto [end, ec] = std::from_chars(ts.data(), ts.data() + ts.size(), t);
            if (ec != std::errc() || end != ts.data() + ts.size())
                return make_error(at + s.name + ": the timestamp '" +
                                  std::string(ts.substr(0, 40)) + "' is not an integer");
            s.timestamp_ms = t;
            skip_blanks(line, p);
            if (p < line.size())
                return make_error(at + "junk after the sample of " + s.name);
        }
        out.samples.push_back(std::move(s));
    }
    return out;
}

} // namespace llmwb::remote
