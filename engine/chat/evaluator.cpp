#include "engine/chat/evaluator.h"

#include "engine/chat/operators.h"

namespace llmwb::jinja {

namespace {

struct Scope {
    std::shared_ptr<Scope> parent;
    DictData vars;
};
using ScopePtr = std::shared_ptr<Scope>;

enum class Flow { Normal, Break, Continue };

constexpr size_t kMaxValueDepth = 512;
// What one namespace() costs the budget besides its attributes (object, control block, entry).
constexpr uint64_t kNamespaceBytes = 128;

const char* kErrorPrefix = "chat template error at line ";

Error at_line(int line, const Error& e) {
    if (e.message.rfind(kErrorPrefix, 0) == 0)
        return e;
    return make_error(kErrorPrefix + std::to_string(line) + ": " + e.message);
}

class Renderer {
  public:
    Renderer(const GlobalsOptions& g, const RenderLimits& l) : limits_(l), budget_(l) {
        add_globals(globals_, g);
        // Keep every namespace() alive until the render ends, then break the cycles through them
        // (`{% set ns.me = ns %}`). Held strongly: a chain of them (ns1.next = ns2 ...) dropped in
        // the middle of a render would otherwise be freed by a recursion one frame per link.
        if (Value* ns_fn = globals_.find("namespace")) {
            CallablePtr make_ns = std::get<CallablePtr>(ns_fn->v);
            Renderer* self = this;
            *ns_fn = Value(CallablePtr(std::make_shared<Callable>(
                Callable{"namespace", [make_ns, self](const CallArgs& a) -> Result<Value> {
                             // Each one lives until the end: counted against the budget.
                             uint64_t bytes = kNamespaceBytes;
                             for (const auto& kv : a.kwargs)
                                 bytes += kv.first.size() + shallow_bytes(kv.second);
                             for (const auto& v : a.positional)
                                 bytes += shallow_bytes(v);
                             if (!self->budget_.charge(bytes))
                                 return make_error(self->budget_.error());
                             auto r = make_ns->fn(a);
                             if (r && r->is_namespace())
                                 self->namespaces_.push_back(std::get<NamespacePtr>(r->v));
                             return r;
                         }})));
        }
    }

    ~Renderer() { release_namespaces(); } // also when an exception left render()

    Renderer(const Renderer&) = delete;
    Renderer& operator=(const Renderer&) = delete;

    Result<std::string> render(const Template& tpl, const Value& context) {
        ActiveBudgetScope active(&budget_);
        auto base = std::make_shared<Scope>();
        if (context.is_dict())
            base->vars = context.as_dict();
        auto top = std::make_shared<Scope>();
        top->parent = base;
        std::string out;
        auto f = render_body(tpl.body, top, out);
        release_namespaces();
        if (!f)
            return f.error();
        return out;
    }

    // Namespaces can hold each other in cycles (`{% set ns.me = ns %}`) and in chains as long as
    // the loop limit allows (ns1.next = ns2, ns2.next = ns3 ...), whose destructors would recurse
    // once per link. All are still held here: empty them all, then let them go, each empty.
    void release_namespaces() {
        std::vector<std::pair<std::string, Value>> doomed;
        for (const auto& ns : namespaces_) {
            doomed = std::move(ns->attrs.items);
            ns->attrs.items.clear();
            doomed.clear();
        }
        namespaces_.clear();
    }

  private:
    // ---- scopes ------------------------------------------------------------------------
    Value lookup(const ScopePtr& scope, const std::string& name) const {
        for (const Scope* s = scope.get(); s; s = s->parent.get())
            if (const Value* v = s->vars.find(name))
                return *v;
        if (const Value* g = globals_.find(name))
            return *g;
        return Value::undefined("'" + name + "' is undefined");
    }

