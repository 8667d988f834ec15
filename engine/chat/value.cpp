#include "engine/chat/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "engine/chat/render_budget.h"
#include "engine/chat/unicode_text.h"

namespace llmwb::jinja {

const Value* DictData::find(std::string_view key) const {
    for (const auto& [k, v] : items)
        if (k == key)
            return &v;
    return nullptr;
}

Value* DictData::find(std::string_view key) {
    for (auto& [k, v] : items)
        if (k == key)
            return &v;
    return nullptr;
}

void DictData::set(std::string key, Value v) {
    if (Value* existing = find(key)) {
        *existing = std::move(v);
        return;
    }
    items.emplace_back(std::move(key), std::move(v));
}

const Value* CallArgs::kwarg(std::string_view name) const {
    for (const auto& [k, v] : kwargs)
        if (k == name)
            return &v;
    return nullptr;
}

size_t nesting_depth(const Value& v) {
    if (v.is_list())
        return v.as_list().depth;
    if (v.is_dict())
        return v.as_dict().depth;
    return 0;
}

Value Value::list(std::vector<Value> items, bool tuple) {
    // Counted against the active render budget (the caller made the vector already: built-ins
    // that can make big lists check before making them).
    uint64_t bytes = 0;
    for (const auto& e : items)
        bytes += shallow_bytes(e);
    budget_charge(bytes);
    auto d = std::make_shared<ListData>();
    d->items = std::move(items);
    d->is_tuple = tuple;
    for (const auto& e : d->items)
        d->depth = std::max(d->depth, nesting_depth(e) + 1);
    return Value(ListPtr(std::move(d)));
}

Value Value::dict(DictData d) {
    d.depth = 1;
    for (const auto& kv : d.items)
        d.depth = std::max(d.depth, nesting_depth(kv.second) + 1);
    return Value(DictPtr(std::make_shared<DictData>(std::move(d))));
}

bool truthy(const Value& v) {
    switch (v.v.index()) {
    case 0:
        return false;
    case 1:
        return false;
    case 2:
        return v.as_bool();
    case 3:
        return v.as_int() != 0;
    case 4:
        return v.as_float() != 0.0;
    case 5:
        return !v.as_string().empty();
    case 6:
        return !v.as_list().items.empty();
    case 7:
        return !v.as_dict().items.empty();
    default:
        return true;
    }
}

std::string float_repr(double d) {
    if (std::isnan(d))
        return "nan";
    if (std::isinf(d))
        return d > 0 ? "inf" : "-inf";
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    // sci: [-]D[.DDD]e[+-]XX
    bool neg = !sci.empty() && sci[0] == '-';
    if (neg)
        sci.erase(0, 1);
    size_t epos = sci.find('e');
    std::string mant = sci.substr(0, epos);
    int exp = std::stoi(sci.substr(epos + 1));
    std::string digits;
    for (char c : mant)
        if (c != '.')
            digits += c;
    while (digits.size() > 1 && digits.back() == '0')
        digits.pop_back();
    std::string out;
    if (exp >= -4 && exp < 16) { // Python's repr: fixed notation for 1e-4 <= |d| < 1e16
        if (exp < 0) {
            out = "0." + std::string(size_t(-exp - 1), '0') + digits;
        } else if (size_t(exp) + 1 >= digits.size()) {
            out = digits + std::string(size_t(exp) + 1 - digits.size(), '0') + ".0";
        } else {
            out = digits.substr(0, size_t(exp) + 1) + "." + digits.substr(size_t(exp) + 1);
        }
        return neg ? "-" + out : out;
    }
    out = digits.substr(0, 1);
    if (digits.size() > 1)
        out += "." + digits.substr(1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += ebuf;
    return neg ? "-" + out : out;
}

static std::string string_repr(const std::string& s) {
    bool has_single = s.find('\'') != std::string::npos;
    bool has_double = s.find('"') != std::string::npos;
    char quote = (has_single && !has_double) ? '"' : '\'';
    std::string out(1, quote);
    out.reserve(s.size() + 2);
    size_t i = 0;
    while (i < s.size()) {
        // A run of printable ASCII other than the quote and the backslash is copied as it is.
        size_t run = i;
        while (run < s.size() && s[run] >= 0x20 && s[run] < 0x7f && s[run] != quote &&
               s[run] != '\\')
            ++run;
        if (run > i) {
            out.append(s, i, run - i);
            i = run;
            continue;
        }
        size_t start = i;
        char32_t cp = utf8_next(s, i);
        if (cp == U'\\')
            out += "\\\\";
        else if (cp == char32_t(quote)) {
            out += '\\';
            out += quote;
        } else if (cp == U'\n')
            out += "\\n";
        else if (cp == U'\r')
            out += "\\r";
        else if (cp == U'\t')
            out += "\\t";
        else if (!is_printable(cp)) {
            char buf[16];
            if (cp < 0x100)
                std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(cp));
            else if (cp < 0x10000)
                std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(cp));
            else
                std::snprintf(buf, sizeof buf, "\\U%08x", unsigned(cp));
            out += buf;
        } else {
            out.append(s, start, i - start);
        }
    }
    out += quote;
    return out;
}

