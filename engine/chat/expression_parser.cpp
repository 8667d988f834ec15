#include "engine/chat/expression_parser.h"

#include <charconv>
#include <cstdlib>

namespace llmwb::jinja {

ExprPtr ExpressionParser::make(ExprKind k, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = line;
    return e;
}

bool ExpressionParser::at_tuple_end() const {
    const Token& t = cur();
    if (t.type == TokenType::VariableEnd || t.type == TokenType::BlockEnd ||
        t.type == TokenType::Eof)
        return true;
    if (t.type == TokenType::Operator && (t.value == ")" || t.value == "]" || t.value == "}"))
        return true;
    return false;
}

Result<ExprPtr> ExpressionParser::parse_tuple(bool with_condexpr, bool allow_empty_paren) {
    int line = cur().line;
    std::vector<ExprPtr> items;
    bool comma = false;
    for (;;) {
        if (!items.empty()) {
            if (!is_op(","))
                break;
            next();
            comma = true;
            if (at_tuple_end())
                break;
            if (cur().type == TokenType::Name &&
                (cur().value == "in" || cur().value == "recursive"))
                break;
        }
        auto e = parse_expression(with_condexpr);
        if (!e)
            return e.error();
        items.push_back(std::move(*e));
    }
    if (!comma && items.size() == 1)
        return std::move(items[0]);
    auto t = make(ExprKind::Tuple, line);
    t->items = std::move(items);
    return t;
}

Result<ExprPtr> ExpressionParser::parse_expression(bool with_condexpr) {
    if (with_condexpr)
        return parse_condexpr();
    return parse_or();
}

Result<ExprPtr> ExpressionParser::parse_condexpr() {
    if (++depth_ > kMaxDepth)
        return fail("expression nested too deeply");
    auto e1 = parse_or();
    if (!e1)
        return e1;
    ExprPtr node = std::move(*e1);
    while (is_name("if")) {
        int line = cur().line;
        next();
        auto cond = parse_or();
        if (!cond)
            return cond;
        auto c = make(ExprKind::Condition, line);
        c->a = std::move(*cond);
        c->b = std::move(node);
        if (is_name("else")) {
            next();
            auto e3 = parse_condexpr();
            if (!e3)
                return e3;
            c->c = std::move(*e3);
        }
        node = std::move(c);
    }
    --depth_;
    return node;
}

Result<ExprPtr> ExpressionParser::binary_chain(Result<ExprPtr> (ExpressionParser::*sub)(),
                                               std::initializer_list<const char*> ops, bool names) {
    auto l = (this->*sub)();
    if (!l)
        return l;
    ExprPtr node = std::move(*l);
    for (size_t links = 1;; ++links) {
        if (links > kMaxExprHeight)
            return fail("expression nested too deeply (over the limit of " +
                        std::to_string(kMaxExprHeight) + " levels)");
        std::string op;
        for (const char* o : ops)
            if (names ? is_name(o) : is_op(o))
                op = o;
        if (op.empty())
            return node;
        int line = cur().line;
        next();
        auto r = (this->*sub)();
        if (!r)
            return r;
        auto b = make(ExprKind::Binary, line);
        b->name = op;
        b->a = std::move(node);
        b->b = std::move(*r);
        node = std::move(b);
    }
}

Result<ExprPtr> ExpressionParser::parse_or() {
    return binary_chain(&ExpressionParser::parse_and, {"or"}, true);
}

Result<ExprPtr> ExpressionParser::parse_and() {
    return binary_chain(&ExpressionParser::parse_not, {"and"}, true);
}

Result<ExprPtr> ExpressionParser::parse_not() {
    if (is_name("not")) {
        if (++depth_ > kMaxDepth)
            return fail("expression nested too deeply");
        int line = cur().line;
        next();
        auto operand = parse_not();
        if (!operand)
            return operand;
        auto u = make(ExprKind::Unary, line);
        u->name = "not";
        u->a = std::move(*operand);
        --depth_;
        return u;
    }
    return parse_compare();
}

Result<ExprPtr> ExpressionParser::parse_compare() {
    int line = cur().line;
    auto first = parse_math1();
    if (!first)
        return first;
    ExprPtr cmp;
    for (;;) {
        std::string op;
        if (cur().type == TokenType::Operator &&
            (cur().value == "==" || cur().value == "!=" || cur().value == "<" ||
             cur().value == "<=" || cur().value == ">" || cur().value == ">=")) {
            op = cur().value;
            next();
        } else if (is_name("in")) {
            op = "in";
            next();
        } else if (is_name("not") && peek().type == TokenType::Name && peek().value == "in") {
            op = "not in";
            next();
            next();
        } else {
            break;
        }
        auto r = parse_math1();
        if (!r)
            return r;
        if (!cmp) {
            cmp = make(ExprKind::Compare, line);
            cmp->a = std::move(*first);
        }
        cmp->ops.push_back(op);
        cmp->items.push_back(std::move(*r));
    }
    if (cmp)
        return cmp;
    return std::move(*first);
}

Result<ExprPtr> ExpressionParser::parse_math1() {
    return binary_chain(&ExpressionParser::parse_concat, {"+", "-"}, false);
}

Result<ExprPtr> ExpressionParser::parse_concat() {
    return binary_chain(&ExpressionParser::parse_math2, {"~"}, false);
}

Result<ExprPtr> ExpressionParser::parse_math2() {
    return binary_chain(&ExpressionParser::parse_pow, {"*", "/", "//", "%"}, false);
}

Result<ExprPtr> ExpressionParser::parse_pow() {
    return binary_chain(&ExpressionParser::parse_unary_filtered, {"**"}, false);
}

Result<ExprPtr> ExpressionParser::parse_unary_filtered() {
    return parse_unary(true);
}

Result<ExprPtr> ExpressionParser::parse_unary(bool with_filter) {
    if (++depth_ > kMaxDepth)
        return fail("expression nested too deeply");
    int line = cur().line;
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
        std::string op = cur().value;
        next();
        auto operand = parse_unary(false);
        if (!operand)
            return operand;
        node = make(ExprKind::Unary, line);
        node->name = op;
        node->a = std::move(*operand);
    } else {
        auto p = parse_primary();
        if (!p)
            return p;
        node = std::move(*p);
    }
    auto post = parse_postfix(std::move(node));
    if (!post)
        return post;
    node = std::move(*post);
    if (with_filter) {
        auto f = parse_filter_expr(std::move(node));
        if (!f)
            return f;
        node = std::move(*f);
    }
    --depth_;
    return node;
}

