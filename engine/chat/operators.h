// Python semantics of Jinja's binary and unary operators (+ - * / // % ** ~, unary - and +).
#pragma once

#include <string>

#include "engine/chat/value.h"

namespace llmwb::jinja {

// op is one of "+", "-", "*", "/", "//", "%", "**", "~". `max_bytes` caps string/list growth.
Result<Value> binary_op(const std::string& op, const Value& a, const Value& b, size_t max_bytes);
// op is "-" or "+".
Result<Value> unary_op(const std::string& op, const Value& a);

} // namespace llmwb::jinja
