// Jinja2 filters (`x | trim`, `x | tojson(indent=4)`, `xs | selectattr('a', 'equalto', 1)`, ...),
// with Hugging Face's tojson (json.dumps with ensure_ascii=False).
#include <algorithm>
#include <cmath>
#include <map>

#include "engine/chat/builtins.h"
#include "engine/chat/json_dump.h"
#include "engine/chat/render_budget.h"
#include "engine/chat/unicode_text.h"
#include "engine/util/html_escape.h"

namespace llmwb::jinja {

namespace {

using FilterFn = Result<Value> (*)(const Value&, const CallArgs&);

// environment.getitem over a dotted path ("a.b.0"), as Jinja2's make_attrgetter does.
Result<Value> attr_path(const Value& obj, const std::string& path) {
    Value cur = obj;
    size_t pos = 0;
    while (pos <= path.size()) {
        size_t dot = path.find('.', pos);
        std::string part =
            path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
        Value key(part);
        if (!part.empty() &&
            std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
            key = Value(int64_t(std::stoll(part)));
        if (cur.is_undefined())
            return make_error(cur.undefined_message()); // Undefined[...] fails
        if (auto v = get_item(cur, key))
            cur = *v;
        else if (auto m = key.is_string() ? get_method(cur, part) : std::nullopt)
            cur = *m;
        else
            cur = Value::undefined(
                key.is_string() ? "'" + object_type_repr(cur) + "' has no attribute '" + part + "'"
                                : object_type_repr(cur) + " has no element " + part);
        if (dot == std::string::npos)
            break;
        pos = dot + 1;
    }
    return cur;
}

Result<std::vector<Value>> items_of(const Value& v) {
    return iterate(v);
}

bool flag(const CallArgs& a, size_t pos, const char* name, bool dflt = false) {
    const Value* v = arg_at(a, pos, name);
    return v ? truthy(*v) : dflt;
}

Value sort_key(const Value& v, bool case_sensitive) {
    if (!case_sensitive && v.is_string())
        return Value(py_lower(v.as_string()));
    return v;
}

Result<std::vector<Value>> sorted(std::vector<Value> items, bool reverse, bool case_sensitive,
                                  const Value* attribute) {
    std::vector<Value> keys;
    for (const auto& it : items) {
        Value k = it;
        if (attribute && attribute->is_string()) {
            auto r = attr_path(it, attribute->as_string());
            if (!r)
                return r.error();
            k = std::move(*r);
        }
        keys.push_back(sort_key(k, case_sensitive));
    }
    std::vector<size_t> order(items.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::optional<Error> err;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        auto c = reverse ? compare(keys[b], keys[a]) : compare(keys[a], keys[b]);
        if (!c) {
            if (!err)
                err = c.error();
            return false;
        }
        return *c < 0;
    });
    if (err)
        return *err;
    std::vector<Value> out;
    for (size_t i : order)
        out.push_back(items[i]);
    return out;
}

Result<Value> filter_tojson(const Value& x, const CallArgs& a) {
    JsonDumpOptions o;
    o.ensure_ascii = flag(a, 0, "ensure_ascii");
    if (const Value* ind = arg_at(a, 1, "indent"); ind && !ind->is_none()) {
        if (ind->is_string())
            o.indent = ind->as_string();
        else if (ind->is_int())
            o.indent = std::string(
                size_t(std::max<int64_t>(0, std::min<int64_t>(ind->as_int(), 1000))), ' ');
        else
            return make_error("tojson: indent must be an integer or a string");
    }
    if (const Value* sep = arg_at(a, 2, "separators"); sep && !sep->is_none()) {
        if (!sep->is_list() || sep->as_list().items.size() != 2 ||
            !sep->as_list().items[0].is_string() || !sep->as_list().items[1].is_string())
            return make_error("tojson: separators must be a pair of strings");
        o.item_separator = sep->as_list().items[0].as_string();
        o.key_separator = sep->as_list().items[1].as_string();
    }
    o.sort_keys = flag(a, 3, "sort_keys");
    auto s = json_dumps(x, o);
    if (!s)
        return s.error();
    return Value(std::move(*s));
}

Result<Value> filter_length(const Value& x, const CallArgs&) {
    if (x.is_string())
        return Value(int64_t(utf8_length(x.as_string())));
    if (x.is_list())
        return Value(int64_t(x.as_list().items.size()));
    if (x.is_dict())
        return Value(int64_t(x.as_dict().items.size()));
    if (x.is_undefined())
        return Value(int64_t(0));
    return make_error("object of type '" + type_name(x) + "' has no len()");
}

Result<Value> filter_default(const Value& x, const CallArgs& a) {
    const Value* d = arg_at(a, 0, "default_value");
    bool boolean = flag(a, 1, "boolean");
    if (x.is_undefined() || (boolean && !truthy(x)))
        return d ? *d : Value(std::string());
    return x;
}

Result<Value> filter_join(const Value& x, const CallArgs& a) {
    const Value* d = arg_at(a, 0, "d");
    const Value* attribute = arg_at(a, 1, "attribute");
    auto items = items_of(x);
    if (!items)
        return items.error();
    std::string sep = d ? to_str(*d) : std::string();
    std::string out;
    for (size_t i = 0; i < items->size(); ++i) {
        if (i)
            out += sep;
        auto v = attribute && attribute->is_string()
                     ? attr_path((*items)[i], attribute->as_string())
                     : Result<Value>((*items)[i]);
        if (!v)
            return v.error();
        // Check before appending: the items can be many references to one big string.
        std::string piece = to_str(*v);
        if (!budget_require(uint64_t(out.size()) + sep.size() + piece.size()))
            return make_error(budget_error_text());
        out += piece;
    }
    return Value(std::move(out));
}

Result<Value> filter_int(const Value& x, const CallArgs& a) {
    if (x.is_undefined())
        return make_error(x.undefined_message()); // int(Undefined) fails
    const Value* d = arg_at(a, 0, "default");
    Value dflt = d ? *d : Value(int64_t(0));
    if (x.is_int() || x.is_bool())
        return Value(x.int_value());
    if (x.is_float()) {
        double f = x.as_float();
        if (!std::isfinite(f) || std::fabs(f) >= 9.2e18)
            return dflt;
        return Value(int64_t(f));
    }
    if (x.is_string()) {
        std::string s = py_strip(x.as_string(), nullptr, true, true);
        std::string digits;
        for (char c : s)
            if (c != '_')
                digits += c;
        char* end = nullptr;
        errno = 0;
        long long v = digits.empty() ? 0 : std::strtoll(digits.c_str(), &end, 10);
        if (!digits.empty() && end && *end == '\0' && errno == 0)
            return Value(int64_t(v));
        end = nullptr;
        double f = s.empty() ? 0 : std::strtod(s.c_str(), &end);
        if (!s.empty() && end && *end == '\0' && std::isfinite(f) && std::fabs(f) < 9.2e18)
            return Value(int64_t(f));
        return dflt;
    }
    return dflt;
}

Result<Value> filter_float(const Value& x, const CallArgs& a) {
    if (x.is_undefined())
        return make_error(x.undefined_message()); // float(Undefined) fails
    const Value* d = arg_at(a, 0, "default");
    Value dflt = d ? *d : Value(0.0);
    if (x.is_number())
        return Value(x.number_value());
    if (x.is_string()) {
        std::string s = py_strip(x.as_string(), nullptr, true, true);
        char* end = nullptr;
        double f = s.empty() ? 0 : std::strtod(s.c_str(), &end);
        if (!s.empty() && end && *end == '\0')
            return Value(f);
    }
    return dflt;
}

Result<Value> filter_first(const Value& x, const CallArgs&) {
    auto items = items_of(x);
    if (!items)
        return items.error();
    if (items->empty())
        return Value::undefined("No first item, sequence was empty.");
    return items->front();
}

Result<Value> filter_last(const Value& x, const CallArgs&) {
    auto items = items_of(x);
    if (!items)
        return items.error();
    if (items->empty())
        return Value::undefined("No last item, sequence was empty.");
    return items->back();
}

Result<Value> filter_reverse(const Value& x, const CallArgs&) {
    if (x.is_string()) {
        std::u32string u = to_u32(x.as_string());
        std::reverse(u.begin(), u.end());
        return Value(to_utf8(u));
    }
    auto items = items_of(x);
    if (!items)
        return items.error();
    std::reverse(items->begin(), items->end());
    return Value::list(std::move(*items));
}

Result<Value> filter_list(const Value& x, const CallArgs&) {
    auto items = items_of(x);
    if (!items)
        return items.error();
    return Value::list(std::move(*items));
}

Result<Value> filter_items(const Value& x, const CallArgs&) {
    if (x.is_undefined())
        return Value::list({});
    if (!x.is_dict())
        return make_error("items filter: can only get item pairs from a mapping");
    std::vector<Value> out;
    for (const auto& [k, v] : x.as_dict().items)
        out.push_back(Value::list({Value(k), v}, true));
    return Value::list(std::move(out));
}

Result<Value> filter_dictsort(const Value& x, const CallArgs& a) {
    if (x.is_undefined())
        return make_error(x.undefined_message());
    if (!x.is_dict())
        return make_error("dictsort filter: can only sort a mapping");
    bool case_sensitive = flag(a, 0, "case_sensitive");
    const Value* by = arg_at(a, 1, "by");
    bool by_value = by && by->is_string() && by->as_string() == "value";
    bool reverse = flag(a, 2, "reverse");
    std::vector<Value> pairs;
    for (const auto& [k, v] : x.as_dict().items)
        pairs.push_back(Value::list({Value(k), v}, true));
    Value attr(by_value ? "1" : "0");
    auto s = sorted(std::move(pairs), reverse, case_sensitive, &attr);
    if (!s)
        return s.error();
    return Value::list(std::move(*s));
}

Result<Value> filter_sort(const Value& x, const CallArgs& a) {
    auto items = items_of(x);
    if (!items)
        return items.error();
    auto s = sorted(std::move(*items), flag(a, 0, "reverse"), flag(a, 1, "case_sensitive"),
                    arg_at(a, 2, "attribute"));
    if (!s)
        return s.error();
    return Value::list(std::move(*s));
}

Result<Value> filter_unique(const Value& x, const CallArgs& a) {
    auto items = items_of(x);
    if (!items)
        return items.error();
    bool cs = flag(a, 0, "case_sensitive");
    const Value* attribute = arg_at(a, 1, "attribute");
    std::vector<Value> out, seen;
    for (const auto& it : *items) {
        auto kv = attribute && attribute->is_string() ? attr_path(it, attribute->as_string())
                                                      : Result<Value>(it);
        if (!kv)
            return kv.error();
        Value k = sort_key(*kv, cs);
        if ((k.is_list() && !k.as_list().is_tuple) || k.is_dict() || k.is_namespace())
            return make_error("unhashable type: '" + type_name(k) + "'");
        if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, k); }))
            continue;
        seen.push_back(k);
        out.push_back(it);
    }
    return Value::list(std::move(out));
}

