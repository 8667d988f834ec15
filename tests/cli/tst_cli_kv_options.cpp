// The KV-cache device options (app/cli/cli_options): --kv-cache-dtype with every type and vLLM's
// aliases, --kv-dtype as its alias, auto, --calculate-kv-scales, the hidden int8 experiment, and
// the errors (naming the value and the choices). Qt-free.
#include <cmath>
#include <string>
#include <vector>

#include "app/cli/cli_options.h"
#include "app/cli/kv_int8_experiment.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::cli;

namespace {

Result<DeviceOptions> parse(const std::vector<std::string>& argv) {
    auto args = device_option_names().parse(argv);
    if (!args)
        return args.error();
    return parse_device_options(*args);
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

struct Row {
    std::string name; // the value given
    KvDtype want;
};

std::vector<Row> rows() {
    return {{"f32", KvDtype::F32},          {"f16", KvDtype::F16},
            {"bf16", KvDtype::BF16},        {"fp8", KvDtype::Fp8E4M3},
            {"fp8_e4m3", KvDtype::Fp8E4M3}, {"fp8_e5m2", KvDtype::Fp8E5M2},
            {"int8", KvDtype::Int8},        {"float16", KvDtype::F16},
            {"bfloat16", KvDtype::BF16},    {"float32", KvDtype::F32}};
}

} // namespace

MT_TEST_TABLE(kv_cache_dtype_and_its_alias, Row, rows()) {
    for (const char* flag : {"--kv-cache-dtype", "--kv-dtype"}) {
        auto o = parse({flag, row.name});
        MT_REQUIRE_MSG(o.ok(), "%s %s: %s", flag, row.name.c_str(),
                       o.ok() ? "" : o.message().c_str());
        MT_REQUIRE(o->kv_dtype.has_value());
        MT_COMPARE(*o->kv_dtype, row.want);
        MT_CHECK(!o->calculate_kv_scales);
    }
    auto eq = parse({"--kv-cache-dtype=" + row.name});
    MT_REQUIRE(eq.ok());
    MT_COMPARE(*eq->kv_dtype, row.want);
}

MT_TEST(auto_is_the_backends_default) {
    for (const std::vector<std::string>& argv :
         {std::vector<std::string>{}, {"--kv-cache-dtype", "auto"}, {"--kv-dtype", "auto"}}) {
        auto o = parse(argv);
        MT_REQUIRE(o.ok());
        MT_CHECK(!o->kv_dtype.has_value());
        MT_COMPARE(kv_dtype_option_name(o->kv_dtype), std::string("auto"));
    }
    MT_COMPARE(kv_dtype_option_name(KvDtype::Int8), std::string("int8"));
}

MT_TEST(bad_values_name_the_value_and_the_choices) {
    for (const char* flag : {"--kv-cache-dtype", "--kv-dtype"}) {
        for (const char* bad : {"int4", "FP8", "", "f8"}) {
            auto o = parse({flag, bad});
            MT_REQUIRE(!o.ok());
            MT_CHECK_MSG(contains(o.message(), flag), "%s", o.message().c_str());
            MT_CHECK_MSG(contains(o.message(), "'" + std::string(bad) + "'"), "%s",
                         o.message().c_str());
            MT_CHECK_MSG(contains(o.message(), kv_dtype_choices()), "%s", o.message().c_str());
        }
    }
    auto both = parse({"--kv-cache-dtype", "f16", "--kv-dtype", "f16"});
    MT_REQUIRE(!both.ok());
    MT_CHECK(contains(both.message(), "alias"));
}

MT_TEST(calculate_kv_scales_needs_fp8) {
    for (const char* t : {"fp8", "fp8_e4m3", "fp8_e5m2"}) {
        auto o = parse({"--kv-cache-dtype", t, "--calculate-kv-scales"});
        MT_REQUIRE(o.ok());
        MT_CHECK(o->calculate_kv_scales);
    }
    for (const std::vector<std::string>& argv :
         {std::vector<std::string>{"--calculate-kv-scales"},
          {"--calculate-kv-scales", "--kv-cache-dtype", "int8"},
          {"--calculate-kv-scales", "--kv-cache-dtype", "f16"}}) {
        auto o = parse(argv);
        MT_REQUIRE(!o.ok());
        MT_CHECK_MSG(contains(o.message(), "--calculate-kv-scales needs an fp8"), "%s",
                     o.message().c_str());
    }
}

MT_TEST(int8_experiment_is_cpu_and_f32_only) {
    auto o = parse({"--kv-int8-experiment", "kchannel"});
    MT_REQUIRE(o.ok());
    MT_COMPARE(o->int8_experiment, KvInt8Experiment::KeyChannel);
    MT_COMPARE(o->device, DevicePreference::Cpu);
    MT_COMPARE(std::string(kv_int8_experiment_name(o->int8_experiment)), std::string("kchannel"));
    // Without --kv-cache-dtype the pool is f32 (the CPU's auto, f16, cannot carry the simulation).
    MT_REQUIRE(o->kv_dtype.has_value());
    MT_COMPARE(*o->kv_dtype, KvDtype::F32);
    auto t = parse({"--kv-int8-experiment", "token", "--kv-cache-dtype", "f32"});
    MT_REQUIRE(t.ok());
    MT_COMPARE(t->int8_experiment, KvInt8Experiment::Token);
    MT_CHECK(!parse({"--kv-int8-experiment", "token", "--kv-cache-dtype", "int8"}).ok());
    MT_CHECK(!parse({"--kv-int8-experiment", "token", "--device", "cuda"}).ok());
    auto bad = parse({"--kv-int8-experiment", "group"});
    MT_REQUIRE(!bad.ok());
    MT_CHECK(contains(bad.message(), "'group'"));
}

// The simulated variants on a hand-made block: a key channel with an outlier keeps the other
// channels exact under kchannel, not under token; nothing changes before the block is full.
MT_TEST(int8_experiment_quantizes_full_blocks_by_its_grouping) {
    ModelConfig c;
    c.num_layers = 1;
    c.num_kv_heads = 2;
    c.head_dim = 4;
    c.num_heads = 2;
    c.hidden_size = 8;
    auto kv = KvCacheStorage::create(c, 2, 8);
    MT_REQUIRE(kv.ok());
    KvCacheStorage& s = **kv;
    auto fill = [&] {
        for (int64_t slot = 0; slot < 16; ++slot)
            for (int64_t i = 0; i < s.slot_stride(); ++i) {
                // channel 0 an outlier (100), the others small and varied
                s.k_slot(0, slot)[i] = i == 0 ? 100.0f : 0.01f * static_cast<float>(i + slot);
                s.v_slot(0, slot)[i] = 0.5f + 0.01f * static_cast<float>(i);
            }
    };
    ForwardBatch partial;
    partial.slot_mapping = {0, 1, 2}; // block 0 not full
    ForwardBatch full;
    full.slot_mapping = {5, 6, 7};       // fills block 0 (block size 8)
    const float exact = 0.01f * (3 + 2); // K of slot 2, channel 3
    fill();
    apply_kv_int8_experiment(KvInt8Experiment::Token, s, partial);
    MT_COMPARE(s.k_slot(0, 2)[3], exact);
    apply_kv_int8_experiment(KvInt8Experiment::Token, s, full);
    // one scale per token over both heads: 100 / 127 per step, so 0.05 becomes 0
    MT_COMPARE(s.k_slot(0, 2)[3], 0.0f);
    MT_CHECK(std::fabs(s.k_slot(0, 2)[0] - 100.0f) < 1e-4f);
    MT_COMPARE(s.k_slot(0, 9)[3], 0.01f * (3 + 9)); // block 1 untouched
    fill();
    apply_kv_int8_experiment(KvInt8Experiment::TokenHead, s, full);
    // head 0 holds the outlier; head 1 (channels 4..7) has its own scale
    MT_COMPARE(s.k_slot(0, 2)[3], 0.0f);
    MT_CHECK(std::fabs(s.k_slot(0, 2)[5] - 0.01f * 7) < 0.01f * 11 / 127 + 1e-6f);
    fill();
    apply_kv_int8_experiment(KvInt8Experiment::KeyChannel, s, full);
    // channel 3 over the block: amax 0.01 * (3 + 7), error at most half a step
    MT_CHECK(std::fabs(s.k_slot(0, 2)[3] - exact) <= 0.5f * 0.1f / 127 + 1e-6f);
    MT_CHECK(s.k_slot(0, 2)[3] != 0.0f);
    MT_CHECK(std::fabs(s.k_slot(0, 2)[0] - 100.0f) < 1e-4f);
}

MINI_TEST_MAIN()