Result<ExprPtr> ExpressionParser::parse_primary() {
    const Token t = cur();
    switch (t.type) {
    case TokenType::Name: {
        next();
        auto e = make(ExprKind::Literal, t.line);
        if (t.value == "true" || t.value == "True")
            e->value = Value(true);
        else if (t.value == "false" || t.value == "False")
            e->value = Value(false);
        else if (t.value == "none" || t.value == "None")
            e->value = Value(nullptr);
        else {
            e->kind = ExprKind::Name;
            e->name = t.value;
        }
        return e;
    }
    case TokenType::String: {
        std::string s;
        while (cur().type == TokenType::String) {
            s += cur().value;
            next();
        }
        auto e = make(ExprKind::Literal, t.line);
        e->value = Value(std::move(s));
        return e;
    }
    case TokenType::Integer: {
        next();
        int64_t v = 0;
        auto r = std::from_chars(t.value.data(), t.value.data() + t.value.size(), v);
        if (r.ec != std::errc() || r.ptr != t.value.data() + t.value.size())
            return fail("integer literal out of range: " + t.value, t.line);
        auto e = make(ExprKind::Literal, t.line);
        e->value = Value(v);
        return e;
    }
    case TokenType::Float: {
        next();
        auto e = make(ExprKind::Literal, t.line);
        e->value = Value(std::strtod(t.value.c_str(), nullptr));
        return e;
    }
    case TokenType::Operator: {
        if (t.value == "(") {
            next();
            if (is_op(")")) {
                next();
                auto e = make(ExprKind::Tuple, t.line);
                return e;
            }
            auto e = parse_tuple(true, true);
            if (!e)
                return e;
            if (auto st = expect_op(")"); !st)
                return st.error();
            return e;
        }
        if (t.value == "[") {
            next();
            auto e = make(ExprKind::List, t.line);
            while (!is_op("]")) {
                if (!e->items.empty())
                    if (auto st = expect_op(","); !st)
                        return st.error();
                if (is_op("]"))
                    break;
                auto item = parse_expression(true);
                if (!item)
                    return item;
                e->items.push_back(std::move(*item));
            }
            next();
            return e;
        }
        if (t.value == "{") {
            next();
            auto e = make(ExprKind::Dict, t.line);
            while (!is_op("}")) {
                if (!e->items.empty())
                    if (auto st = expect_op(","); !st)
                        return st.error();
                if (is_op("}"))
                    break;
                auto k = parse_expression(true);
                if (!k)
                    return k;
                if (auto st = expect_op(":"); !st)
                    return st.error();
                auto v = parse_expression(true);
                if (!v)
                    return v;
                e->items.push_back(std::move(*k));
                e->items.push_back(std::move(*v));
            }
            next();
            return e;
        }
        return fail("unexpected " + describe(t));
    }
    default:
        return fail("unexpected " + describe(t));
    }
}

