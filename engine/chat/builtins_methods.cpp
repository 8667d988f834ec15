// Methods of str / dict / list values (what `x.startswith(...)`, `d.items()` call) and the
// global functions (range, dict, namespace, raise_exception, strftime_now).
#include <set>

#include "engine/chat/builtins.h"
#include "engine/chat/render_budget.h"
#include "engine/chat/unicode_text.h"

namespace llmwb::jinja {

namespace {

constexpr int64_t kMaxRange = 100000; // Jinja2's sandbox MAX_RANGE

Value bound(std::string name, std::function<Result<Value>(const CallArgs&)> fn) {
    return Value(CallablePtr(std::make_shared<Callable>(Callable{std::move(name), std::move(fn)})));
}

Result<std::string> str_arg(const CallArgs& a, size_t pos, const char* method,
                            const char* name = nullptr) {
    const Value* v = arg_at(a, pos, name);
    if (!v)
        return make_error(std::string(method) + "() missing required argument");
    if (!v->is_string())
        return make_error(std::string(method) + "() argument must be str, not " + type_name(*v));
    return v->as_string();
}

// Optional str-or-None argument (strip chars, split sep).
Result<std::optional<std::string>> opt_str_arg(const CallArgs& a, size_t pos, const char* method,
                                               const char* name) {
    const Value* v = arg_at(a, pos, name);
    if (!v || v->is_none())
        return std::optional<std::string>();
    if (!v->is_string())
        return make_error(std::string(method) + "() argument must be str or None, not " +
                          type_name(*v));
    return std::optional<std::string>(v->as_string());
}

Result<Value> starts_or_ends(const std::string& s, const CallArgs& a, bool starts) {
    const char* m = starts ? "startswith" : "endswith";
    const Value* p = arg_at(a, 0, nullptr);
    if (!p)
        return make_error(std::string(m) + "() takes at least 1 argument (0 given)");
    std::vector<std::string> options;
    if (p->is_string())
        options.push_back(p->as_string());
    else if (p->is_list() && p->as_list().is_tuple) {
        for (const auto& e : p->as_list().items) {
            if (!e.is_string())
                return make_error(std::string("tuple for ") + m + " must only contain str");
            options.push_back(e.as_string());
        }
    } else {
        return make_error(std::string(m) + " first arg must be str or a tuple of str, not " +
                          type_name(*p));
    }
    for (const auto& o : options) {
        if (o.size() > s.size())
            continue;
        if (starts ? s.compare(0, o.size(), o) == 0
                   : s.compare(s.size() - o.size(), o.size(), o) == 0)
            return Value(true);
    }
    return Value(false);
}

// Size of replace_all's result, computed without making it (the budget refuses big ones first).
// Counting stops once the size passes `limit`: the caller only needs to know that it does.
uint64_t replaced_size(const std::string& s, const std::string& from, const std::string& to,
                       int64_t count, uint64_t limit) {
    if (!from.empty() && to.size() <= from.size())
        return s.size(); // never grows
    const uint64_t growth = from.empty() ? to.size() : to.size() - from.size();
    uint64_t size = s.size();
    int64_t n = 0;
    auto add = [&]() {
        ++n;
        size += growth;
        return size <= limit && (count < 0 || n < count);
    };
    if (from.empty()) {
        uint64_t n = 1; // before every code point and at the end
        for (unsigned char c : s)
            n += (c & 0xC0) != 0x80;
        if (count >= 0)
            n = std::min(n, uint64_t(count));
        uint64_t extra = 0;
        if (__builtin_mul_overflow(n, growth, &extra) || __builtin_add_overflow(size, extra, &size))
            return UINT64_MAX;
        return size;
    }
    if (count == 0)
        return size;
    for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos)) {
        if (!add())
            break;
        pos += from.size();
    }
    return size;
}

