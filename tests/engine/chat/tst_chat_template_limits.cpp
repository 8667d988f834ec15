// Chat templates are programs from strangers: each hostile template from issue 14 ends in an
// error naming the limit it hit (with the default limits, within a second or two), deep trees
// and chains of values are freed without recursion, and a render can be cancelled from another
// thread. Timings are printed, not asserted.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/chat/ast.h"
#include "engine/chat/chat_template.h"
#include "engine/chat/evaluator.h"
#include "engine/chat/parser.h"
#include "engine/chat/render_budget.h"
#include "support/mini_test.h"

using llmwb::ChatTemplate;
using json = nlohmann::ordered_json;
namespace jinja = llmwb::jinja;

namespace {

bool contains(const std::string& s, const std::string& needle) {
    return s.find(needle) != std::string::npos;
}

const std::string kAllocLimit = "exceeded the limit of 64 MiB of strings and lists allocated";

struct HostileRow {
    std::string name;
    std::string source;
    std::string needle;
};

std::string repeat(const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i)
        out += s;
    return out;
}

std::vector<HostileRow> hostile_rows() {
    return {
        {"string_doubling",
         "{% set ns = namespace(s='x') %}{% for i in range(100000) %}"
         "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
         kAllocLimit},
        {"list_doubling",
         "{% set ns = namespace(l=['x']) %}{% for i in range(100000) %}"
         "{% set ns.l = ns.l + ns.l %}{% endfor %}",
         kAllocLimit},
        {"replace", "{{ ('x' * 60000000) | replace('x', 'yy') }}", kAllocLimit},
        {"replace_method", "{{ ('x' * 40000000).replace('x', 'yy') }}", kAllocLimit},
        {"join", "{% set l = ['x' * 1000000] * 60 %}{{ l | join('') }}", kAllocLimit},
        {"join_method", "{% set l = ['x' * 1000000] * 60 %}{{ ''.join(l) }}", kAllocLimit},
        {"big_string_in_a_loop",
         "{% for i in range(100000) %}{% set x = 'x' * 60000000 %}{% endfor %}", kAllocLimit},
        {"repetition_overflow", "{{ 'x' * 9000000000000000000 }}", kAllocLimit},
        {"list_repetition", "{{ (['x' * 1000] * 1000000) | length }}", kAllocLimit},
        {"list_literal_of_copies",
         "{% set x = 'x' * 30000000 %}{{ [x, x, x, x, x, x, x, x] | length }}", kAllocLimit},
        {"repr_of_shared_lists",
         "{% set l = ['x' * 100000] %}{% set l2 = [l] * 1000 %}{% set l3 = [l2] * 1000 %}"
         "{{ l3 }}",
         kAllocLimit},
        {"repr_exponential",
         "{% set ns = namespace(l=['x']) %}{% for i in range(100) %}"
         "{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}",
         "exceeded the limit of"}, // bytes or steps, whichever comes first
        {"tojson_of_shared_lists",
         "{% set ns = namespace(l=['x']) %}{% for i in range(100) %}"
         "{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l | tojson }}",
         "exceeded the limit of"}, // bytes or steps, whichever comes first
        {"indent_amplification", "{{ ('a\\n' * 100000) | indent('x' * 1000) }}", kAllocLimit},
        {"split_into_many_pieces", "{{ ('a,' * 10000000).split(',') | length }}", kAllocLimit},
        {"iterate_a_long_string", "{% for c in 'x' * 10000000 %}{% endfor %}", kAllocLimit},
        {"printf_of_copies", "{% set x = 'x' * 20000000 %}{{ '%s%s%s%s' % (x, x, x, x) }}",
         kAllocLimit},
        {"many_namespaces",
         "{% for i in range(1000) %}{% for j in range(1000) %}{% set t = namespace(a=i) %}"
         "{% endfor %}{% endfor %}",
         kAllocLimit},
        {"nested_loops",
         "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
         "{% endfor %}",
         "loop iterations"},
        {"empty_loop_body_sees_the_clock",
         "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
         "exceeded the limit of 0.2 s of rendering time"},
        {"output", "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}",
         "exceeded the limit of 16 MiB of output"},
        {"deep_list_value",
         "{% set ns = namespace(x=[]) %}{% for i in range(1000) %}{% for j in range(1000) %}"
         "{% set ns.x = [ns.x] %}{% endfor %}{% endfor %}",
         "value nested too deeply: exceeded the limit of 512 levels"},
    };
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// kSlow: minutes of work within every limit but time (few steps, nothing allocated per loop).
const char* kSlow = "{% set a = range(100000) | list %}{% set b = range(100000) | list %}"
                    "{% for i in range(1000) %}{% for j in range(1000) %}{% if a == b %}{% endif %}"
                    "{% endfor %}{% endfor %}done";

} // namespace

