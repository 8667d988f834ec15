// mini_test: a Qt-free test harness for the executables that must build where Qt is missing (the
// GPU machine). Header-only.
//
//   MT_TEST(name) { MT_CHECK(a == b); MT_CHECK_MSG(x < 1e-3, "err %g", x); MT_REQUIRE(p); }
//   MT_SKIP("no CUDA device")   // ends the current test as skipped
//   MINI_TEST_MAIN()            // once per executable
//
// Exit code: 1 if any check failed; otherwise 77 (ctest SKIPPED, with SKIP_RETURN_CODE 77) if any
// test skipped; otherwise 0. Every skip prints "SKIPPED: <reason>".
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace llmwb::mini_test {

struct Case {
    const char* name;
    void (*fn)();
};

inline std::vector<Case>& registry() {
    static std::vector<Case> cases;
    return cases;
}

struct Registrar {
    Registrar(const char* name, void (*fn)()) { registry().push_back(Case{name, fn}); }
};

struct Skip {
    std::string reason;
};
struct Abort {}; // a failed MT_REQUIRE ends the current test

inline int& failures() {
    static int n = 0;
    return n;
}

inline void report_failure(const char* file, int line, const char* expr, const std::string& msg) {
    ++failures();
    std::fprintf(stderr, "FAIL %s:%d: %s%s%s\n", file, line, expr, msg.empty() ? "" : ": ",
                 msg.c_str());
}

inline std::string format() { return {}; }
inline std::string format(const char* text) { return text; }
template <class A0, class... A>
std::string format(const char* fmt, A0 a0, A... args) {
    char buf[1024];
    std::snprintf(buf, sizeof buf, fmt, a0, args...);
    return buf;
}

inline int run_all(int argc, char** argv) {
    const char* only = argc > 1 ? argv[1] : nullptr;
    int passed = 0, skipped = 0, failed = 0;
    for (const Case& c : registry()) {
        if (only && std::string(c.name).find(only) == std::string::npos)
            continue;
        const int before = failures();
        std::printf("RUN  %s\n", c.name);
        std::fflush(stdout);
        try {
            c.fn();
        } catch (const Skip& s) {
            std::printf("SKIPPED: %s (%s)\n", s.reason.c_str(), c.name);
            ++skipped;
            continue;
        } catch (const Abort&) {
        } catch (const std::exception& e) {
            report_failure(__FILE__, __LINE__, "unexpected exception", e.what());
        }
        if (failures() > before) {
            ++failed;
            std::printf("FAIL %s\n", c.name);
        } else {
            ++passed;
            std::printf("OK   %s\n", c.name);
        }
    }
    std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    if (failed > 0)
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

#define MT_SKIP(reason) throw ::llmwb::mini_test::Skip{std::string(reason)}

#define MINI_TEST_MAIN()                                                                           \
    int main(int argc, char** argv) { return ::llmwb::mini_test::run_all(argc, argv); }
