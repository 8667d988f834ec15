#include "engine/chat/ast.h"

#include <algorithm>

namespace llmwb::jinja {

namespace {

// Moves the children of `e` onto `out` (leaving `e` without children).
void take_children(Expr& e, std::vector<ExprPtr>& out) {
    for (ExprPtr* p : {&e.a, &e.b, &e.c, &e.d})
        if (*p)
            out.push_back(std::move(*p));
    for (auto& it : e.items)
        if (it)
            out.push_back(std::move(it));
    e.items.clear();
    for (auto& kv : e.kwargs)
        if (kv.second)
            out.push_back(std::move(kv.second));
    e.kwargs.clear();
}

template <typename F> void for_each_child(const Expr& e, F&& f) {
    for (const ExprPtr* p : {&e.a, &e.b, &e.c, &e.d})
        if (*p)
            f(**p);
    for (const auto& it : e.items)
        if (it)
            f(*it);
    for (const auto& kv : e.kwargs)
        if (kv.second)
            f(*kv.second);
}

} // namespace

Expr::~Expr() {
    std::vector<ExprPtr> pending;
    take_children(*this, pending);
    while (!pending.empty()) {
        ExprPtr e = std::move(pending.back());
        pending.pop_back();
        take_children(*e, pending);
        // `e` is destroyed here with no children left: its own destructor does not recurse.
    }
}

size_t expr_height(const Expr& root) {
    size_t height = 0;
    std::vector<std::pair<const Expr*, size_t>> stack{{&root, 1}};
    while (!stack.empty()) {
        auto [e, h] = stack.back();
        stack.pop_back();
        height = std::max(height, h);
        for_each_child(*e, [&, h = h](const Expr& c) { stack.emplace_back(&c, h + 1); });
    }
    return height;
}

} // namespace llmwb::jinja
