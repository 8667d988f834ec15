// The serving tests' shared model — written once per executable into a temporary folder that is
// removed at exit — and engines over it. A failure ends the current test (mini_test).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "engine/serving/engine.h"
#include "serving_test_model.h"
#include "support/mini_test.h"

namespace llmwb::test {

inline ServingTestModel& shared_serving_model() {
    static mini_test::TempDir dir;
    static std::unique_ptr<ServingTestModel> m = [] {
        std::string err;
        auto m = make_serving_test_model(dir.path(), &err);
        if (!m) {
            std::fprintf(stderr, "serving test model: %s\n", err.c_str());
            std::exit(1);
        }
        return m;
    }();
    return *m;
}

inline std::unique_ptr<Engine> serving_engine(const EngineConfig& c) {
    auto e =
        Engine::create(*shared_serving_model().transformer, *shared_serving_model().tokenizer, c);
    MT_REQUIRE_MSG(e.ok(), "engine: %s", e.ok() ? "" : e.message().c_str());
    return std::move(e.value());
}

} // namespace llmwb::test