    // ---- statements --------------------------------------------------------------------
    // Nested bodies share the evaluation depth with expressions: a macro that calls itself from
    // inside 190 nested blocks recursed ~12,000 frames deep within the macro-call limit.
    Result<Flow> render_body(const Body& body, const ScopePtr& scope, std::string& out) {
        if (body.empty())
            return Flow::Normal;
        if (eval_depth_ >= limits_.max_eval_depth)
            return at_line(body.front()->line, nested_too_deeply());
        ++eval_depth_;
        auto f = render_statements(body, scope, out);
        --eval_depth_;
        return f;
    }

    Error nested_too_deeply() const {
        return make_error("evaluation nested too deeply: exceeded the limit of " +
                          std::to_string(limits_.max_eval_depth) + " levels");
    }

    Result<Flow> render_statements(const Body& body, const ScopePtr& scope, std::string& out) {
        for (const auto& st : body) {
            auto f = render_stmt(*st, scope, out);
            if (!f)
                return f.error();
            if (*f != Flow::Normal)
                return *f;
            if (!budget_.check_output(out.size()))
                return at_line(st->line, make_error(budget_.error()));
        }
        return Flow::Normal;
    }

    Status assign(const Stmt& s, const ScopePtr& scope, Value v) {
        if (!s.ns_attr.empty()) {
            Value ns = lookup(scope, s.targets[0]);
            if (!ns.is_namespace())
                return at_line(s.line,
                               make_error("cannot assign attribute on non-namespace object"));
            ns.as_namespace().attrs.set(s.ns_attr, std::move(v));
            return ok_status();
        }
        if (!s.tuple_target) {
            scope->vars.set(s.targets[0], std::move(v));
            return ok_status();
        }
        auto items = iterate(v);
        if (!items)
            return at_line(s.line, items.error());
        if (items->size() != s.targets.size())
            return at_line(s.line, make_error("cannot unpack " + std::to_string(items->size()) +
                                              " values into " + std::to_string(s.targets.size()) +
                                              " names"));
        for (size_t i = 0; i < items->size(); ++i)
            scope->vars.set(s.targets[i], (*items)[i]);
        return ok_status();
    }

    Result<Flow> render_stmt(const Stmt& s, const ScopePtr& scope, std::string& out) {
        if (!budget_.step())
            return at_line(s.line, make_error(budget_.error()));
        switch (s.kind) {
        case StmtKind::Data:
            out += s.text;
            return Flow::Normal;
        case StmtKind::Print: {
            auto v = eval(*s.expr, scope);
            if (!v)
                return v.error();
            out += to_str(*v);
            return Flow::Normal;
        }
        case StmtKind::If: {
            for (size_t i = 0; i < s.conds.size(); ++i) {
                auto c = eval(*s.conds[i], scope);
                if (!c)
                    return c.error();
                if (truthy(*c))
                    return render_body(s.bodies[i], scope, out);
            }
            return render_body(s.else_body, scope, out);
        }
        case StmtKind::For:
            return render_for(s, scope, out);
        case StmtKind::Set: {
            auto v = eval(*s.expr, scope);
            if (!v)
                return v.error();
            if (auto st = assign(s, scope, std::move(*v)); !st)
                return st.error();
            return Flow::Normal;
        }
        case StmtKind::SetBlock: {
            std::string captured;
            auto f = render_body(s.body, scope, captured);
            if (!f)
                return f.error();
            if (!budget_.charge(captured.size()))
                return at_line(s.line, make_error(budget_.error()));
            Value v(std::move(captured));
            if (s.expr) {
                auto inner = std::make_shared<Scope>();
                inner->parent = scope;
                inner->vars.set("\x01block", v);
                auto r = eval(*s.expr, inner);
                if (!r)
                    return r.error();
                v = std::move(*r);
            }
            if (auto st = assign(s, scope, std::move(v)); !st)
                return st.error();
            return Flow::Normal;
        }
        case StmtKind::FilterBlock: {
            std::string captured;
            auto f = render_body(s.body, scope, captured);
            if (!f)
                return f.error();
            if (!budget_.charge(captured.size()))
                return at_line(s.line, make_error(budget_.error()));
            auto inner = std::make_shared<Scope>();
            inner->parent = scope;
            inner->vars.set("\x01block", Value(std::move(captured)));
            auto r = eval(*s.expr, inner);
            if (!r)
                return r.error();
            out += to_str(*r);
            return Flow::Normal;
        }
        case StmtKind::Macro:
            if (macro_scopes_.size() >= 100000)
                return at_line(s.line, make_error("too many macro definitions"));
            scope->vars.set(s.name, make_macro(s, scope));
            return Flow::Normal;
        case StmtKind::Break:
            return Flow::Break;
        case StmtKind::Continue:
            return Flow::Continue;
        case StmtKind::Generation:
            return render_body(s.body, scope, out);
        }
        return Flow::Normal;
    }

