#include "engine/chat/json_dump.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/chat/render_budget.h"
#include "engine/chat/unicode_text.h"

namespace llmwb::jinja {

namespace {

constexpr int kMaxJsonDepth = 512;

void append_u(std::string& out, unsigned v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\u%04x", v);
    out += buf;
}

void dump_string(std::string& out, const std::string& s, bool ensure_ascii) {
    out += '"';
    size_t i = 0;
    while (i < s.size()) {
        size_t start = i;
        char32_t c = utf8_next(s, i);
        switch (c) {
        case U'"':
            out += "\\\"";
            break;
        case U'\\':
            out += "\\\\";
            break;
        case U'\n':
            out += "\\n";
            break;
        case U'\r':
            out += "\\r";
            break;
        case U'\t':
            out += "\\t";
            break;
        case U'\b':
            out += "\\b";
            break;
        case U'\f':
            out += "\\f";
            break;
        default:
            if (c < 0x20) {
                append_u(out, unsigned(c));
            } else if (ensure_ascii && c >= 0x7F) {
                if (c >= 0x10000) {
                    char32_t v = c - 0x10000;
                    append_u(out, unsigned(0xD800 + (v >> 10)));
                    append_u(out, unsigned(0xDC00 + (v & 0x3FF)));
                } else {
                    append_u(out, unsigned(c));
                }
            } else {
                out.append(s, start, i - start);
            }
        }
    }
    out += '"';
}

class Dumper {
  public:
    explicit Dumper(const JsonDumpOptions& o) : o_(o) {
        item_sep_ = o.item_separator ? *o.item_separator : (o.indent ? "," : ", ");
        key_sep_ = o.key_separator ? *o.key_separator : ": ";
    }

    Status dump(std::string& out, const Value& v, int level) {
        if (level > kMaxJsonDepth)
            return make_error("tojson: value nested too deeply");
        // Shared sub-lists can make the text far larger than the value: stop at the budget.
        if (!budget_require(out.size()) || !budget_step())
            return make_error(budget_error_text());
        switch (v.v.index()) {
        case 1:
            out += "null";
            return ok_status();
        case 2:
            out += v.as_bool() ? "true" : "false";
            return ok_status();
        case 3:
            out += std::to_string(v.as_int());
            return ok_status();
        case 4: {
            double d = v.as_float();
            if (std::isnan(d))
                out += "NaN";
            else if (std::isinf(d))
                out += d > 0 ? "Infinity" : "-Infinity";
            else
                out += float_repr(d);
            return ok_status();
        }
        case 5:
            if (!budget_require(out.size() + v.as_string().size()))
                return make_error(budget_error_text());
            dump_string(out, v.as_string(), o_.ensure_ascii);
            return ok_status();
        case 6: {
            const auto& items = v.as_list().items;
            if (items.empty()) {
                out += "[]";
                return ok_status();
            }
            out += '[';
            for (size_t i = 0; i < items.size(); ++i) {
                if (i)
                    out += item_sep_;
                if (auto st = newline(out, level + 1); !st)
                    return st;
                if (auto st = dump(out, items[i], level + 1); !st)
                    return st;
            }
            if (auto st = newline(out, level); !st)
                return st;
            out += ']';
            return ok_status();
        }
        case 7: {
            const auto& items = v.as_dict().items;
            if (items.empty()) {
                out += "{}";
                return ok_status();
            }
            std::vector<size_t> order(items.size());
            for (size_t i = 0; i < order.size(); ++i)
                order[i] = i;
            if (o_.sort_keys)
                std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
                    return items[a].first < items[b].first;
                });
            out += '{';
            bool first = true;
            for (size_t idx : order) {
                if (!first)
                    out += item_sep_;
                first = false;
                if (auto st = newline(out, level + 1); !st)
                    return st;
                dump_string(out, items[idx].first, o_.ensure_ascii);
                out += key_sep_;
                if (auto st = dump(out, items[idx].second, level + 1); !st)
                    return st;
            }
            if (auto st = newline(out, level); !st)
                return st;
            out += '}';
            return ok_status();
        }
        default:
            return make_error("Object of type " + type_name(v) + " is not JSON serializable");
        }
    }

  private:
    Status newline(std::string& out, int level) const {
        if (!o_.indent)
            return ok_status();
        // The indent is the template's string: check before writing `level` copies of it.
        if (!budget_require(out.size() + 1 + uint64_t(level) * o_.indent->size()))
            return make_error(budget_error_text());
        out += '\n';
        for (int i = 0; i < level; ++i)
            out += *o_.indent;
        return ok_status();
    }

    const JsonDumpOptions& o_;
    std::string item_sep_, key_sep_;
};

} // namespace

Result<std::string> json_dumps(const Value& v, const JsonDumpOptions& options) {
    Dumper d(options);
    std::string out;
    if (auto st = d.dump(out, v, 0); !st)
        return st.error();
    return out;
}

} // namespace llmwb::jinja