Result<Value> min_max(const Value& x, const CallArgs& a, bool want_max) {
    auto items = items_of(x);
    if (!items)
        return items.error();
    if (items->empty())
        return Value::undefined(std::string("No aggregated item, sequence was empty."));
    bool cs = flag(a, 0, "case_sensitive");
    const Value* attribute = arg_at(a, 1, "attribute");
    auto key = [&](const Value& it) -> Result<Value> {
        auto k = attribute && attribute->is_string() ? attr_path(it, attribute->as_string())
                                                     : Result<Value>(it);
        if (!k)
            return k;
        return sort_key(*k, cs);
    };
    // Like Python's min/max: the first of several equal extremes wins.
    size_t best = 0;
    auto best_key = key((*items)[0]);
    if (!best_key)
        return best_key.error();
    for (size_t i = 1; i < items->size(); ++i) {
        auto k = key((*items)[i]);
        if (!k)
            return k.error();
        auto c = compare(*k, *best_key);
        if (!c)
            return c.error();
        if (want_max ? *c > 0 : *c < 0) {
            best = i;
            best_key = std::move(k);
        }
    }
    return (*items)[best];
}

Result<Value> filter_sum(const Value& x, const CallArgs& a) {
    auto items = items_of(x);
    if (!items)
        return items.error();
    const Value* attribute = arg_at(a, 0, "attribute");
    const Value* start = arg_at(a, 1, "start");
    Value acc = start ? *start : Value(int64_t(0));
    for (const auto& it : *items) {
        auto vr = attribute && attribute->is_string() ? attr_path(it, attribute->as_string())
                                                      : Result<Value>(it);
        if (!vr)
            return vr.error();
        const Value& v = *vr;
        if (v.is_undefined())
            return make_error(v.undefined_message());
        if (!acc.is_number() || !v.is_number())
            return make_error("sum filter: only numbers can be summed");
        if (acc.is_float() || v.is_float())
            acc = Value(acc.number_value() + v.number_value());
        else {
            int64_t r;
            if (__builtin_add_overflow(acc.int_value(), v.int_value(), &r))
                return make_error("sum filter: integer overflow");
            acc = Value(r);
        }
    }
    return acc;
}