    Result<Flow> render_for(const Stmt& s, const ScopePtr& scope, std::string& out) {
        auto iterable = eval(*s.expr, scope);
        if (!iterable)
            return iterable.error();
        auto all = iterate(*iterable);
        if (!all)
            return at_line(s.line, all.error());
        std::vector<Value> items;
        if (s.cond) {
            for (auto& it : *all) {
                auto sc = std::make_shared<Scope>();
                sc->parent = scope;
                if (auto st = bind_targets(s, sc, it); !st)
                    return st.error();
                auto c = eval(*s.cond, sc);
                if (!c)
                    return c.error();
                if (truthy(*c))
                    items.push_back(std::move(it));
            }
        } else {
            items = std::move(*all);
        }
        if (items.empty())
            return render_body(s.else_body, scope, out);
        const int64_t n = int64_t(items.size());
        for (int64_t i = 0; i < n; ++i) {
            if (!budget_.loop_iteration())
                return at_line(s.line, make_error(budget_.error()));
            auto sc = std::make_shared<Scope>();
            sc->parent = scope;
            DictData loop;
            loop.set("index", Value(i + 1));
            loop.set("index0", Value(i));
            loop.set("revindex", Value(n - i));
            loop.set("revindex0", Value(n - i - 1));
            loop.set("first", Value(i == 0));
            loop.set("last", Value(i == n - 1));
            loop.set("length", Value(n));
            loop.set("depth", Value(int64_t(1)));
            loop.set("depth0", Value(int64_t(0)));
            if (i > 0)
                loop.set("previtem", items[size_t(i - 1)]);
            if (i + 1 < n)
                loop.set("nextitem", items[size_t(i + 1)]);
            loop.set("cycle", Value(CallablePtr(std::make_shared<Callable>(
                                  Callable{"cycle", [i](const CallArgs& a) -> Result<Value> {
                                               if (a.positional.empty())
                                                   return make_error("no items for cycling given");
                                               return a.positional[size_t(i) % a.positional.size()];
                                           }}))));
            sc->vars.set("loop", Value::dict(std::move(loop)));
            if (auto st = bind_targets(s, sc, items[size_t(i)]); !st)
                return st.error();
            auto f = render_body(s.body, sc, out);
            if (!f)
                return f.error();
            if (*f == Flow::Break)
                break;
        }
        return Flow::Normal;
    }

    Status bind_targets(const Stmt& s, const ScopePtr& sc, const Value& item) {
        if (!s.tuple_target) {
            sc->vars.set(s.targets[0], item);
            return ok_status();
        }
        auto parts = iterate(item);
        if (!parts)
            return at_line(s.line, parts.error());
        if (parts->size() != s.targets.size())
            return at_line(s.line, make_error("cannot unpack " + std::to_string(parts->size()) +
                                              " values into " + std::to_string(s.targets.size()) +
                                              " loop variables"));
        for (size_t k = 0; k < parts->size(); ++k)
            sc->vars.set(s.targets[k], (*parts)[k]);
        return ok_status();
    }

