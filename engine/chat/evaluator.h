// Evaluator: renders a parsed Template with a context, with Jinja2's scoping (a for-loop body
// is a new scope per iteration, `if` is not a scope, macros close over their defining scope,
// namespace() objects are shared and mutable) and Python semantics for values and operators.
#pragma once

#include <string>

#include "engine/chat/ast.h"
#include "engine/chat/builtins.h"
#include "engine/chat/value.h"

namespace llmwb::jinja {

struct RenderLimits {
    size_t max_output_bytes = size_t(64) << 20; // untrusted templates must not exhaust memory
    int max_call_depth = 64;                    // macro recursion
    int64_t max_loop_iterations = 1'000'000;    // real templates loop over messages
};

// `context` must be a dict (its keys become template variables).
Result<std::string> render_template(const Template& tpl, const Value& context,
                                    const GlobalsOptions& globals = {},
                                    const RenderLimits& limits = {});

} // namespace llmwb::jinja