MT_TEST_TABLE(hostileTemplates, HostileRow, hostile_rows()) {
    auto t = ChatTemplate::parse(row.source);
    MT_REQUIRE_MSG(t.ok(), t.ok() ? "" : t.message());
    // The wall-time limit is raised so that the limit each row is about is the one hit, even on a
    // slow or sanitized build; the times printed are with the default limits otherwise.
    llmwb::TemplateRenderOptions o;
    o.max_seconds = contains(row.needle, "rendering time") ? 0.2 : 120;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = t->render(json::object(), o);
    const double s = seconds_since(t0);
    MT_REQUIRE_MSG(!r.ok(), "render should fail");
    MT_REQUIRE_MSG(contains(r.message(), row.needle), r.message());
    MT_CHECK_MSG(contains(r.message(), "line 1"), r.message());
    std::printf("    %s: %.3f s: %s\n", row.name.c_str(), s, r.message().c_str());
    // Nothing is left active on this thread after a render.
    MT_CHECK(jinja::active_budget() == nullptr);
}

MT_TEST(deepExpressionsAreRefusedAtParse) {
    // 300,000 chained `+`: refused while parsing, and nothing recurses a frame per link.
    std::string chain = "{{ 1" + repeat("+1", 300000) + " }}";
    auto a = ChatTemplate::parse(chain);
    MT_REQUIRE(!a.ok());
    MT_CHECK_MSG(contains(a.message(), "nested too deeply (over the limit of 256 levels)"),
                 a.message());
    auto filters = ChatTemplate::parse("{{ 'x'" + repeat("|string", 100000) + " }}");
    MT_REQUIRE(!filters.ok());
    MT_CHECK_MSG(contains(filters.message(), "256 levels"), filters.message());
    auto attrs = ChatTemplate::parse("{{ x" + repeat(".a", 100000) + " }}");
    MT_REQUIRE(!attrs.ok());
    MT_CHECK_MSG(contains(attrs.message(), "256 levels"), attrs.message());
    // Under the cap: parses and renders.
    auto ok = ChatTemplate::parse("{{ 1" + repeat(" + 1", 200) + " }}");
    MT_REQUIRE_MSG(ok.ok(), ok.ok() ? "" : ok.message());
    auto r = ok->render(json::object());
    MT_REQUIRE(r.ok());
    MT_COMPARE(*r, std::string("201"));
    // Sources past 1 MiB are refused before tokenizing.
    auto huge = ChatTemplate::parse(std::string((size_t(1) << 20) + 1, 'x'));
    MT_REQUIRE(!huge.ok());
    MT_CHECK_MSG(contains(huge.message(), "over the limit of 1 MiB"), huge.message());
}

MT_TEST(deepTreesAreFreedIteratively) {
    // A million-deep expression chain built by hand (deeper than any parse allows) and freed:
    // a recursive destructor would overflow an 8 MiB stack here.
    auto root = std::make_unique<jinja::Expr>();
    root->kind = jinja::ExprKind::Literal;
    for (int i = 0; i < 1000000; ++i) {
        auto b = std::make_unique<jinja::Expr>();
        b->kind = jinja::ExprKind::Binary;
        b->name = "+";
        b->a = std::move(root);
        b->b = std::make_unique<jinja::Expr>();
        b->b->kind = jinja::ExprKind::Literal;
        root = std::move(b);
    }
    MT_COMPARE(jinja::expr_height(*root), size_t(1000001));
    root.reset();
    MT_CHECK(root == nullptr);
}

MT_TEST(nestedBlocksCountTowardsTheDepth) {
    // A macro calling itself from inside 190 nested blocks: within the macro-call limit (64) it
    // recursed ~12,000 statement levels deep (SIGSEGV on an 8 MiB stack).
    auto t = ChatTemplate::parse("{% macro f(n) %}" + repeat("{% if true %}", 190) + "{{ f(n) }}" +
                                 repeat("{% endif %}", 190) + "{% endmacro %}{{ f(1) }}");
    MT_REQUIRE_MSG(t.ok(), t.ok() ? "" : t.message());
    auto r = t->render(json::object());
    MT_REQUIRE(!r.ok());
    MT_CHECK_MSG(contains(r.message(), "nested too deeply: exceeded the limit of 400 levels"),
                 r.message());
    // 150 nested blocks alone render.
    auto deep =
        ChatTemplate::parse(repeat("{% if true %}", 150) + "ok" + repeat("{% endif %}", 150));
    MT_REQUIRE(deep.ok());
    auto d = deep->render(json::object());
    MT_REQUIRE_MSG(d.ok(), d.ok() ? "" : d.message());
    MT_COMPARE(*d, std::string("ok"));
}