// At most how many pieces py_split makes (whitespace runs or separators, plus one).
size_t split_count(const std::string& s, const std::string* sep) {
    size_t n = 1;
    if (sep) {
        for (size_t pos = s.find(*sep); pos != std::string::npos; pos = s.find(*sep, pos)) {
            ++n;
            pos += sep->size();
        }
        return n;
    }
    size_t i = 0;
    bool in_space = true;
    while (i < s.size()) {
        bool space = is_space(utf8_next(s, i));
        n += in_space && !space;
        in_space = space;
    }
    return n;
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to,
                        int64_t count) {
    std::string out;
    if (from.empty()) {
        // Python inserts `to` before every character and at the end.
        size_t i = 0;
        int64_t n = 0;
        while (i < s.size()) {
            if (count < 0 || n < count) {
                out += to;
                ++n;
            }
            size_t b = i;
            utf8_next(s, i);
            out.append(s, b, i - b);
        }
        if (count < 0 || n < count)
            out += to;
        return out;
    }
    size_t pos = 0;
    int64_t n = 0;
    for (;;) {
        size_t f = (count >= 0 && n >= count) ? std::string::npos : s.find(from, pos);
        if (f == std::string::npos)
            break;
        out.append(s, pos, f - pos);
        out += to;
        pos = f + from.size();
        ++n;
    }
    out.append(s, pos);
    return out;
}

std::optional<Value> string_method(const std::string& s, const std::string& name) {
    if (name == "startswith" || name == "endswith") {
        bool st = name == "startswith";
        return bound(name, [s, st](const CallArgs& a) { return starts_or_ends(s, a, st); });
    }
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
        bool l = name != "rstrip", r = name != "lstrip";
        return bound(name, [s, l, r, name](const CallArgs& a) -> Result<Value> {
            auto chars = opt_str_arg(a, 0, name.c_str(), "chars");
            if (!chars)
                return chars.error();
            return Value(py_strip(s, *chars ? &**chars : nullptr, l, r));
        });
    }
    if (name == "split" || name == "rsplit") {
        bool right = name == "rsplit";
        return bound(name, [s, right, name](const CallArgs& a) -> Result<Value> {
            auto sep = opt_str_arg(a, 0, name.c_str(), "sep");
            if (!sep)
                return sep.error();
            if (*sep && (*sep)->empty())
                return make_error("empty separator");
            int64_t maxsplit = -1;
            if (const Value* m = arg_at(a, 1, "maxsplit")) {
                auto mi = to_int_arg(*m, "maxsplit");
                if (!mi)
                    return mi.error();
                maxsplit = *mi;
            }
            // Many short pieces take far more memory than the text: count them first.
            if (!budget_require(uint64_t(s.size()) +
                                uint64_t(split_count(s, *sep ? &**sep : nullptr)) *
                                    (sizeof(Value) + sizeof(std::string))))
                return make_error(budget_error_text());
            std::vector<Value> out;
            for (auto& p : py_split(s, *sep ? &**sep : nullptr, long(maxsplit), right))
                out.emplace_back(std::move(p));
            return Value::list(std::move(out));
        });
    }
    if (name == "upper")
        return bound(name, [s](const CallArgs&) -> Result<Value> { return Value(py_upper(s)); });
    if (name == "lower")
        return bound(name, [s](const CallArgs&) -> Result<Value> { return Value(py_lower(s)); });
    if (name == "title")
        return bound(name, [s](const CallArgs&) -> Result<Value> { return Value(py_title(s)); });
    if (name == "capitalize")
        return bound(name,
                     [s](const CallArgs&) -> Result<Value> { return Value(py_capitalize(s)); });
    if (name == "replace")
        return bound(name, [s](const CallArgs& a) { return str_replace(s, a); });
    if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
        return bound(name, [s, name](const CallArgs& a) -> Result<Value> {
            auto sub = str_arg(a, 0, name.c_str());
            if (!sub)
                return sub.error();
            size_t f = name[0] == 'r' ? s.rfind(*sub) : s.find(*sub);
            if (f == std::string::npos) {
                if (name.find("index") != std::string::npos)
                    return make_error("substring not found");
                return Value(int64_t(-1));
            }
            return Value(int64_t(utf8_length(std::string_view(s).substr(0, f))));
        });
    }
    if (name == "count") {
        return bound(name, [s](const CallArgs& a) -> Result<Value> {
            auto sub = str_arg(a, 0, "count");
            if (!sub)
                return sub.error();
            if (sub->empty())
                return Value(int64_t(utf8_length(s) + 1));
            int64_t n = 0;
            for (size_t p = s.find(*sub); p != std::string::npos; p = s.find(*sub, p + sub->size()))
                ++n;
            return Value(n);
        });
    }
    if (name == "join") {
        return bound(name, [s](const CallArgs& a) -> Result<Value> {
            const Value* it = arg_at(a, 0, nullptr);
            if (!it)
                return make_error("join() takes exactly one argument (0 given)");
            auto items = iterate(*it);
            if (!items)
                return items.error();
            std::string out;
            for (size_t i = 0; i < items->size(); ++i) {
                if (!(*items)[i].is_string())
                    return make_error("sequence item " + std::to_string(i) +
                                      ": expected str instance, " + type_name((*items)[i]) +
                                      " found");
                if (!budget_require(uint64_t(out.size()) + s.size() +
                                    (*items)[i].as_string().size()))
                    return make_error(budget_error_text());
                if (i)
                    out += s;
                out += (*items)[i].as_string();
            }
            return Value(std::move(out));
        });
    }
    if (name == "isdigit" || name == "isalpha" || name == "isalnum" || name == "isspace" ||
        name == "islower" || name == "isupper") {
        return bound(name, [s, name](const CallArgs&) -> Result<Value> {
            std::u32string u = to_u32(s);
            if (u.empty())
                return Value(false);
            if (name == "islower")
                return Value(py_islower(s));
            if (name == "isupper")
                return Value(py_isupper(s));
            for (char32_t c : u) {
                bool digit = c >= '0' && c <= '9';
                bool alpha = is_upper_cp(c) || is_lower_cp(c) || c >= 0x100;
                bool ok = name == "isdigit"   ? digit
                          : name == "isalpha" ? alpha
                          : name == "isalnum" ? (digit || alpha)
                                              : is_space(c);
                if (!ok)
                    return Value(false);
            }
            return Value(true);
        });
    }
    return std::nullopt;
}

