// Jinja2 tests (`x is defined`, `x is string`, `x is equalto 3`, ...).
#include <map>

#include "engine/chat/builtins.h"
#include "engine/chat/operators.h"
#include "engine/chat/unicode_text.h"

namespace llmwb::jinja {

namespace {

using TestFn = Result<bool> (*)(const Value&, const CallArgs&);

Result<const Value*> need_arg(const CallArgs& a, const char* test) {
    const Value* v = arg_at(a, 0, nullptr);
    if (!v)
        return make_error(std::string("test '") + test + "' needs an argument");
    return v;
}

Result<bool> cmp_test(const Value& x, const CallArgs& a, const char* name, bool (*pred)(int)) {
    auto o = need_arg(a, name);
    if (!o)
        return o.error();
    if (x.is_undefined() || (*o)->is_undefined())
        return make_error(std::string("'") + name + "' comparison with an undefined value");
    auto c = compare(x, **o);
    if (!c)
        return c.error();
    return pred(*c);
}

// Python `x % n == want` (odd, even, divisibleby work on floats too).
Result<bool> mod_equals(const Value& x, const Value& n, int64_t want) {
    auto r = binary_op("%", x, n);
    if (!r)
        return r.error();
    return equals(*r, Value(want));
}

const std::map<std::string, TestFn>& tests() {
    static const std::map<std::string, TestFn> t = {
        {"defined",
         [](const Value& x, const CallArgs&) -> Result<bool> { return !x.is_undefined(); }},
        {"undefined",
         [](const Value& x, const CallArgs&) -> Result<bool> { return x.is_undefined(); }},
        {"none", [](const Value& x, const CallArgs&) -> Result<bool> { return x.is_none(); }},
        {"boolean", [](const Value& x, const CallArgs&) -> Result<bool> { return x.is_bool(); }},
        {"true",
         [](const Value& x, const CallArgs&) -> Result<bool> {
             return x.is_bool() && x.as_bool();
         }},
        {"false",
         [](const Value& x, const CallArgs&) -> Result<bool> {
             return x.is_bool() && !x.as_bool();
         }},
        {"integer", [](const Value& x, const CallArgs&) -> Result<bool> { return x.is_int(); }},
        {"float", [](const Value& x, const CallArgs&) -> Result<bool> { return x.is_float(); }},
        {"number", [](const Value& x, const CallArgs&) -> Result<bool> { return x.is_number(); }},
        {"string", [](const Value& x, const CallArgs&) -> Result<bool> { return x.is_string(); }},
        {"mapping", [](const Value& x, const CallArgs&) -> Result<bool> { return x.is_dict(); }},
        {"sequence",
         [](const Value& x, const CallArgs&) -> Result<bool> {
             return x.is_string() || x.is_list() || x.is_dict() || x.is_undefined();
         }},
        {"iterable",
         [](const Value& x, const CallArgs&) -> Result<bool> {
             return x.is_string() || x.is_list() || x.is_dict() || x.is_undefined();
         }},
        {"callable",
         [](const Value& x, const CallArgs&) -> Result<bool> { return x.is_callable(); }},
        {"escaped", [](const Value&, const CallArgs&) -> Result<bool> { return false; }},
        {"odd",
         [](const Value& x, const CallArgs&) -> Result<bool> {
             return mod_equals(x, Value(int64_t(2)), 1);
         }},
        {"even",
         [](const Value& x, const CallArgs&) -> Result<bool> {
             return mod_equals(x, Value(int64_t(2)), 0);
         }},
        {"divisibleby",
         [](const Value& x, const CallArgs& a) -> Result<bool> {
             auto o = need_arg(a, "divisibleby");
             if (!o)
                 return o.error();
             return mod_equals(x, **o, 0);
         }},
        {"lower",
         [](const Value& x, const CallArgs&) -> Result<bool> { return py_islower(to_str(x)); }},
        {"upper",
         [](const Value& x, const CallArgs&) -> Result<bool> { return py_isupper(to_str(x)); }},
        {"sameas",
         [](const Value& x, const CallArgs& a) -> Result<bool> {
             auto o = need_arg(a, "sameas");
             if (!o)
                 return o.error();
             const Value& y = **o;
             if (x.v.index() != y.v.index())
                 return false;
             if (x.is_none() || x.is_undefined())
                 return true;
             if (x.is_bool())
                 return x.as_bool() == y.as_bool();
             if (x.is_list())
                 return std::get<ListPtr>(x.v) == std::get<ListPtr>(y.v);
             if (x.is_dict())
                 return std::get<DictPtr>(x.v) == std::get<DictPtr>(y.v);
             return equals(x, y);
         }},
        {"in",
         [](const Value& x, const CallArgs& a) -> Result<bool> {
             auto o = need_arg(a, "in");
             if (!o)
                 return o.error();
             return contains(**o, x);
         }},
        {"eq",
         [](const Value& x, const CallArgs& a) -> Result<bool> {
             auto o = need_arg(a, "eq");
             if (!o)
                 return o.error();
             return equals(x, **o);
         }},
        {"ne",
         [](const Value& x, const CallArgs& a) -> Result<bool> {
             auto o = need_arg(a, "ne");
             if (!o)
                 return o.error();
             return !equals(x, **o);
         }},
        {"lt", [](const Value& x,
                  const CallArgs& a) { return cmp_test(x, a, "lt", [](int c) { return c < 0; }); }},
        {"le",
         [](const Value& x, const CallArgs& a) {
             return cmp_test(x, a, "le", [](int c) { return c <= 0; });
         }},
        {"gt", [](const Value& x,
                  const CallArgs& a) { return cmp_test(x, a, "gt", [](int c) { return c > 0; }); }},
        {"ge",
         [](const Value& x, const CallArgs& a) {
             return cmp_test(x, a, "ge", [](int c) { return c >= 0; });
         }},
    };
    return t;
}

std::string canonical_test(const std::string& n) {
    if (n == "equalto" || n == "==")
        return "eq";
    if (n == "!=")
        return "ne";
    if (n == "lessthan" || n == "<")
        return "lt";
    if (n == "<=")
        return "le";
    if (n == "greaterthan" || n == ">")
        return "gt";
    if (n == ">=")
        return "ge";
    return n;
}

} // namespace

bool has_test(const std::string& name) {
    return tests().count(canonical_test(name)) || name == "filter" || name == "test";
}

Result<bool> apply_test(const std::string& name, const Value& input, const CallArgs& args) {
    if (name == "filter" || name == "test") {
        if (!input.is_string())
            return false;
        return name == "filter" ? has_filter(input.as_string()) : has_test(input.as_string());
    }
    auto it = tests().find(canonical_test(name));
    if (it == tests().end())
        return make_error("unknown test '" + name + "'");
    return it->second(input, args);
}

} // namespace llmwb::jinja