Result<ExprPtr> ExpressionParser::parse_postfix(ExprPtr node) {
    for (size_t links = 1;; ++links) {
        if (links > kMaxExprHeight)
            return fail("expression nested too deeply (over the limit of " +
                        std::to_string(kMaxExprHeight) + " levels)");
        int line = cur().line;
        if (is_op(".")) {
            next();
            if (cur().type == TokenType::Name) {
                auto g = make(ExprKind::GetAttr, line);
                g->name = cur().value;
                g->a = std::move(node);
                node = std::move(g);
                next();
            } else if (cur().type == TokenType::Integer) {
                auto g = make(ExprKind::GetItem, line);
                g->a = std::move(node);
                g->b = make(ExprKind::Literal, line);
                g->b->value = Value(int64_t(std::strtoll(cur().value.c_str(), nullptr, 10)));
                node = std::move(g);
                next();
            } else {
                return fail("expected an attribute name after '.', got " + describe(cur()));
            }
        } else if (is_op("[")) {
            next();
            auto sub = parse_subscript(std::move(node), line);
            if (!sub)
                return sub;
            node = std::move(*sub);
        } else if (is_op("(")) {
            auto call = make(ExprKind::Call, line);
            call->a = std::move(node);
            if (auto st = parse_call_args(*call); !st)
                return st.error();
            node = std::move(call);
        } else {
            return node;
        }
    }
}

Result<ExprPtr> ExpressionParser::parse_subscript(ExprPtr obj, int line) {
    // Either a single index (tuple allowed) or a slice a:b:c.
    ExprPtr parts[3];
    bool is_slice = false;
    std::vector<ExprPtr> tuple_items;
    if (!is_op(":")) {
        auto e = parse_expression(true);
        if (!e)
            return e;
        parts[0] = std::move(*e);
    }
    if (is_op(":")) {
        is_slice = true;
        next();
        if (!is_op("]") && !is_op(":")) {
            auto e = parse_expression(true);
            if (!e)
                return e;
            parts[1] = std::move(*e);
        }
        if (is_op(":")) {
            next();
            if (!is_op("]")) {
                auto e = parse_expression(true);
                if (!e)
                    return e;
                parts[2] = std::move(*e);
            }
        }
    } else if (is_op(",")) {
        tuple_items.push_back(std::move(parts[0]));
        while (is_op(",")) {
            next();
            if (is_op("]"))
                break;
            auto e = parse_expression(true);
            if (!e)
                return e;
            tuple_items.push_back(std::move(*e));
        }
    }
    if (auto st = expect_op("]"); !st)
        return st.error();
    if (is_slice) {
        auto s = make(ExprKind::Slice, line);
        s->a = std::move(obj);
        s->b = std::move(parts[0]);
        s->c = std::move(parts[1]);
        s->d = std::move(parts[2]);
        return s;
    }
    auto g = make(ExprKind::GetItem, line);
    g->a = std::move(obj);
    if (!tuple_items.empty()) {
        g->b = make(ExprKind::Tuple, line);
        g->b->items = std::move(tuple_items);
    } else {
        g->b = std::move(parts[0]);
    }
    return g;
}

