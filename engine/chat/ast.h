// The syntax tree of a parsed template: expressions and statements. Plain structs with a kind
// tag; the parser builds them, the evaluator walks them.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/chat/value.h"

namespace llmwb::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
    Literal,   // value
    Name,      // name
    List,      // items
    Tuple,     // items
    Dict,      // items as key, value pairs (items[2k], items[2k+1])
    GetAttr,   // a.name
    GetItem,   // a[b]
    Slice,     // a[b:c:d]; absent parts are null
    Call,      // a(items..., kwargs...)
    Filter,    // a | name(items..., kwargs...)
    Test,      // a is [not] name(items..., kwargs...)
    Unary,     // op a   ("not", "-", "+")
    Binary,    // a op b ("+", "-", "*", "/", "//", "%", "**", "~", "and", "or")
    Compare,   // a op1 b op2 c ... (ops, items = operands after the first)
    Condition, // b if a else c   (a = condition, b = then, c = else or null)
};

// Trees are as deep as the template makes them (300,000 chained `+` parse iteratively into a
// left-deep chain): the destructor frees them with an explicit stack, never by recursion.
struct Expr {
    Expr() = default;
    ~Expr();
    Expr(const Expr&) = delete;
    Expr& operator=(const Expr&) = delete;

    ExprKind kind;
    int line = 0;
    Value value;                // Literal
    std::string name;           // Name, GetAttr, Filter, Test; op for Unary/Binary
    ExprPtr a, b, c, d;         // operands
    std::vector<ExprPtr> items; // List/Tuple/Dict/Call/Filter/Test args, Compare operands
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    std::vector<std::string> ops; // Compare operators
    bool negated = false;         // Test
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class StmtKind {
    Data,        // text
    Print,       // {{ expr }}
    If,          // conds[i] -> bodies[i]; else_body
    For,         // targets in iter [if cond]: body; else_body
    Set,         // target(s) = expr
    SetBlock,    // {% set target %}body{% endset %} (optional filter expr applied to the body)
    Macro,       // {% macro name(params) %}body{% endmacro %}
    FilterBlock, // {% filter f %}body{% endfilter %}
    Break,
    Continue,
    Generation, // {% generation %}body{% endgeneration %} (HF's assistant mask marker)
};

struct MacroParam {
    std::string name;
    ExprPtr default_value; // may be null
};

struct Stmt {
    StmtKind kind;
    int line = 0;
    std::string text;                 // Data
    ExprPtr expr;                     // Print, Set value, For iter, FilterBlock/SetBlock filter
    ExprPtr cond;                     // For filter condition
    std::vector<ExprPtr> conds;       // If
    std::vector<Body> bodies;         // If branches
    Body body, else_body;             // For, SetBlock, Macro, FilterBlock, Generation
    std::vector<std::string> targets; // For / Set names (several for tuple unpacking)
    bool tuple_target = false;        // `for a, b in` / `set a, b =`
    std::string ns_attr;              // Set on a namespace attribute: targets[0].ns_attr
    std::string name;                 // Macro name
    std::vector<MacroParam> params;   // Macro
};

struct Template {
    Body body;
};

// Height of an expression tree (a leaf is 1), computed without recursion.
size_t expr_height(const Expr& e);

} // namespace llmwb::jinja
