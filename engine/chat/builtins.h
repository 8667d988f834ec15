// Built-in filters, tests, methods of str/dict/list, and global functions of the interpreter:
// the subset of Jinja2's (and Python's) that real chat templates use. Anything else is an error
// naming the unknown filter/test/method.
#pragma once

#include <ctime>
#include <optional>
#include <string>

#include "engine/chat/value.h"

namespace llmwb::jinja {

// Arguments of a filter or test are `input` plus args.
Result<Value> apply_filter(const std::string& name, const Value& input, const CallArgs& args);
Result<bool> apply_test(const std::string& name, const Value& input, const CallArgs& args);
bool has_filter(const std::string& name);
bool has_test(const std::string& name);

// obj.name for str/dict/list objects: a bound method, or nullopt when Python has no such
// attribute. Mutating methods (list.append, dict.update, ...) are refused as Jinja2's
// ImmutableSandboxedEnvironment refuses them (returned as an Undefined with that message).
std::optional<Value> get_method(const Value& obj, const std::string& name);

// Python str.replace(old, new[, count]) on `s`; refuses a result past the render budget before
// making it (the `replace` filter shares it).
Result<Value> str_replace(const std::string& s, const CallArgs& args);

// Global functions: range, dict, namespace, raise_exception, strftime_now.
struct GlobalsOptions {
    std::optional<std::tm> now; // fixed clock for strftime_now (tests); nullopt = local time
};
void add_globals(DictData& globals, const GlobalsOptions& options);

// Python `in` and subscripting helpers shared with the evaluator.
Result<bool> contains(const Value& container, const Value& item);
// Python obj[index] for list/tuple/str/dict; nullopt when missing (-> Undefined).
std::optional<Value> get_item(const Value& obj, const Value& index);
// Python obj[start:stop:step]; absent parts are Undefined/None.
Result<Value> get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step);
// Items Python iterates over: list/tuple items, dict keys, string characters; Undefined -> none.
Result<std::vector<Value>> iterate(const Value& v);

// Argument helpers for built-ins.
const Value* arg_at(const CallArgs& a, size_t pos, const char* name);
Result<int64_t> to_int_arg(const Value& v, const char* what);

} // namespace llmwb::jinja