    // The macro refers to its defining scope weakly (the scope holds the macro: a strong
    // reference would be a cycle); the renderer keeps such scopes alive until it ends.
    Value make_macro(const Stmt& s, const ScopePtr& defining_scope) {
        const Stmt* stmt = &s;
        Renderer* self = this;
        macro_scopes_.push_back(defining_scope);
        std::weak_ptr<Scope> weak = defining_scope;
        return Value(CallablePtr(std::make_shared<Callable>(Callable{
            s.name, [stmt, weak, self](const CallArgs& a) -> Result<Value> {
                ScopePtr defining = weak.lock();
                if (!defining)
                    return make_error("macro '" + stmt->name + "' called after its scope ended");
                if (self->call_depth_ >= self->limits_.max_call_depth)
                    return make_error(
                        "macro '" + stmt->name + "' nested too deeply: exceeded the limit of " +
                        std::to_string(self->limits_.max_call_depth) + " nested macro calls");
                if (a.positional.size() > stmt->params.size())
                    return make_error("macro '" + stmt->name + "' takes not more than " +
                                      std::to_string(stmt->params.size()) + " argument(s)");
                auto sc = std::make_shared<Scope>();
                sc->parent = defining;
                for (const auto& [k, v] : a.kwargs) {
                    bool known = false;
                    for (const auto& p : stmt->params)
                        known = known || p.name == k;
                    if (!known)
                        return make_error("macro '" + stmt->name + "' takes no keyword argument '" +
                                          k + "'");
                }
                for (size_t i = 0; i < stmt->params.size(); ++i) {
                    const MacroParam& p = stmt->params[i];
                    if (i < a.positional.size()) {
                        sc->vars.set(p.name, a.positional[i]);
                    } else if (const Value* kw = a.kwarg(p.name)) {
                        sc->vars.set(p.name, *kw);
                    } else if (p.default_value) {
                        auto d = self->eval(*p.default_value, sc);
                        if (!d)
                            return d.error();
                        sc->vars.set(p.name, std::move(*d));
                    } else {
                        sc->vars.set(p.name, Value::undefined("parameter '" + p.name +
                                                              "' was not provided"));
                    }
                }
                std::string out;
                ++self->call_depth_;
                auto f = self->render_body(stmt->body, sc, out);
                --self->call_depth_;
                if (!f)
                    return f.error();
                return Value(std::move(out)); // charged by eval() (a Call's new string)
            }})));
    }

    // ---- expressions -------------------------------------------------------------------
    // Arguments and literal items are copies (a string's text included): many references to
    // one big string must not add up past the budget before anything is recorded.
    Status copies_fit(uint64_t& bytes, const Value& v) {
        bytes += shallow_bytes(v);
        if (!budget_.require(bytes))
            return make_error(budget_.error());
        return ok_status();
    }

    Result<CallArgs> eval_args(const Expr& e, const ScopePtr& scope) {
        CallArgs a;
        uint64_t bytes = 0;
        for (const auto& it : e.items) {
            auto v = eval(*it, scope);
            if (!v)
                return v.error();
            if (auto st = copies_fit(bytes, *v); !st)
                return st.error();
            a.positional.push_back(std::move(*v));
        }
        for (const auto& [k, it] : e.kwargs) {
            auto v = eval(*it, scope);
            if (!v)
                return v.error();
            if (auto st = copies_fit(bytes, *v); !st)
                return st.error();
            a.kwargs.emplace_back(k, std::move(*v));
        }
        return a;
    }

    Result<Value> get_attr(const Value& obj, const std::string& name, int line) {
        if (obj.is_undefined())
            return at_line(line, make_error(obj.undefined_message()));
        if (obj.is_namespace()) {
            if (const Value* v = obj.as_namespace().attrs.find(name))
                return *v;
        } else if (auto m = get_method(obj, name)) {
            return *m;
        } else if (obj.is_dict()) {
            if (const Value* v = obj.as_dict().find(name))
                return *v;
        }
        return Value::undefined("'" + object_type_repr(obj) + "' has no attribute '" + name + "'");
    }