Value unsafe(const Value& obj, const std::string& name) {
    return Value::undefined("access to attribute '" + name + "' of '" + type_name(obj) +
                            "' object is unsafe.");
}

std::optional<Value> dict_method(const Value& obj, const std::string& name) {
    static const std::set<std::string> mutating = {"update", "pop", "popitem", "setdefault",
                                                   "clear"};
    if (mutating.count(name))
        return unsafe(obj, name);
    if (name == "items" || name == "keys" || name == "values") {
        return bound(name, [obj, name](const CallArgs&) -> Result<Value> {
            std::vector<Value> out;
            for (const auto& [k, v] : obj.as_dict().items) {
                if (name == "items")
                    out.push_back(Value::list({Value(k), v}, true));
                else if (name == "keys")
                    out.emplace_back(k);
                else
                    out.push_back(v);
            }
            return Value::list(std::move(out));
        });
    }
    if (name == "get") {
        return bound(name, [obj](const CallArgs& a) -> Result<Value> {
            const Value* k = arg_at(a, 0, nullptr);
            if (!k)
                return make_error("get expected at least 1 argument, got 0");
            const Value* dflt = arg_at(a, 1, nullptr);
            if (k->is_string())
                if (const Value* v = obj.as_dict().find(k->as_string()))
                    return *v;
            return dflt ? *dflt : Value(nullptr);
        });
    }
    if (name == "copy")
        return bound(
            name, [obj](const CallArgs&) -> Result<Value> { return Value::dict(obj.as_dict()); });
    return std::nullopt;
}

std::optional<Value> list_method(const Value& obj, const std::string& name) {
    static const std::set<std::string> mutating = {"append", "extend",  "insert", "pop",
                                                   "remove", "reverse", "sort",   "clear"};
    if (mutating.count(name) && !obj.as_list().is_tuple)
        return unsafe(obj, name);
    if (name == "count" || name == "index") {
        return bound(name, [obj, name](const CallArgs& a) -> Result<Value> {
            const Value* x = arg_at(a, 0, nullptr);
            if (!x)
                return make_error(name + "() takes exactly one argument (0 given)");
            int64_t n = 0;
            const auto& items = obj.as_list().items;
            for (size_t i = 0; i < items.size(); ++i) {
                if (!equals(items[i], *x))
                    continue;
                if (name == "index")
                    return Value(int64_t(i));
                ++n;
            }
            if (name == "index")
                return make_error(to_repr(*x) + " is not in list");
            return Value(n);
        });
    }
    return std::nullopt;
}

} // namespace

