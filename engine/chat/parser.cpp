#include "engine/chat/parser.h"

#include <set>

#include "engine/chat/expression_parser.h"

namespace llmwb::jinja {

namespace {

class Parser : public ExpressionParser {
  public:
    using ExpressionParser::ExpressionParser;

    Result<Template> run() {
        Template tpl;
        std::string end;
        auto body = subparse({}, end);
        if (!body)
            return body.error();
        tpl.body = std::move(*body);
        if (auto st = check_heights(tpl.body); !st)
            return st.error();
        return tpl;
    }

    // Every expression tree at most kMaxExprHeight deep, so that evaluating it stays within the
    // evaluator's depth limit for any template that parses. Statements nest at most kMaxDepth
    // (subparse), but the walk keeps its own stack anyway.
    Status check_heights(const Body& top) {
        std::vector<const Body*> bodies{&top};
        while (!bodies.empty()) {
            const Body* b = bodies.back();
            bodies.pop_back();
            for (const auto& st : *b) {
                std::vector<const Expr*> roots{st->expr.get(), st->cond.get()};
                for (const auto& c : st->conds)
                    roots.push_back(c.get());
                for (const auto& p : st->params)
                    roots.push_back(p.default_value.get());
                for (const Expr* r : roots)
                    if (r && expr_height(*r) > kMaxExprHeight)
                        return fail("expression nested too deeply (over the limit of " +
                                        std::to_string(kMaxExprHeight) + " levels)",
                                    st->line);
                bodies.push_back(&st->body);
                bodies.push_back(&st->else_body);
                for (const auto& br : st->bodies)
                    bodies.push_back(&br);
            }
        }
        return ok_status();
    }

  private:
    using Ends = std::set<std::string>;

    // ---- statements --------------------------------------------------------------------
    // Parses until a block tag whose first name is in `ends`; leaves the stream after that name
    // and stores it in `end` (empty at end of template).
    Result<Body> subparse(const Ends& ends, std::string& end) {
        if (++depth_ > kMaxDepth)
            return fail("blocks nested too deeply");
        Body body;
        for (;;) {
            const Token& t = cur();
            if (t.type == TokenType::Eof) {
                --depth_;
                if (!ends.empty()) {
                    std::string list;
                    for (const auto& e : ends)
                        list += (list.empty() ? "'" : " or '") + e + "'";
                    return fail("unexpected end of template, expected " + list);
                }
                end.clear();
                return body;
            }
            if (t.type == TokenType::Data) {
                auto s = std::make_unique<Stmt>();
                s->kind = StmtKind::Data;
                s->line = t.line;
                s->text = t.value;
                body.push_back(std::move(s));
                next();
            } else if (t.type == TokenType::VariableBegin) {
                next();
                auto s = std::make_unique<Stmt>();
                s->kind = StmtKind::Print;
                s->line = t.line;
                auto e = parse_tuple(true, true);
                if (!e)
                    return e.error();
                s->expr = std::move(*e);
                if (auto st = expect_type(TokenType::VariableEnd); !st)
                    return st.error();
                body.push_back(std::move(s));
            } else if (t.type == TokenType::BlockBegin) {
                next();
                if (cur().type != TokenType::Name)
                    return fail("expected a tag name, got " + describe(cur()));
                if (ends.count(cur().value)) {
                    end = cur().value;
                    next();
                    --depth_;
                    return body;
                }
                auto s = parse_statement();
                if (!s)
                    return s.error();
                body.push_back(std::move(*s));
            } else {
                return fail("unexpected " + describe(t));
            }
        }
    }

