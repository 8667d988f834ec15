// mini_test: a Qt-free test harness for the executables that must build where Qt is missing (the
// GPU machine). The runner and helpers are compiled once (mini_test.cpp, library llmwb_mini_test:
// llmwb_link_mini_test in cmake/LlmwbTest.cmake, which llmwb_add_plain_test and llmwb_add_test
// call; a target made another way that compiles a file using this header calls it itself).
//
//   MT_TEST(name) { MT_CHECK(a == b); MT_CHECK_MSG(x < 1e-3, "err %g", x); MT_REQUIRE(p); }
//   MT_COMPARE(actual, expected)          // prints both values on failure; goes on
//   MT_REQUIRE_COMPARE(actual, expected)  // ... and ends the current test (case or row)
//   MT_SKIP("no CUDA device")             // ends the current test (case or row) as skipped
//   MINI_TEST_MAIN()                      // once per executable
//
// Checks (MT_CHECK, MT_CHECK_MSG, MT_COMPARE) record a failure and go on; requirements
// (MT_REQUIRE, MT_REQUIRE_MSG, MT_REQUIRE_COMPARE, MT_FAIL) record it and end the current test,
// as a failed QVERIFY/QCOMPARE did. Messages take printf arguments or one std::string.
//
// MT_COMPARE compares like QCOMPARE: floating-point values (float/double, both sides) compare
// fuzzily exactly as QCOMPARE does (relative 1e-5 for float, 1e-12 for double; an expected value
// near zero wants an actual value near zero; NaN equals NaN; infinities by sign); const char*
// compares the strings; everything else with ==. On failure it prints both values: numbers,
// bools, enums (as integers), strings (escaped, shortened), optionals, pairs and containers
// (vector, map, ...) of printable values; other types print as "(value not printable)". Use
// MT_CHECK(a == b) for exact floats.
//
// Table-driven tests (what QFETCH and _data functions did): every row is a test of its own,
// named "test/row", run, counted, skipped and reported separately.
//
//   struct Row { std::string name; int n; double bound; };
//   std::vector<Row> rows() { return {{"small", 1, 0.1}, {"large", 1000, 0.01}}; }
//   MT_TEST_TABLE(roundTrip, Row, rows()) { MT_CHECK(f(row.n) < row.bound); }
//
// The rows expression runs when the table's turn comes (not at static initialization), so it may
// read files or a lazily built fixture. Row needs a `name`. A table with no rows is a failure.
// A skip (MT_SKIP) or a failed requirement ends only the current row.
// Inside loops, MT_SCOPE("n %d", n) names the iteration in every failure message of the
// enclosing block.
//
// Helpers: TempDir (a fresh directory under $TMPDIR, removed with its contents), env_or(),
// assets_dir() (LLMWB_TEST_ASSETS, set by ctest), read_file() / write_file(),
// current_test_failed().
//
// Command line: `exe [substring]` runs the tests (and rows) whose full name contains the
// substring; `exe --list` prints the names.
// Exit code: 1 if any check failed (or the substring matched nothing); otherwise 77 (ctest
// SKIPPED, with SKIP_RETURN_CODE 77) if any test skipped; otherwise 0. Every skip prints
// "SKIPPED: <reason>".
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include <stdlib.h> // mkdtemp