    Result<Value> eval(const Expr& e, const ScopePtr& scope) {
        if (!budget_.step())
            return at_line(e.line, make_error(budget_.error()));
        if (eval_depth_ >= limits_.max_eval_depth)
            return at_line(e.line, nested_too_deeply());
        ++eval_depth_;
        auto r = eval_inner(e, scope);
        --eval_depth_;
        if (!r)
            return at_line(e.line, r.error());
        // A built-in that cannot return an error (repr, list building) stopped at the budget.
        if (budget_.failed())
            return at_line(e.line, make_error(budget_.error()));
        if (nesting_depth(*r) > kMaxValueDepth)
            return at_line(e.line, make_error("value nested too deeply: exceeded the limit of " +
                                              std::to_string(kMaxValueDepth) + " levels"));
        if (r->is_string() && produces_new_string(e) && !budget_.charge(r->as_string().size()))
            return at_line(e.line, make_error(budget_.error()));
        return r;
    }

    // Expressions whose string result is newly made (charged to the budget); a name, a literal
    // or an item lookup returns a string that exists already.
    static bool produces_new_string(const Expr& e) {
        return (e.kind == ExprKind::Binary && e.name != "and" && e.name != "or") ||
               e.kind == ExprKind::Filter || e.kind == ExprKind::Call;
    }

    Result<Value> eval_inner(const Expr& e, const ScopePtr& scope) {
        switch (e.kind) {
        case ExprKind::Literal:
            return e.value;
        case ExprKind::Name:
            return lookup(scope, e.name);
        case ExprKind::List:
        case ExprKind::Tuple: {
            std::vector<Value> items;
            uint64_t bytes = 0;
            for (const auto& it : e.items) {
                auto v = eval(*it, scope);
                if (!v)
                    return v;
                if (auto st = copies_fit(bytes, *v); !st)
                    return st.error();
                items.push_back(std::move(*v));
            }
            return Value::list(std::move(items), e.kind == ExprKind::Tuple);
        }
        case ExprKind::Dict: {
            DictData d;
            uint64_t bytes = 0;
            for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
                auto k = eval(*e.items[i], scope);
                if (!k)
                    return k;
                if (!k->is_string())
                    return make_error("dict keys must be strings in this interpreter");
                auto v = eval(*e.items[i + 1], scope);
                if (!v)
                    return v;
                if (auto st = copies_fit(bytes, *k); !st)
                    return st.error();
                if (auto st = copies_fit(bytes, *v); !st)
                    return st.error();
                d.set(k->as_string(), std::move(*v));
            }
            budget_.charge(bytes);
            return Value::dict(std::move(d));
        }
        case ExprKind::GetAttr: {
            auto obj = eval(*e.a, scope);
            if (!obj)
                return obj;
            return get_attr(*obj, e.name, e.line);
        }
        case ExprKind::GetItem: {
            auto obj = eval(*e.a, scope);
            if (!obj)
                return obj;
            auto key = eval(*e.b, scope);
            if (!key)
                return key;
            if (obj->is_undefined())
                return make_error(obj->undefined_message());
            if (auto v = get_item(*obj, *key))
                return *v;
            if (key->is_string()) {
                if (auto m = get_method(*obj, key->as_string()))
                    return *m;
                return Value::undefined("'" + object_type_repr(*obj) + "' has no attribute '" +
                                        key->as_string() + "'");
            }
            return Value::undefined(object_type_repr(*obj) + " has no element " + to_repr(*key));
        }
        case ExprKind::Slice: {
            auto obj = eval(*e.a, scope);
            if (!obj)
                return obj;
            if (obj->is_undefined())
                return make_error(obj->undefined_message());
            Value parts[3];
            const Expr* exprs[3] = {e.b.get(), e.c.get(), e.d.get()};
            for (int k = 0; k < 3; ++k) {
                if (!exprs[k])
                    continue;
                auto v = eval(*exprs[k], scope);
                if (!v)
                    return v;
                parts[k] = std::move(*v);
            }
            // Jinja2 compiles slices to plain Python subscripts: no Undefined fallback.
            if (obj->is_dict())
                return make_error("unhashable type: 'slice'");
            return get_slice(*obj, parts[0], parts[1], parts[2]);
        }
        case ExprKind::Call: {
            auto callee = eval(*e.a, scope);
            if (!callee)
                return callee;
            auto args = eval_args(e, scope);
            if (!args)
                return args.error();
            if (callee->is_undefined())
                return make_error(callee->undefined_message());
            if (!callee->is_callable())
                return make_error("'" + type_name(*callee) + "' object is not callable");
            return callee->as_callable().fn(*args);
        }
        case ExprKind::Filter: {
            auto input = eval(*e.a, scope);
            if (!input)
                return input;
            if (!has_filter(e.name))
                return make_error("unknown filter '" + e.name + "'");
            auto args = eval_args(e, scope);
            if (!args)
                return args.error();
            return apply_filter(e.name, *input, *args);
        }
        case ExprKind::Test: {
            auto input = eval(*e.a, scope);
            if (!input)
                return input;
            if (!has_test(e.name))
                return make_error("unknown test '" + e.name + "'");
            auto args = eval_args(e, scope);
            if (!args)
                return args.error();
            auto r = apply_test(e.name, *input, *args);
            if (!r)
                return r.error();
            return Value(e.negated ? !*r : *r);
        }
        case ExprKind::Unary: {
            auto v = eval(*e.a, scope);
            if (!v)
                return v;
            if (e.name == "not")
                return Value(!truthy(*v));
            return unary_op(e.name, *v);
        }
        case ExprKind::Binary: {
            auto l = eval(*e.a, scope);
            if (!l)
                return l;
            if (e.name == "and")
                return truthy(*l) ? eval(*e.b, scope) : l;
            if (e.name == "or")
                return truthy(*l) ? l : eval(*e.b, scope);
            auto r = eval(*e.b, scope);
            if (!r)
                return r;
            return binary_op(e.name, *l, *r);
        }
        case ExprKind::Compare: {
            auto left = eval(*e.a, scope);
            if (!left)
                return left;
            Value lv = std::move(*left);
            for (size_t i = 0; i < e.ops.size(); ++i) {
                auto right = eval(*e.items[i], scope);
                if (!right)
                    return right;
                auto ok = compare_op(e.ops[i], lv, *right);
                if (!ok)
                    return ok.error();
                if (!*ok)
                    return Value(false);
                lv = std::move(*right);
            }
            return Value(true);
        }
        case ExprKind::Condition: {
            auto c = eval(*e.a, scope);
            if (!c)
                return c;
            if (truthy(*c))
                return eval(*e.b, scope);
            if (e.c)
                return eval(*e.c, scope);
            return Value::undefined("the inline if-expression on line " + std::to_string(e.line) +
                                    " evaluated to false and no else section was defined.");
        }
        }
        return make_error("internal error: unknown expression");
    }