    Result<StmtPtr> parse_statement() {
        const Token& t = cur();
        const std::string tag = t.value;
        int line = t.line;
        if (tag == "if")
            return parse_if();
        if (tag == "for")
            return parse_for();
        if (tag == "set")
            return parse_set();
        if (tag == "macro")
            return parse_macro();
        if (tag == "filter")
            return parse_filter_block();
        if (tag == "generation") {
            next();
            auto s = std::make_unique<Stmt>();
            s->kind = StmtKind::Generation;
            s->line = line;
            if (auto st = expect_type(TokenType::BlockEnd); !st)
                return st.error();
            std::string end;
            auto body = subparse({"endgeneration"}, end);
            if (!body)
                return body.error();
            s->body = std::move(*body);
            if (auto st = expect_type(TokenType::BlockEnd); !st)
                return st.error();
            return s;
        }
        if (tag == "break" || tag == "continue") {
            if (loop_depth_ == 0)
                return fail("'" + tag + "' outside of a for loop");
            next();
            auto s = std::make_unique<Stmt>();
            s->kind = tag == "break" ? StmtKind::Break : StmtKind::Continue;
            s->line = line;
            if (auto st = expect_type(TokenType::BlockEnd); !st)
                return st.error();
            return s;
        }
        static const std::set<std::string> unsupported = {
            "include",    "extends", "import", "from",      "block",    "call", "with",
            "autoescape", "do",      "trans",  "pluralize", "endblock", "raw"};
        if (unsupported.count(tag))
            return make_error("chat template error at line " + std::to_string(line) +
                              ": unsupported tag '" + tag + "'");
        return make_error("chat template syntax error at line " + std::to_string(line) +
                          ": unknown tag '" + tag + "'");
    }

    Result<StmtPtr> parse_if() {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::If;
        s->line = cur().line;
        next();
        for (;;) {
            auto c = parse_tuple(false, false);
            if (!c)
                return c.error();
            if (auto st = expect_type(TokenType::BlockEnd); !st)
                return st.error();
            std::string end;
            auto body = subparse({"elif", "else", "endif"}, end);
            if (!body)
                return body.error();
            s->conds.push_back(std::move(*c));
            s->bodies.push_back(std::move(*body));
            if (end == "elif")
                continue;
            if (end == "else") {
                if (auto st = expect_type(TokenType::BlockEnd); !st)
                    return st.error();
                auto eb = subparse({"endif"}, end);
                if (!eb)
                    return eb.error();
                s->else_body = std::move(*eb);
            }
            if (auto st = expect_type(TokenType::BlockEnd); !st)
                return st.error();
            return s;
        }
    }

    Status parse_targets(Stmt& s) {
        bool paren = false;
        if (is_op("(")) {
            paren = true;
            next();
        }
        for (;;) {
            auto n = expect_name();
            if (!n)
                return n.error();
            s.targets.push_back(*n);
            if (!is_op(","))
                break;
            s.tuple_target = true;
            next();
            if (cur().type != TokenType::Name)
                break; // trailing comma
        }
        if (paren) {
            s.tuple_target = true;
            if (auto st = expect_op(")"); !st)
                return st;
        }
        return ok_status();
    }

    Result<StmtPtr> parse_for() {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::For;
        s->line = cur().line;
        next();
        if (auto st = parse_targets(*s); !st)
            return st.error();
        if (!is_name("in"))
            return fail("expected 'in', got " + describe(cur()));
        next();
        auto it = parse_tuple(false, false);
        if (!it)
            return it.error();
        s->expr = std::move(*it);
        if (is_name("if")) {
            next();
            auto c = parse_expression(true);
            if (!c)
                return c.error();
            s->cond = std::move(*c);
        }
        if (is_name("recursive"))
            return make_error("chat template error at line " + std::to_string(s->line) +
                              ": unsupported construct 'recursive' for loop");
        if (auto st = expect_type(TokenType::BlockEnd); !st)
            return st.error();
        ++loop_depth_;
        std::string end;
        auto body = subparse({"endfor", "else"}, end);
        --loop_depth_;
        if (!body)
            return body.error();
        s->body = std::move(*body);
        if (end == "else") {
            if (auto st = expect_type(TokenType::BlockEnd); !st)
                return st.error();
            auto eb = subparse({"endfor"}, end);
            if (!eb)
                return eb.error();
            s->else_body = std::move(*eb);
        }
        if (auto st = expect_type(TokenType::BlockEnd); !st)
            return st.error();
        return s;
    }