MT_TEST(namespaceChainsAreFreedIteratively) {
    // head.next = ns2, ns2.next = ns3, ... 300,000 links, then the head dropped in the middle
    // of the render: nothing is freed by a recursion one frame per link.
    auto t = ChatTemplate::parse(
        "{% set st = namespace(head=namespace()) %}{% set st.p = st.head %}"
        "{% for i in range(600) %}{% for j in range(500) %}"
        "{% set t = namespace() %}{% set cur = st.p %}{% set cur.next = t %}{% set st.p = t %}"
        "{% endfor %}{% endfor %}{% set st.head = none %}{% set st.p = none %}linked");
    MT_REQUIRE(t.ok());
    llmwb::TemplateRenderOptions o;
    o.max_seconds = 60; // the point is the teardown, not the clock
    auto r = t->render(json::object(), o);
    MT_REQUIRE_MSG(r.ok(), r.ok() ? "" : r.message());
    MT_COMPARE(*r, std::string("linked"));
}

MT_TEST(limitsAreErrorsNamingThem) {
    auto slow = jinja::parse_template(kSlow);
    MT_REQUIRE(slow.ok());
    const jinja::Value ctx = jinja::Value::dict({});

    jinja::RenderLimits time;
    time.max_seconds = 0.2;
    auto t0 = std::chrono::steady_clock::now();
    auto r = jinja::render_template(*slow, ctx, {}, time);
    MT_REQUIRE(!r.ok());
    MT_CHECK_MSG(contains(r.message(), "exceeded the limit of 0.2 s of rendering time"),
                 r.message());
    std::printf("    time limit 0.2 s: stopped after %.3f s\n", seconds_since(t0));

    jinja::RenderLimits steps;
    steps.max_steps = 1000;
    r = jinja::render_template(*slow, ctx, {}, steps);
    MT_REQUIRE(!r.ok());
    MT_CHECK_MSG(contains(r.message(), "exceeded the limit of 1000 evaluation steps"), r.message());

    jinja::RenderLimits bytes;
    bytes.max_alloc_bytes = 1000;
    auto concat = jinja::parse_template("{% set s = 'x' * 600 %}{{ s ~ s }}");
    MT_REQUIRE(concat.ok());
    r = jinja::render_template(*concat, ctx, {}, bytes);
    MT_REQUIRE(!r.ok());
    MT_CHECK_MSG(contains(r.message(), "exceeded the limit of 1000 bytes of strings and lists"),
                 r.message());
    bytes.max_alloc_bytes = 2000;
    r = jinja::render_template(*concat, ctx, {}, bytes);
    MT_REQUIRE_MSG(r.ok(), r.ok() ? "" : r.message());
    MT_COMPARE(r->size(), size_t(1200));

    jinja::RenderLimits depth;
    depth.max_eval_depth = 3;
    auto nested = jinja::parse_template("{{ ((1 + 2) + 3) + 4 }}");
    MT_REQUIRE(nested.ok());
    r = jinja::render_template(*nested, ctx, {}, depth);
    MT_REQUIRE(!r.ok());
    MT_CHECK_MSG(contains(r.message(), "exceeded the limit of 3 levels"), r.message());
}

MT_TEST(renderIsCancelledFromAnotherThread) {
    auto t = ChatTemplate::parse(kSlow);
    MT_REQUIRE(t.ok());
    std::atomic<bool> cancel{false};
    llmwb::ChatRenderOptions o;
    o.cancel = &cancel;
    o.max_seconds = 600; // only the cancel can end it within the test
    std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        cancel = true;
    });
    const auto t0 = std::chrono::steady_clock::now();
    auto r = llmwb::render_chat(*t, json::array({json{{"role", "user"}, {"content", "x"}}}), o);
    canceller.join();
    MT_REQUIRE(!r.ok());
    MT_CHECK_MSG(contains(r.message(), "rendering was cancelled"), r.message());
    std::printf("    cancelled after %.3f s (flag set at 0.1 s)\n", seconds_since(t0));
    // A flag already set stops the render at once; a clear one lets it finish.
    auto quick = ChatTemplate::parse("{% for i in range(1000) %}{{ i }}{% endfor %}");
    MT_REQUIRE(quick.ok());
    llmwb::TemplateRenderOptions q;
    q.cancel = &cancel;
    MT_CHECK(!quick->render(json::object(), q).ok());
    cancel = false;
    MT_CHECK(quick->render(json::object(), q).ok());
}

MT_TEST(repeatedRendersAreIndependent) {
    // Fuzzers call render many times in one process: a failed render leaves nothing behind.
    auto bad = ChatTemplate::parse("{{ 'x' * 100000000 }}");
    auto good = ChatTemplate::parse("{% for i in range(3) %}{{ 'ab' * 2 }}{% endfor %}");
    MT_REQUIRE(bad.ok() && good.ok());
    for (int i = 0; i < 3; ++i) {
        auto b = bad->render(json::object());
        MT_REQUIRE(!b.ok());
        MT_CHECK(contains(b.message(), kAllocLimit));
        auto g = good->render(json::object());
        MT_REQUIRE(g.ok());
        MT_COMPARE(*g, std::string("abababababab"));
    }
    MT_CHECK(jinja::active_budget() == nullptr);
}

MINI_TEST_MAIN()
