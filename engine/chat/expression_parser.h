// Expression parsing (Jinja2's grammar and precedence: condexpr > or > and > not > compare >
// + - > ~ > * / // % > ** > unary > primary/postfix/filters/tests) over a token stream; the
// statement parser (parser.cpp) builds on it.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "engine/chat/ast.h"
#include "engine/chat/lexer.h"
#include "engine/util/result.h"

namespace llmwb::jinja {

class ExpressionParser {
  public:
    explicit ExpressionParser(std::vector<Token> t) : toks_(std::move(t)) {}

  protected:
    // Nesting limit of the recursive descent (expressions and blocks: untrusted input).
    static constexpr int kMaxDepth = 200;
    // Height limit of one expression tree: chains (`a + b + ...`, `x | f | g ...`) are parsed in
    // loops, so they are counted apart from the recursion.
    static constexpr size_t kMaxExprHeight = 256;

    const Token& cur() const { return toks_[i_]; }
    const Token& peek(size_t n = 1) const { return toks_[std::min(i_ + n, toks_.size() - 1)]; }
    void next() {
        if (i_ + 1 < toks_.size())
            ++i_;
    }
    bool is_op(const char* op) const {
        return cur().type == TokenType::Operator && cur().value == op;
    }
    bool is_name(const char* n) const { return cur().type == TokenType::Name && cur().value == n; }

    static std::string describe(const Token& t) {
        switch (t.type) {
        case TokenType::Name:
        case TokenType::Operator:
        case TokenType::Integer:
        case TokenType::Float:
            return "'" + t.value + "'";
        case TokenType::String:
            return "string literal";
        default:
            return token_type_name(t.type);
        }
    }

    Error fail(const std::string& what, int line = 0) const {
        return make_error("chat template syntax error at line " +
                          std::to_string(line ? line : cur().line) + ": " + what);
    }

    Status expect_op(const char* op) {
        if (!is_op(op))
            return fail(std::string("expected '") + op + "', got " + describe(cur()));
        next();
        return ok_status();
    }
    Status expect_type(TokenType t) {
        if (cur().type != t)
            return fail(std::string("expected ") + token_type_name(t) + ", got " + describe(cur()));
        next();
        return ok_status();
    }
    Result<std::string> expect_name() {
        if (cur().type != TokenType::Name)
            return fail("expected a name, got " + describe(cur()));
        std::string n = cur().value;
        next();
        return n;
    }

    static ExprPtr make(ExprKind k, int line);
    bool at_tuple_end() const;
    Result<ExprPtr> parse_tuple(bool with_condexpr, bool allow_empty_paren);
    Result<ExprPtr> parse_expression(bool with_condexpr);
    Result<ExprPtr> parse_condexpr();
    Result<ExprPtr> binary_chain(Result<ExprPtr> (ExpressionParser::*sub)(),
                                 std::initializer_list<const char*> ops, bool names);
    Result<ExprPtr> parse_or();
    Result<ExprPtr> parse_and();
    Result<ExprPtr> parse_not();
    Result<ExprPtr> parse_compare();
    Result<ExprPtr> parse_math1();
    Result<ExprPtr> parse_concat();
    Result<ExprPtr> parse_math2();
    Result<ExprPtr> parse_pow();
    Result<ExprPtr> parse_unary_filtered();
    Result<ExprPtr> parse_unary(bool with_filter);
    Result<ExprPtr> parse_primary();
    Result<ExprPtr> parse_postfix(ExprPtr node);
    Result<ExprPtr> parse_subscript(ExprPtr obj, int line);
    Status parse_call_args(Expr& call);
    Result<ExprPtr> parse_filter(ExprPtr node);
    Result<ExprPtr> parse_filter_expr(ExprPtr node);

    std::vector<Token> toks_;
    size_t i_ = 0;
    int depth_ = 0;
};

} // namespace llmwb::jinja