namespace llmwb::mini_test {

struct Case {
    std::string name;
    std::function<void()> fn;
    // A table test: expands into one case per row when the run starts.
    std::function<std::vector<Case>()> expand;
};

std::vector<Case>& registry();

struct Registrar {
    Registrar(const char* name, void (*fn)()) { registry().push_back(Case{name, fn, {}}); }
};

struct Skip {
    std::string reason;
};
struct Abort {}; // a failed MT_REQUIRE ends the current test

int& failures();

// What the current failure messages are about: the running test (with its row) and the
// MT_SCOPE labels of the enclosing blocks. printed caps the messages of one test.
struct ScopeLabel {
    const void* scope;
    std::string (*text)(const void* scope);
};
struct RunState {
    std::string test;
    std::vector<ScopeLabel> scopes;
    int printed = 0;
    int failures_at_start = 0;
};
RunState& run_state();

// True when the running test (or row) has recorded a failure (QTest::currentTestFailed()).
inline bool current_test_failed() {
    return failures() > run_state().failures_at_start;
}

constexpr int kMaxPrintedFailuresPerTest = 25;

void report_failure(const char* file, int line, const char* expr, const std::string& msg,
                    const std::string& details = {});

inline std::string format() {
    return {};
}
inline std::string format(const char* text) {
    return text;
}
inline std::string format(const std::string& text) {
    return text;
}
template <class A0, class... A> std::string format(const char* fmt, A0 a0, A... args) {
    const int n = std::snprintf(nullptr, 0, fmt, a0, args...);
    if (n <= 0)
        return {};
    std::string out(static_cast<size_t>(n) + 1, '\0');
    std::snprintf(out.data(), out.size(), fmt, a0, args...);
    out.resize(static_cast<size_t>(n));
    return out;
}

// Names the iterations of a loop in failure messages (MT_SCOPE). The label is formatted only
// when a failure is reported, so a scope in a hot loop costs next to nothing.
template <class Label> class Scope {
  public:
    explicit Scope(Label label) : label_(std::move(label)) {
        run_state().scopes.push_back(ScopeLabel{this, &text});
    }
    ~Scope() { run_state().scopes.pop_back(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

  private:
    static std::string text(const void* self) { return static_cast<const Scope*>(self)->label_(); }
    Label label_;
};

// ---- values for MT_COMPARE ----------------------------------------------------------------

// s in double quotes, escaped, at most 300 bytes of it.
std::string quoted(std::string_view s);

template <class T> std::optional<std::string> to_text(const T& v);

template <class T> std::optional<std::string> to_text_impl(const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
        return std::string(v ? "true" : "false");
    } else if constexpr (std::is_same_v<T, char>) {
        return format("'%c' (%d)", v >= 0x20 && v < 0x7F ? v : '?', static_cast<int>(v));
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        return format("%lld", static_cast<long long>(v));
    } else if constexpr (std::is_integral_v<T>) {
        return format("%llu", static_cast<unsigned long long>(v));
    } else if constexpr (std::is_same_v<T, float>) {
        return format("%.9g", static_cast<double>(v));
    } else if constexpr (std::is_floating_point_v<T>) {
        return format("%.17g", static_cast<double>(v));
    } else if constexpr (std::is_enum_v<T>) {
        return to_text_impl(static_cast<std::underlying_type_t<T>>(v));
    } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
        if constexpr (std::is_pointer_v<T>) {
            if (v == nullptr)
                return std::string("(null)");
        }
        return quoted(std::string_view(v));
    } else if constexpr (std::is_pointer_v<T> || std::is_null_pointer_v<T>) {
        return format("%p", static_cast<const void*>(v));
    } else if constexpr (requires {
                             v.first;
                             v.second;
                         }) {
        auto a = to_text(v.first);
        auto b = to_text(v.second);
        if (!a || !b)
            return std::nullopt;
        return "(" + *a + ", " + *b + ")";
    } else if constexpr (requires {
                             v.has_value();
                             *v;
                         }) {
        if (!v.has_value())
            return std::string("nullopt");
        auto inner = to_text(*v);
        if (!inner)
            return std::nullopt;
        return "optional(" + *inner + ")";
    } else if constexpr (requires {
                             v.size();
                             v.begin();
                             v.end();
                         }) {
        constexpr size_t kMax = 32;
        std::string out = "[";
        size_t i = 0;
        for (const auto& e : v) {
            if (i == kMax) {
                out += format(", ... (%zu elements)", static_cast<size_t>(v.size()));
                break;
            }
            auto t = to_text(e);
            if (!t)
                return std::nullopt;
            out += (i ? ", " : "") + *t;
            ++i;
        }
        return out + "]";
    } else {
        return std::nullopt;
    }
}

template <class T> std::optional<std::string> to_text(const T& v) {
    return to_text_impl<std::remove_cvref_t<T>>(v);
}

// QCOMPARE's floating-point equality (qFuzzyCompare / qFuzzyIsNull of Qt 6).
template <class F> bool fuzzy_equal(F actual, F expected) {
    constexpr F kScale = std::is_same_v<F, float> ? F(100000) : F(1000000000000.0);
    constexpr F kNull = std::is_same_v<F, float> ? F(0.00001) : F(0.000000000001);
    switch (std::fpclassify(expected)) {
    case FP_INFINITE:
        return (expected < 0) == (actual < 0) && std::fpclassify(actual) == FP_INFINITE;
    case FP_NAN:
        return std::isnan(actual);
    case FP_NORMAL:
        if (!(std::fabs(expected) <= kNull))
            return std::fabs(actual - expected) * kScale <=
                   std::min(std::fabs(actual), std::fabs(expected));
        [[fallthrough]];
    default: // zero, subnormal, or normal but fuzzily null
        return std::fabs(actual) <= kNull;
    }
}

template <class A, class E> bool values_equal(const A& a, const E& e) {
    if constexpr (std::is_floating_point_v<A> && std::is_floating_point_v<E>) {
        if constexpr (std::is_same_v<A, float> && std::is_same_v<E, float>)
            return fuzzy_equal<float>(a, e);
        else
            return fuzzy_equal<double>(static_cast<double>(a), static_cast<double>(e));
    } else if constexpr (std::is_convertible_v<A, const char*> &&
                         std::is_convertible_v<E, const char*> &&
                         std::is_pointer_v<std::decay_t<A>> && std::is_pointer_v<std::decay_t<E>>) {
        const char* x = a;
        const char* y = e;
        return (x && y) ? std::strcmp(x, y) == 0 : x == y;
    } else {
        return a == e;
    }
}

// MT_COMPARE's failure: both values (nullopt: not printable) and expressions.
void report_compare_failure(const std::optional<std::string>& actual,
                            const std::optional<std::string>& expected, const char* actual_expr,
                            const char* expected_expr, const char* file, int line);

// The body of MT_COMPARE: true when equal; otherwise reports the failure with both values.
template <class A, class E>
bool compare(const A& actual, const E& expected, const char* actual_expr, const char* expected_expr,
             const char* file, int line) {
    if (values_equal(actual, expected))
        return true;
    report_compare_failure(to_text(actual), to_text(expected), actual_expr, expected_expr, file,
                           line);
    return false;
}

// ---- helpers ------------------------------------------------------------------------------

std::string env_or(const char* name, const std::string& fallback);

// The fetched test assets (scripts/fetch-test-assets.sh): $LLMWB_TEST_ASSETS (set by ctest),
// else ~/.cache/llmwb/test-assets.
std::string assets_dir();

// The whole file, or nullopt when it cannot be read.
std::optional<std::string> read_file(const std::string& path);

// Replaces the file's contents; false when it cannot be written.
bool write_file(const std::string& path, std::string_view content);

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction
// (QTemporaryDir). valid() is false when it could not be created.
class TempDir {
  public:
    explicit TempDir(const std::string& prefix = "llmwb-test");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    bool valid() const { return !path_.empty(); }
    const std::string& path() const { return path_; }
    // path() + "/" + name (QTemporaryDir::filePath).
    std::string file(const std::string& name) const { return path_ + "/" + name; }

