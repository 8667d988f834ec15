// mini_test: a Qt-free test harness for the executables that must build where Qt is missing (the
// GPU machine). Header-only.
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

inline std::vector<Case>& registry() {
    static std::vector<Case> cases;
    return cases;
}

struct Registrar {
    Registrar(const char* name, void (*fn)()) { registry().push_back(Case{name, fn, {}}); }
};

struct Skip {
    std::string reason;
};
struct Abort {}; // a failed MT_REQUIRE ends the current test

inline int& failures() {
    static int n = 0;
    return n;
}

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
inline RunState& run_state() {
    static RunState s;
    return s;
}

// True when the running test (or row) has recorded a failure (QTest::currentTestFailed()).
inline bool current_test_failed() {
    return failures() > run_state().failures_at_start;
}

constexpr int kMaxPrintedFailuresPerTest = 25;

inline void report_failure(const char* file, int line, const char* expr, const std::string& msg,
                           const std::string& details = {}) {
    ++failures();
    RunState& st = run_state();
    if (++st.printed > kMaxPrintedFailuresPerTest) {
        if (st.printed == kMaxPrintedFailuresPerTest + 1)
            std::fprintf(stderr, "FAIL [%s]: more failures in this test, not printed\n",
                         st.test.c_str());
        return;
    }
    std::string where;
    if (!st.test.empty())
        where = "[" + st.test + "] ";
    for (const ScopeLabel& s : st.scopes)
        where += "(" + s.text(s.scope) + ") ";
    std::fprintf(stderr, "FAIL %s%s:%d: %s%s%s\n%s", where.c_str(), file, line, expr,
                 msg.empty() ? "" : ": ", msg.c_str(), details.c_str());
}

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

inline std::string quoted(std::string_view s) {
    constexpr size_t kMax = 300;
    std::string out = "\"";
    for (size_t i = 0; i < s.size() && i < kMax; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '\\' || c == '"') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c < 0x20 || c == 0x7F) {
            out += format("\\x%02X", c);
        } else {
            out += static_cast<char>(c); // UTF-8 passes through
        }
    }
    out += '"';
    if (s.size() > kMax)
        out += format("... (%zu bytes)", s.size());
    return out;
}

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

// The body of MT_COMPARE: true when equal; otherwise reports the failure with both values.
template <class A, class E>
bool compare(const A& actual, const E& expected, const char* actual_expr, const char* expected_expr,
             const char* file, int line) {
    if (values_equal(actual, expected))
        return true;
    const auto a = to_text(actual);
    const auto e = to_text(expected);
    std::string details;
    if (a && e)
        details = "   actual   (" + std::string(actual_expr) + "): " + *a + "\n   expected (" +
                  std::string(expected_expr) + "): " + *e + "\n";
    report_failure(file, line,
                   ("MT_COMPARE(" + std::string(actual_expr) + ", " + expected_expr + ")").c_str(),
                   a && e ? "" : "values differ (value not printable)", details);
    return false;
}

// ---- helpers ------------------------------------------------------------------------------

inline std::string env_or(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

// The fetched test assets (scripts/fetch-test-assets.sh): $LLMWB_TEST_ASSETS (set by ctest),
// else ~/.cache/llmwb/test-assets.
inline std::string assets_dir() {
    return env_or("LLMWB_TEST_ASSETS", env_or("HOME", ".") + "/.cache/llmwb/test-assets");
}

// The whole file, or nullopt when it cannot be read.
inline std::optional<std::string> read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return std::nullopt;
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// Replaces the file's contents; false when it cannot be written.
inline bool write_file(const std::string& path, std::string_view content) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
    return static_cast<bool>(f);
}

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction
// (QTemporaryDir). valid() is false when it could not be created.
class TempDir {
  public:
    explicit TempDir(const std::string& prefix = "llmwb-test") {
        std::error_code ec;
        std::filesystem::path base = std::filesystem::temp_directory_path(ec);
        if (ec)
            base = "/tmp";
        std::string templ = (base / (prefix + "-XXXXXX")).string();
        if (mkdtemp(templ.data()))
            path_ = templ;
    }
    ~TempDir() {
        if (!path_.empty()) {
            std::error_code ec;
            std::filesystem::remove_all(path_, ec);
        }
    }
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
inline char run_case(const Case& c) {
    RunState& st = run_state();
    st.test = c.name;
    st.scopes.clear();
    st.printed = 0;
    st.failures_at_start = failures();
    std::printf("RUN  %s\n", c.name.c_str());
    std::fflush(stdout);
    char result = 'p';
    try {
        c.fn();
    } catch (const Skip& s) {
        std::printf("SKIPPED: %s (%s)\n", s.reason.c_str(), c.name.c_str());
        result = 's';
    } catch (const Abort&) {
    } catch (const std::exception& e) {
        report_failure(__FILE__, __LINE__, "unexpected exception", e.what());
    } catch (...) {
        report_failure(__FILE__, __LINE__, "unexpected exception", "not a std::exception");
    }
    if (result != 's')
        result = current_test_failed() ? 'f' : 'p';
    std::fflush(stderr);
    if (result == 'f')
        std::printf("FAIL %s\n", c.name.c_str());
    else if (result == 'p')
        std::printf("OK   %s\n", c.name.c_str());
    std::fflush(stdout);
    st.test.clear();
    st.scopes.clear();
    return result;
}

inline int run_all(int argc, char** argv) {
    const bool list = argc > 1 && std::string_view(argv[1]) == "--list";
    const char* only = argc > 1 && !list ? argv[1] : nullptr;
    int passed = 0, skipped = 0, failed = 0, matched = 0;
    for (const Case& entry : registry()) {
        std::vector<Case> cases;
        if (entry.expand) {
            run_state().test = entry.name;
            try {
                cases = entry.expand();
            } catch (const std::exception& e) {
                report_failure(__FILE__, __LINE__, "rows of a table test threw", e.what());
                ++failed;
                continue;
            }
            run_state().test.clear();
        } else {
            cases.push_back(entry);
        }
        for (const Case& c : cases) {
            if (only && c.name.find(only) == std::string::npos)
                continue;
            ++matched;
            if (list) {
                std::printf("%s\n", c.name.c_str());
                continue;
            }
            switch (run_case(c)) {
            case 'p':
                ++passed;
                break;
            case 's':
                ++skipped;
                break;
            default:
                ++failed;
            }
        }
    }
    if (list)
        return 0;
    std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    if (only && matched == 0) {
        std::printf("no test name contains '%s'\n", only);
        return 1;
    }
    if (failed > 0 || failures() > 0)
        return 1;
    return skipped > 0 ? 77 : 0;
}

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
