// Value: the dynamic value of the Jinja interpreter, modelled on the Python objects that
// Jinja2 works with when Hugging Face renders a chat template (str, int, float, bool, None,
// list/tuple, dict with insertion order, Undefined, namespace, callables).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/util/result.h"

namespace llmwb::jinja {

struct Value;

// Jinja2's default Undefined: prints as "", is falsy, iterates as empty; most other uses fail
// with `message` (the text Jinja2's UndefinedError carries).
struct Undefined {
    std::string message;
};

struct ListData {
    std::vector<Value> items;
    bool is_tuple = false;
    size_t depth = 1; // container nesting depth, set by Value::list
};

// Ordered like a Python dict (insertion order). Keys are strings (JSON objects and the dict
// literals of real templates); a lookup is linear, fine for the small dicts templates see.
struct DictData {
    std::vector<std::pair<std::string, Value>> items;
    size_t depth = 1; // container nesting depth, set by Value::dict
    const Value* find(std::string_view key) const;
    Value* find(std::string_view key);
    void set(std::string key, Value v);
};

// namespace(): the one mutable object a template can have (`{% set ns.x = 1 %}`).
struct NamespaceData {
    DictData attrs;
};

struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> kwargs;
    const Value* kwarg(std::string_view name) const;
};

struct Callable {
    std::string name;
    std::function<Result<Value>(const CallArgs&)> fn;
};

using ListPtr = std::shared_ptr<const ListData>;
using DictPtr = std::shared_ptr<const DictData>;
using NamespacePtr = std::shared_ptr<NamespaceData>;
using CallablePtr = std::shared_ptr<const Callable>;

struct Value {
    std::variant<Undefined, std::nullptr_t, bool, int64_t, double, std::string, ListPtr, DictPtr,
                 NamespacePtr, CallablePtr>
        v;

    Value() : v(Undefined{}) {}
    Value(std::nullptr_t) : v(nullptr) {}
    Value(bool b) : v(b) {}
    Value(int64_t i) : v(i) {}
    Value(int i) : v(int64_t{i}) {}
    Value(double d) : v(d) {}
    Value(std::string s) : v(std::move(s)) {}
    Value(const char* s) : v(std::string(s)) {}
    Value(Undefined u) : v(std::move(u)) {}
    Value(ListPtr l) : v(std::move(l)) {}
    Value(DictPtr d) : v(std::move(d)) {}
    Value(NamespacePtr n) : v(std::move(n)) {}
    Value(CallablePtr c) : v(std::move(c)) {}

    static Value undefined(std::string message) { return Value(Undefined{std::move(message)}); }
    static Value list(std::vector<Value> items, bool tuple = false);
    static Value dict(DictData d);

    bool is_undefined() const { return v.index() == 0; }
    bool is_none() const { return v.index() == 1; }
    bool is_bool() const { return v.index() == 2; }
    bool is_int() const { return v.index() == 3; }
    bool is_float() const { return v.index() == 4; }
    bool is_number() const { return is_int() || is_float() || is_bool(); }
    bool is_string() const { return v.index() == 5; }
    bool is_list() const { return v.index() == 6; }
    bool is_dict() const { return v.index() == 7; }
    bool is_namespace() const { return v.index() == 8; }
    bool is_callable() const { return v.index() == 9; }

    bool as_bool() const { return std::get<bool>(v); }
    int64_t as_int() const { return std::get<int64_t>(v); }
    double as_float() const { return std::get<double>(v); }
    const std::string& as_string() const { return std::get<std::string>(v); }
    const ListData& as_list() const { return *std::get<ListPtr>(v); }
    const DictData& as_dict() const { return *std::get<DictPtr>(v); }
    NamespaceData& as_namespace() const { return *std::get<NamespacePtr>(v); }
    const Callable& as_callable() const { return *std::get<CallablePtr>(v); }
    const std::string& undefined_message() const { return std::get<Undefined>(v).message; }
    // int or bool as a Python int; precondition: is_int() || is_bool().
    int64_t int_value() const { return is_bool() ? (as_bool() ? 1 : 0) : as_int(); }
    // Any number as double; precondition: is_number().
    double number_value() const { return is_float() ? as_float() : double(int_value()); }
};

// Nesting depth of lists/dicts (0 for scalars). Templates can build nested values in loops; the
// evaluator bounds this so that printing, comparing and freeing values cannot exhaust the stack.
size_t nesting_depth(const Value& v);

// Bytes a copy of `v` makes (a Value, plus a string's text; lists and dicts are shared).
size_t shallow_bytes(const Value& v);

// Python truthiness.
bool truthy(const Value& v);
// str(v) as Jinja2 prints it in {{ }} (Undefined -> "").
std::string to_str(const Value& v);
// repr(v) as Python writes it (inside lists/dicts).
std::string to_repr(const Value& v);
// Python float repr ("1.0", "0.1", "1e+16", "inf", "nan").
std::string float_repr(double d);
// The name Python gives the type ("str", "int", "dict", "NoneType", ...).
std::string type_name(const Value& v);
// Jinja2's object_type_repr, used in UndefinedError texts ("dict object", "None").
std::string object_type_repr(const Value& v);

// Python ==.
bool equals(const Value& a, const Value& b);
// Python <; errors for unorderable types. Returns -1, 0, 1.
Result<int> compare(const Value& a, const Value& b);

// JSON <-> Value. Strings stay UTF-8; integers that fit in int64 become ints.
Value from_json(const nlohmann::ordered_json& j);
Result<nlohmann::ordered_json> to_json(const Value& v);

} // namespace llmwb::jinja