  private:
    std::string path_;
};

// ---- table tests and the runner -----------------------------------------------------------

template <class Row> std::string row_name(const Row& r) {
    return std::string(r.name);
}

template <class Row> struct TableRegistrar {
    TableRegistrar(const char* name, std::function<std::vector<Row>()> rows,
                   void (*fn)(const Row&)) {
        const std::string test = name;
        registry().push_back(Case{
            test, {}, [test, rows, fn] {
                auto all = std::make_shared<std::vector<Row>>(rows());
                std::vector<Case> out;
                for (size_t i = 0; i < all->size(); ++i)
                    out.push_back(Case{
                        test + "/" + row_name((*all)[i]), [all, i, fn] { fn((*all)[i]); }, {}});
                if (out.empty())
                    out.push_back(Case{test,
                                       [] {
                                           report_failure(__FILE__, __LINE__, "MT_TEST_TABLE",
                                                          "the table has no rows");
                                       },
                                       {}});
                return out;
            }});
    }
};

// Runs one test (or row); returns 'p'assed, 'f'ailed or 's'kipped.
char run_case(const Case& c);

int run_all(int argc, char** argv);

} // namespace llmwb::mini_test

#define MT_CONCAT2(a, b) a##b
#define MT_CONCAT(a, b) MT_CONCAT2(a, b)