Result<Value> str_replace(const std::string& s, const CallArgs& a) {
    auto from = str_arg(a, 0, "replace");
    if (!from)
        return from.error();
    auto to = str_arg(a, 1, "replace");
    if (!to)
        return to.error();
    int64_t count = -1;
    if (const Value* c = arg_at(a, 2, "count")) {
        auto ci = to_int_arg(*c, "count");
        if (!ci)
            return ci.error();
        count = *ci;
    }
    RenderBudget* budget = active_budget();
    const uint64_t limit = budget ? budget->remaining_bytes() : UINT64_MAX;
    if (!budget_require(replaced_size(s, *from, *to, count, limit)))
        return make_error(budget_error_text());
    return Value(replace_all(s, *from, *to, count));
}

std::optional<Value> get_method(const Value& obj, const std::string& name) {
    if (obj.is_string())
        return string_method(obj.as_string(), name);
    if (obj.is_dict())
        return dict_method(obj, name);
    if (obj.is_list())
        return list_method(obj, name);
    return std::nullopt;
}

void add_globals(DictData& g, const GlobalsOptions& options) {
    g.set("range", bound("range", [](const CallArgs& a) -> Result<Value> {
              if (a.positional.empty() || a.positional.size() > 3)
                  return make_error("range expected 1 to 3 arguments, got " +
                                    std::to_string(a.positional.size()));
              int64_t v[3] = {0, 0, 1};
              for (size_t i = 0; i < a.positional.size(); ++i) {
                  auto x = to_int_arg(a.positional[i], "range() argument");
                  if (!x)
                      return x.error();
                  v[a.positional.size() == 1 ? 1 : i] = *x;
              }
              if (v[2] == 0)
                  return make_error("range() arg 3 must not be zero");
              int64_t n = 0;
              if (v[2] > 0 && v[1] > v[0])
                  n = (v[1] - v[0] + v[2] - 1) / v[2];
              if (v[2] < 0 && v[1] < v[0])
                  n = (v[0] - v[1] - v[2] - 1) / -v[2];
              if (n > kMaxRange)
                  return make_error(
                      "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
              std::vector<Value> out;
              out.reserve(size_t(n));
              for (int64_t i = 0; i < n; ++i)
                  out.emplace_back(v[0] + i * v[2]);
              return Value::list(std::move(out));
          }));
    g.set("dict", bound("dict", [](const CallArgs& a) -> Result<Value> {
              DictData d;
              for (const auto& p : a.positional) {
                  if (!p.is_dict())
                      return make_error("dict() positional argument must be a mapping");
                  for (const auto& [k, v] : p.as_dict().items)
                      d.set(k, v);
              }
              for (const auto& [k, v] : a.kwargs)
                  d.set(k, v);
              return Value::dict(std::move(d));
          }));
    g.set("namespace", bound("namespace", [](const CallArgs& a) -> Result<Value> {
              auto ns = std::make_shared<NamespaceData>();
              for (const auto& p : a.positional) {
                  if (!p.is_dict())
                      return make_error("namespace() positional argument must be a mapping");
                  for (const auto& [k, v] : p.as_dict().items)
                      ns->attrs.set(k, v);
              }
              for (const auto& [k, v] : a.kwargs)
                  ns->attrs.set(k, v);
              return Value(NamespacePtr(std::move(ns)));
          }));
    g.set("raise_exception", bound("raise_exception", [](const CallArgs& a) -> Result<Value> {
              const Value* m = arg_at(a, 0, "message");
              return make_error(m ? to_str(*m) : std::string());
          }));
    std::optional<std::tm> now = options.now;
    g.set("strftime_now", bound("strftime_now", [now](const CallArgs& a) -> Result<Value> {
              const Value* f = arg_at(a, 0, "format");
              if (!f || !f->is_string())
                  return make_error("strftime_now() needs a format string");
              std::tm tm{};
              if (now) {
                  tm = *now;
              } else {
                  std::time_t t = std::time(nullptr);
                  localtime_r(&t, &tm);
              }
              if (f->as_string().empty())
                  return Value(std::string());
              std::string buf(256 + f->as_string().size() * 8, '\0');
              size_t n = std::strftime(buf.data(), buf.size(), f->as_string().c_str(), &tm);
              buf.resize(n);
              return Value(std::move(buf));
          }));
}

} // namespace llmwb::jinja