namespace {

// Appends repr(v). Lists can share sub-lists, so the text can be far larger than the value:
// stop once it no longer fits the active render budget (which then holds the error).
void repr_into(std::string& out, const Value& v) {
    switch (v.v.index()) {
    case 0:
        out += "Undefined";
        return;
    case 1:
        out += "None";
        return;
    case 2:
        out += v.as_bool() ? "True" : "False";
        return;
    case 3:
        out += std::to_string(v.as_int());
        return;
    case 4:
        out += float_repr(v.as_float());
        return;
    case 5:
        if (budget_require(out.size() + v.as_string().size()))
            out += string_repr(v.as_string());
        return;
    case 6: {
        const ListData& l = v.as_list();
        out += l.is_tuple ? "(" : "[";
        for (size_t i = 0; i < l.items.size(); ++i) {
            if (!budget_require(out.size()) || !budget_step())
                return;
            if (i)
                out += ", ";
            repr_into(out, l.items[i]);
        }
        if (l.is_tuple && l.items.size() == 1)
            out += ",";
        out += l.is_tuple ? ")" : "]";
        return;
    }
    case 7: {
        out += "{";
        bool first = true;
        for (const auto& [k, val] : v.as_dict().items) {
            if (!budget_require(out.size() + k.size()) || !budget_step())
                return;
            if (!first)
                out += ", ";
            first = false;
            out += string_repr(k) + ": ";
            repr_into(out, val);
        }
        out += "}";
        return;
    }
    case 8: {
        // A namespace can hold itself: print nested namespaces without their attributes.
        static thread_local int namespace_repr_depth = 0;
        if (namespace_repr_depth > 0) {
            out += "<Namespace {...}>";
            return;
        }
        struct Guard {
            Guard() { ++namespace_repr_depth; }
            ~Guard() { --namespace_repr_depth; }
        } guard;
        out += "<Namespace {";
        bool first = true;
        for (const auto& [k, val] : v.as_namespace().attrs.items) {
            if (!budget_require(out.size() + k.size()) || !budget_step())
                return;
            if (!first)
                out += ", ";
            first = false;
            out += string_repr(k) + ": ";
            repr_into(out, val);
        }
        out += "}>";
        return;
    }
    default:
        out += "<function " + v.as_callable().name + ">";
        return;
    }
}

} // namespace

std::string to_repr(const Value& v) {
    std::string out;
    repr_into(out, v);
    return out;
}

size_t shallow_bytes(const Value& v) {
    return sizeof(Value) + (v.is_string() ? v.as_string().size() : 0);
}

std::string to_str(const Value& v) {
    if (v.is_undefined())
        return "";
    if (v.is_string())
        return v.as_string();
    return to_repr(v);
}

std::string type_name(const Value& v) {
    switch (v.v.index()) {
    case 0:
        return "Undefined";
    case 1:
        return "NoneType";
    case 2:
        return "bool";
    case 3:
        return "int";
    case 4:
        return "float";
    case 5:
        return "str";
    case 6:
        return v.as_list().is_tuple ? "tuple" : "list";
    case 7:
        return "dict";
    case 8:
        return "Namespace";
    default:
        return "function";
    }
}

std::string object_type_repr(const Value& v) {
    if (v.is_none())
        return "None";
    return type_name(v) + " object";
}