#define MT_TEST(name)                                                                              \
    static void name();                                                                            \
    static ::llmwb::mini_test::Registrar MT_CONCAT(mt_reg_, name)(#name, &name);                   \
    static void name()

// One test per row of rows_expr (a std::vector<Row>, Row with a `name`); the body sees `row`.
#define MT_TEST_TABLE(name, Row, rows_expr)                                                        \
    static void name(const Row& row);                                                              \
    static ::llmwb::mini_test::TableRegistrar<Row> MT_CONCAT(mt_reg_, name)(                       \
        #name, [] { return std::vector<Row>(rows_expr); }, &name);                                 \
    static void name([[maybe_unused]] const Row& row)

// Labels every failure message of the enclosing block: MT_SCOPE("n %d", n).
#define MT_SCOPE(...)                                                                              \
    ::llmwb::mini_test::Scope MT_CONCAT(mt_scope_, __LINE__)(                                      \
        [&] { return ::llmwb::mini_test::format(__VA_ARGS__); })

#define MT_CHECK(cond)                                                                             \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ::llmwb::mini_test::report_failure(__FILE__, __LINE__, #cond, {});                     \
    } while (0)

#define MT_CHECK_MSG(cond, ...)                                                                    \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ::llmwb::mini_test::report_failure(__FILE__, __LINE__, #cond,                          \
                                               ::llmwb::mini_test::format(__VA_ARGS__));           \
    } while (0)

#define MT_REQUIRE(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            ::llmwb::mini_test::report_failure(__FILE__, __LINE__, #cond, {});                     \
            throw ::llmwb::mini_test::Abort{};                                                     \
        }                                                                                          \
    } while (0)

#define MT_REQUIRE_MSG(cond, ...)                                                                  \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            ::llmwb::mini_test::report_failure(__FILE__, __LINE__, #cond,                          \
                                               ::llmwb::mini_test::format(__VA_ARGS__));           \
            throw ::llmwb::mini_test::Abort{};                                                     \
        }                                                                                          \
    } while (0)

#define MT_COMPARE(actual, expected)                                                               \
    do {                                                                                           \
        ::llmwb::mini_test::compare((actual), (expected), #actual, #expected, __FILE__, __LINE__); \
    } while (0)

#define MT_REQUIRE_COMPARE(actual, expected)                                                       \
    do {                                                                                           \
        if (!::llmwb::mini_test::compare((actual), (expected), #actual, #expected, __FILE__,       \
                                         __LINE__))                                                \
            throw ::llmwb::mini_test::Abort{};                                                     \
    } while (0)

// Fails and ends the current test (QFAIL).
#define MT_FAIL(...)                                                                               \
    do {                                                                                           \
        ::llmwb::mini_test::report_failure(__FILE__, __LINE__, "MT_FAIL",                          \
                                           ::llmwb::mini_test::format(__VA_ARGS__));               \
        throw ::llmwb::mini_test::Abort{};                                                         \
    } while (0)

#define MT_SKIP(reason)                                                                            \
    throw ::llmwb::mini_test::Skip {                                                               \
        std::string(reason)                                                                        \
    }

#define MINI_TEST_MAIN()                                                                           \
    int main(int argc, char** argv) {                                                              \
        return ::llmwb::mini_test::run_all(argc, argv);                                            \
    }