Result<Value> filter_abs(const Value& x, const CallArgs&) {
    if (x.is_float())
        return Value(std::fabs(x.as_float()));
    if (x.is_int() || x.is_bool()) {
        int64_t v = x.int_value();
        if (v == INT64_MIN)
            return make_error("abs: integer overflow");
        return Value(v < 0 ? -v : v);
    }
    return make_error("bad operand type for abs(): '" + type_name(x) + "'");
}

Result<Value> filter_round(const Value& x, const CallArgs& a) {
    if (!x.is_number())
        return make_error("round filter: value must be a number");
    int64_t precision = 0;
    if (const Value* p = arg_at(a, 0, "precision")) {
        auto pi = to_int_arg(*p, "round precision");
        if (!pi)
            return pi.error();
        precision = std::clamp<int64_t>(*pi, -300, 300);
    }
    const Value* m = arg_at(a, 1, "method");
    std::string method = m && m->is_string() ? m->as_string() : "common";
    if (method == "common" && !x.is_float() && precision >= 0)
        return Value(x.int_value()); // round(int) is int
    double scale = std::pow(10.0, double(precision));
    double v = x.number_value() * scale;
    if (method == "common")
        v = std::nearbyint(v);
    else if (method == "floor")
        v = std::floor(v);
    else if (method == "ceil")
        v = std::ceil(v);
    else
        return make_error("round filter: method must be common, ceil or floor");
    return Value(v / scale);
}

