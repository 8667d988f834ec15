// Python semantics of Jinja's binary and unary operators (+ - * / // % ** ~, unary - and +).
#pragma once

#include <string>

#include "engine/chat/value.h"

namespace llmwb::jinja {

// op is one of "+", "-", "*", "/", "//", "%", "**", "~". Strings and lists that grow are checked
// against the active render budget (render_budget.h) before they are made.
Result<Value> binary_op(const std::string& op, const Value& a, const Value& b);
// op is "-" or "+".
Result<Value> unary_op(const std::string& op, const Value& a);

} // namespace llmwb::jinja
