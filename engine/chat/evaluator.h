// Evaluator: renders a parsed Template with a context, with Jinja2's scoping (a for-loop body
// is a new scope per iteration, `if` is not a scope, macros close over their defining scope,
// namespace() objects are shared and mutable) and Python semantics for values and operators.
#pragma once

#include <string>

#include "engine/chat/ast.h"
#include "engine/chat/builtins.h"
#include "engine/chat/render_budget.h"
#include "engine/chat/value.h"

namespace llmwb::jinja {

// `context` must be a dict (its keys become template variables). Every limit in `limits` is an
// error naming it; nothing here keeps state between calls.
Result<std::string> render_template(const Template& tpl, const Value& context,
                                    const GlobalsOptions& globals = {},
                                    const RenderLimits& limits = {});

} // namespace llmwb::jinja