Result<Value> filter_escape(const Value& x, const CallArgs&) {
    return Value(html_escape(to_str(x)));
}

Result<Value> filter_indent(const Value& x, const CallArgs& a) {
    std::string ind = "    ";
    if (const Value* w = arg_at(a, 0, "width")) {
        if (w->is_string())
            ind = w->as_string();
        else {
            auto n = to_int_arg(*w, "indent width");
            if (!n)
                return n.error();
            ind = std::string(size_t(std::clamp<int64_t>(*n, 0, 1000)), ' ');
        }
    }
    bool first = flag(a, 1, "first"), blank = flag(a, 2, "blank");
    std::string s = to_str(x) + "\n";
    std::vector<std::string> lines;
    size_t pos = 0;
    while (pos < s.size()) {
        size_t nl = s.find('\n', pos);
        lines.push_back(s.substr(pos, nl - pos));
        pos = nl + 1;
    }
    // The indent can be the template's own long string: size the result before making it.
    if (!budget_require(uint64_t(s.size()) + uint64_t(lines.size() + 1) * ind.size()))
        return make_error(budget_error_text());
    std::string rv;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (i)
            rv += "\n";
        if (i && (blank || !lines[i].empty()))
            rv += ind;
        rv += lines[i];
    }
    if (first)
        rv = ind + rv;
    return Value(std::move(rv));
}

Result<Value> select_impl(const Value& x, const CallArgs& a, bool by_attr, bool keep) {
    if (!truthy(x))
        return Value::list({}); // Jinja2 yields nothing for a falsy sequence
    auto items = items_of(x);
    if (!items)
        return items.error();
    size_t arg0 = 0;
    std::string attribute;
    if (by_attr) {
        const Value* at = arg_at(a, 0, nullptr);
        if (!at || !at->is_string())
            return make_error("selectattr/rejectattr need an attribute name");
        attribute = at->as_string();
        arg0 = 1;
    }
    std::string test;
    CallArgs test_args;
    if (a.positional.size() > arg0) {
        if (!a.positional[arg0].is_string())
            return make_error("select/reject: the test name must be a string");
        test = a.positional[arg0].as_string();
        test_args.positional.assign(a.positional.begin() + long(arg0) + 1, a.positional.end());
        test_args.kwargs = a.kwargs;
        if (!has_test(test))
            return make_error("unknown test '" + test + "'");
    }
    std::vector<Value> out;
    for (const auto& it : *items) {
        auto vr = by_attr ? attr_path(it, attribute) : Result<Value>(it);
        if (!vr)
            return vr.error();
        const Value& v = *vr;
        bool r;
        if (test.empty()) {
            r = truthy(v);
        } else {
            auto t = apply_test(test, v, test_args);
            if (!t)
                return t.error();
            r = *t;
        }
        if (r == keep)
            out.push_back(it);
    }
    return Value::list(std::move(out));
}