    static Result<bool> compare_op(const std::string& op, const Value& a, const Value& b) {
        if (op == "==")
            return equals(a, b);
        if (op == "!=")
            return !equals(a, b);
        if (op == "in" || op == "not in") {
            auto c = contains(b, a);
            if (!c)
                return c.error();
            return op == "in" ? *c : !*c;
        }
        if (a.is_undefined())
            return make_error(a.undefined_message());
        if (b.is_undefined())
            return make_error(b.undefined_message());
        auto c = compare(a, b);
        if (!c) {
            if (c.message().rfind("'<' not supported", 0) == 0)
                return make_error("'" + op + "'" + c.message().substr(3));
            return c.error();
        }
        if (op == "<")
            return *c < 0;
        if (op == "<=")
            return *c <= 0;
        if (op == ">")
            return *c > 0;
        return *c >= 0;
    }

    DictData globals_;
    RenderLimits limits_;
    RenderBudget budget_;
    std::vector<ScopePtr> macro_scopes_;
    std::vector<NamespacePtr> namespaces_;
    int call_depth_ = 0;
    int eval_depth_ = 0;
};

} // namespace

Result<std::string> render_template(const Template& tpl, const Value& context,
                                    const GlobalsOptions& globals, const RenderLimits& limits) {
    Renderer r(globals, limits);
    return r.render(tpl, context);
}

} // namespace llmwb::jinja