Status ExpressionParser::parse_call_args(Expr& call) {
    if (auto st = expect_op("("); !st)
        return st;
    bool first = true;
    while (!is_op(")")) {
        if (!first)
            if (auto st = expect_op(","); !st)
                return st;
        first = false;
        if (is_op(")"))
            break;
        if (is_op("*") || is_op("**"))
            return fail("*args / **kwargs in calls are not supported");
        if (cur().type == TokenType::Name && peek().type == TokenType::Operator &&
            peek().value == "=") {
            std::string key = cur().value;
            next();
            next();
            auto v = parse_expression(true);
            if (!v)
                return v.error();
            call.kwargs.emplace_back(key, std::move(*v));
        } else {
            if (!call.kwargs.empty())
                return fail("positional argument after keyword argument");
            auto v = parse_expression(true);
            if (!v)
                return v.error();
            call.items.push_back(std::move(*v));
        }
    }
    next();
    return ok_status();
}

Result<ExprPtr> ExpressionParser::parse_filter(ExprPtr node) {
    int line = cur().line;
    auto n = expect_name();
    if (!n)
        return n.error();
    std::string name = *n;
    while (is_op(".")) {
        next();
        auto more = expect_name();
        if (!more)
            return more.error();
        name += "." + *more;
    }
    auto f = make(ExprKind::Filter, line);
    f->name = name;
    f->a = std::move(node);
    if (is_op("("))
        if (auto st = parse_call_args(*f); !st)
            return st.error();
    return f;
}

Result<ExprPtr> ExpressionParser::parse_filter_expr(ExprPtr node) {
    for (size_t links = 1;; ++links) {
        if (links > kMaxExprHeight)
            return fail("expression nested too deeply (over the limit of " +
                        std::to_string(kMaxExprHeight) + " levels)");
        if (is_op("|")) {
            next();
            auto f = parse_filter(std::move(node));
            if (!f)
                return f;
            node = std::move(*f);
        } else if (is_name("is")) {
            int line = cur().line;
            next();
            auto t = make(ExprKind::Test, line);
            if (is_name("not")) {
                t->negated = true;
                next();
            }
            auto n = expect_name();
            if (!n)
                return n.error();
            t->name = *n;
            while (is_op(".")) {
                next();
                auto more = expect_name();
                if (!more)
                    return more.error();
                t->name += "." + *more;
            }
            t->a = std::move(node);
            const Token& c = cur();
            if (is_op("(")) {
                if (auto st = parse_call_args(*t); !st)
                    return st.error();
            } else if ((c.type == TokenType::Name || c.type == TokenType::String ||
                        c.type == TokenType::Integer || c.type == TokenType::Float || is_op("[") ||
                        is_op("{")) &&
                       !(c.type == TokenType::Name &&
                         (c.value == "else" || c.value == "or" || c.value == "and"))) {
                if (is_name("is"))
                    return fail("cannot chain multiple tests with 'is'");
                auto arg = parse_primary();
                if (!arg)
                    return arg;
                auto post = parse_postfix(std::move(*arg));
                if (!post)
                    return post;
                t->items.push_back(std::move(*post));
            }
            node = std::move(t);
        } else if (is_op("(")) {
            auto call = make(ExprKind::Call, cur().line);
            call->a = std::move(node);
            if (auto st = parse_call_args(*call); !st)
                return st.error();
            node = std::move(call);
        } else {
            return node;
        }
    }
}

} // namespace llmwb::jinja