    Result<StmtPtr> parse_set() {
        auto s = std::make_unique<Stmt>();
        s->line = cur().line;
        next();
        if (cur().type == TokenType::Name && peek().type == TokenType::Operator &&
            peek().value == ".") {
            s->targets.push_back(cur().value);
            next();
            next();
            auto attr = expect_name();
            if (!attr)
                return attr.error();
            s->ns_attr = *attr;
        } else {
            if (auto st = parse_targets(*s); !st)
                return st.error();
        }
        if (is_op("=")) {
            next();
            s->kind = StmtKind::Set;
            auto e = parse_tuple(true, false);
            if (!e)
                return e.error();
            s->expr = std::move(*e);
            if (auto st = expect_type(TokenType::BlockEnd); !st)
                return st.error();
            return s;
        }
        s->kind = StmtKind::SetBlock;
        if (s->tuple_target)
            return fail("a block set needs a single target");
        if (is_op("|")) {
            auto chain = parse_filter_chain();
            if (!chain)
                return chain.error();
            s->expr = std::move(*chain);
        }
        if (auto st = expect_type(TokenType::BlockEnd); !st)
            return st.error();
        std::string end;
        auto body = subparse({"endset"}, end);
        if (!body)
            return body.error();
        s->body = std::move(*body);
        if (auto st = expect_type(TokenType::BlockEnd); !st)
            return st.error();
        return s;
    }

    // `| f(args) | g` applied to the placeholder name "\x01block" (the rendered body).
    Result<ExprPtr> parse_filter_chain() {
        auto input = std::make_unique<Expr>();
        input->kind = ExprKind::Name;
        input->name = "\x01block";
        input->line = cur().line;
        ExprPtr node = std::move(input);
        bool first = true;
        while (first || is_op("|")) {
            if (is_op("|"))
                next();
            first = false;
            auto f = parse_filter(std::move(node));
            if (!f)
                return f.error();
            node = std::move(*f);
        }
        return node;
    }

    Result<StmtPtr> parse_filter_block() {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::FilterBlock;
        s->line = cur().line;
        next();
        auto chain = parse_filter_chain();
        if (!chain)
            return chain.error();
        s->expr = std::move(*chain);
        if (auto st = expect_type(TokenType::BlockEnd); !st)
            return st.error();
        std::string end;
        auto body = subparse({"endfilter"}, end);
        if (!body)
            return body.error();
        s->body = std::move(*body);
        if (auto st = expect_type(TokenType::BlockEnd); !st)
            return st.error();
        return s;
    }

    Result<StmtPtr> parse_macro() {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::Macro;
        s->line = cur().line;
        next();
        auto n = expect_name();
        if (!n)
            return n.error();
        s->name = *n;
        if (auto st = expect_op("("); !st)
            return st.error();
        while (!is_op(")")) {
            if (!s->params.empty())
                if (auto st = expect_op(","); !st)
                    return st.error();
            if (is_op(")"))
                break;
            MacroParam p;
            auto pn = expect_name();
            if (!pn)
                return pn.error();
            p.name = *pn;
            if (is_op("=")) {
                next();
                auto d = parse_expression(true);
                if (!d)
                    return d.error();
                p.default_value = std::move(*d);
            }
            s->params.push_back(std::move(p));
        }
        next();
        if (auto st = expect_type(TokenType::BlockEnd); !st)
            return st.error();
        std::string end;
        int saved_loop = loop_depth_;
        loop_depth_ = 0;
        auto body = subparse({"endmacro"}, end);
        loop_depth_ = saved_loop;
        if (!body)
            return body.error();
        s->body = std::move(*body);
        if (auto st = expect_type(TokenType::BlockEnd); !st)
            return st.error();
        return s;
    }

    int loop_depth_ = 0;
};

} // namespace

Result<Template> parse_template(const std::string& source) {
    auto toks = tokenize(source);
    if (!toks)
        return toks.error();
    Parser p(std::move(*toks));
    return p.run();
}

} // namespace llmwb::jinja