Result<Value> filter_map(const Value& x, const CallArgs& a) {
    if (!truthy(x))
        return Value::list({}); // Jinja2 yields nothing for a falsy sequence
    auto items = items_of(x);
    if (!items)
        return items.error();
    std::vector<Value> out;
    if (const Value* attribute = a.kwarg("attribute")) {
        if (!attribute->is_string())
            return make_error("map: attribute must be a string");
        const Value* dflt = a.kwarg("default");
        for (const auto& it : *items) {
            auto v = attr_path(it, attribute->as_string());
            if (!v)
                return v.error();
            out.push_back(v->is_undefined() && dflt ? *dflt : *v);
        }
        return Value::list(std::move(out));
    }
    if (a.positional.empty() || !a.positional[0].is_string())
        return make_error("map: expected a filter name or attribute=");
    std::string f = a.positional[0].as_string();
    if (!has_filter(f))
        return make_error("unknown filter '" + f + "'");
    CallArgs fa;
    fa.positional.assign(a.positional.begin() + 1, a.positional.end());
    fa.kwargs = a.kwargs;
    for (const auto& it : *items) {
        auto r = apply_filter(f, it, fa);
        if (!r)
            return r.error();
        out.push_back(std::move(*r));
    }
    return Value::list(std::move(out));
}

const std::map<std::string, FilterFn>& filters() {
    static const std::map<std::string, FilterFn> f = {
        {"tojson", filter_tojson},
        {"length", filter_length},
        {"count", filter_length},
        {"default", filter_default},
        {"d", filter_default},
        {"join", filter_join},
        {"int", filter_int},
        {"float", filter_float},
        {"first", filter_first},
        {"last", filter_last},
        {"reverse", filter_reverse},
        {"list", filter_list},
        {"items", filter_items},
        {"dictsort", filter_dictsort},
        {"sort", filter_sort},
        {"unique", filter_unique},
        {"min", [](const Value& x, const CallArgs& a) { return min_max(x, a, false); }},
        {"max", [](const Value& x, const CallArgs& a) { return min_max(x, a, true); }},
        {"sum", filter_sum},
        {"abs", filter_abs},
        {"round", filter_round},
        {"escape", filter_escape},
        {"e", filter_escape},
        {"forceescape", filter_escape},
        {"indent", filter_indent},
        {"map", filter_map},
        {"select",
         [](const Value& x, const CallArgs& a) { return select_impl(x, a, false, true); }},
        {"reject",
         [](const Value& x, const CallArgs& a) { return select_impl(x, a, false, false); }},
        {"selectattr",
         [](const Value& x, const CallArgs& a) { return select_impl(x, a, true, true); }},
        {"rejectattr",
         [](const Value& x, const CallArgs& a) { return select_impl(x, a, true, false); }},
        {"safe",
         [](const Value& x, const CallArgs&) -> Result<Value> {
             return Value(to_str(x));
         }}, // Markup(str(x))
        {"string",
         [](const Value& x, const CallArgs&) -> Result<Value> { return Value(to_str(x)); }},
        {"upper",
         [](const Value& x, const CallArgs&) -> Result<Value> {
             return Value(py_upper(to_str(x)));
         }},
        {"lower",
         [](const Value& x, const CallArgs&) -> Result<Value> {
             return Value(py_lower(to_str(x)));
         }},
        {"capitalize",
         [](const Value& x, const CallArgs&) -> Result<Value> {
             return Value(py_capitalize(to_str(x)));
         }},
        {"title",
         [](const Value& x, const CallArgs&) -> Result<Value> {
             // Jinja2's title: words start after whitespace, '-', and opening brackets.
             std::u32string u = to_u32(to_str(x));
             bool start = true;
             std::string out;
             for (char32_t c : u) {
                 bool sep =
                     is_space(c) || c == U'-' || c == U'(' || c == U'{' || c == U'[' || c == U'<';
                 std::string one = to_utf8(std::u32string(1, c));
                 out += sep ? one : (start ? py_upper(one) : py_lower(one));
                 start = sep;
             }
             return Value(std::move(out));
         }},
        {"trim",
         [](const Value& x, const CallArgs& a) -> Result<Value> {
             const Value* chars = arg_at(a, 0, "chars");
             if (chars && !chars->is_none() && !chars->is_string())
                 return make_error("trim: chars must be a string");
             std::string s = to_str(x);
             return Value(py_strip(s, chars && chars->is_string() ? &chars->as_string() : nullptr,
                                   true, true));
         }},
        {"replace",
         [](const Value& x, const CallArgs& a) -> Result<Value> {
             if (x.is_string())
                 return str_replace(x.as_string(), a);
             return str_replace(to_str(x), a);
         }},
    };
    return f;
}

} // namespace

bool has_filter(const std::string& name) {
    return filters().count(name) > 0;
}

Result<Value> apply_filter(const std::string& name, const Value& input, const CallArgs& args) {
    auto it = filters().find(name);
    if (it == filters().end())
        return make_error("unknown filter '" + name + "'");
    return it->second(input, args);
}

} // namespace llmwb::jinja