bool equals(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float())
            return a.number_value() == b.number_value();
        return a.int_value() == b.int_value();
    }
    if (a.v.index() != b.v.index())
        return false;
    switch (a.v.index()) {
    case 0:
        return true;
    case 1:
        return true;
    case 5:
        return a.as_string() == b.as_string();
    case 6: {
        const ListData& x = a.as_list();
        const ListData& y = b.as_list();
        if (x.is_tuple != y.is_tuple || x.items.size() != y.items.size())
            return false;
        for (size_t i = 0; i < x.items.size(); ++i)
            if (!equals(x.items[i], y.items[i]))
                return false;
        return true;
    }
    case 7: {
        const DictData& x = a.as_dict();
        const DictData& y = b.as_dict();
        if (x.items.size() != y.items.size())
            return false;
        for (const auto& [k, val] : x.items) {
            const Value* other = y.find(k);
            if (!other || !equals(val, *other))
                return false;
        }
        return true;
    }
    case 8:
        return std::get<NamespacePtr>(a.v) == std::get<NamespacePtr>(b.v);
    case 9:
        return std::get<CallablePtr>(a.v) == std::get<CallablePtr>(b.v);
    default:
        return false;
    }
}

Result<int> compare(const Value& a, const Value& b) {
    if (a.is_undefined())
        return make_error(a.undefined_message()); // Undefined.__lt__ etc. fail
    if (b.is_undefined())
        return make_error(b.undefined_message());
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) {
            double x = a.number_value(), y = b.number_value();
            return x < y ? -1 : (x > y ? 1 : 0);
        }
        int64_t x = a.int_value(), y = b.int_value();
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    if (a.is_string() && b.is_string()) {
        int c = a.as_string().compare(b.as_string()); // UTF-8 byte order == code point order
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    if (a.is_list() && b.is_list() && a.as_list().is_tuple == b.as_list().is_tuple) {
        const auto& x = a.as_list().items;
        const auto& y = b.as_list().items;
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (equals(x[i], y[i]))
                continue;
            return compare(x[i], y[i]);
        }
        return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
    }
    return make_error("'<' not supported between instances of '" + type_name(a) + "' and '" +
                      type_name(b) + "'");
}

Value from_json(const nlohmann::ordered_json& j) {
    using J = nlohmann::ordered_json;
    switch (j.type()) {
    case J::value_t::null:
        return Value(nullptr);
    case J::value_t::boolean:
        return Value(j.get<bool>());
    case J::value_t::number_integer:
        return Value(j.get<int64_t>());
    case J::value_t::number_unsigned: {
        uint64_t u = j.get<uint64_t>();
        if (u <= uint64_t(INT64_MAX))
            return Value(int64_t(u));
        return Value(double(u));
    }
    case J::value_t::number_float:
        return Value(j.get<double>());
    case J::value_t::string:
        return Value(j.get<std::string>());
    case J::value_t::array: {
        std::vector<Value> items;
        items.reserve(j.size());
        for (const auto& e : j)
            items.push_back(from_json(e));
        return Value::list(std::move(items));
    }
    case J::value_t::object: {
        DictData d;
        d.items.reserve(j.size());
        for (auto it = j.begin(); it != j.end(); ++it)
            d.items.emplace_back(it.key(), from_json(it.value()));
        return Value::dict(std::move(d));
    }
    default:
        return Value(nullptr); // binary / discarded: not produced by the JSON parser
    }
}

Result<nlohmann::ordered_json> to_json(const Value& v) {
    using J = nlohmann::ordered_json;
    switch (v.v.index()) {
    case 1:
        return J(nullptr);
    case 2:
        return J(v.as_bool());
    case 3:
        return J(v.as_int());
    case 4:
        return J(v.as_float());
    case 5:
        return J(v.as_string());
    case 6: {
        J arr = J::array();
        for (const auto& e : v.as_list().items) {
            auto r = to_json(e);
            if (!r)
                return r.error();
            arr.push_back(std::move(*r));
        }
        return arr;
    }
    case 7: {
        J obj = J::object();
        for (const auto& [k, e] : v.as_dict().items) {
            auto r = to_json(e);
            if (!r)
                return r.error();
            obj[k] = std::move(*r);
        }
        return obj;
    }
    default:
        return make_error("Object of type " + type_name(v) + " is not JSON serializable");
    }
}

} // namespace llmwb::jinja
