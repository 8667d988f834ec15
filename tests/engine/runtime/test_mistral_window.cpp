// Mistral with a sliding window (issue 18): config.json `sliding_window` (model_type mistral)
// gives every layer a window; the forward pass over paged KV matches the double-precision
// reference with that window; a GGUF file of the same weights carries no window key and runs
// full attention (as llama.cpp does), equal to the windowed model until the window is full and
// different after; null, absent, 0 and context-wide windows mean none; a bad value is an error.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/model/loaded_model.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/runtime/forward_batch.h"
#include "engine/runtime/kv_cache_storage.h"
#include "kernels/cpu/thread_pool.h"
#include "reference_model.h"
#include "runtime_test_models.h"
#include "support/mini_test.h"

using namespace llmwb;
using namespace llmwb::test;

namespace {

constexpr int kWindow = 16;

struct Fixture {
    mini_test::TempDir dir;
    kernels::ThreadPool pool{2};
    std::unique_ptr<LoadedModel> st, gguf;
};

Fixture& fx() {
    static Fixture f;
    return f;
}

ModelWriterSpec mistral_spec(ModelFileFormat format) {
    ModelWriterSpec s = spec_for(Shape::Llama, format, WeightType::F32);
    s.sliding_window = kWindow;
    s.embedding_std = 0.3f;
    return s;
}

const LoadedModel& model(ModelFileFormat f) {
    Fixture& x = fx();
    std::unique_ptr<LoadedModel>& m = f == ModelFileFormat::Gguf ? x.gguf : x.st;
    if (!m) {
        std::string err;
        m = write_and_load(mistral_spec(f), x.dir.path(),
                           f == ModelFileFormat::Gguf ? "mistral-gguf" : "mistral-st", &err);
        MT_REQUIRE_MSG(m != nullptr, "%s", err.c_str());
    }
    return *m;
}

std::vector<int32_t> make_prompt(int n, int32_t vocab) {
    std::vector<int32_t> ids;
    uint64_t s = 77;
    for (int i = 0; i < n; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        ids.push_back(static_cast<int32_t>((s >> 33) % static_cast<uint64_t>(vocab)));
    }
    return ids;
}

// Logits of every position: prefill of n - 6 tokens then 6 decode steps, scattered blocks.
std::vector<std::vector<float>> logits_of(const LoadedModel& m, const std::vector<int32_t>& ids,
                                          int32_t bs) {
    CpuTransformer tf(m, fx().pool);
    const int32_t n = int32_t(ids.size()), V = tf.vocab_size(), nb = n / bs + 3;
    KvCacheStorage kv(m.config, nb, bs);
    std::vector<int32_t> table;
    for (int32_t i = 0; i < (n + bs - 1) / bs; ++i) // from the pool's end backwards
        table.push_back(nb - 1 - i);
    std::vector<std::vector<float>> out;
    std::vector<float> buf(size_t(n) * V);
    ForwardBatch b;
    const int32_t pre = n - 6;
    b.add_sequence(std::span(ids).first(size_t(pre)), 0, table, bs, ForwardBatch::Logits::All);
    MT_REQUIRE(b.validate(bs, nb).ok());
    tf.forward(b, kv, buf.data());
    for (int32_t i = 0; i < pre; ++i)
        out.emplace_back(buf.begin() + size_t(i) * V, buf.begin() + size_t(i + 1) * V);
    for (int32_t p = pre; p < n; ++p) {
        b.clear();
        b.add_sequence(std::span(ids).subspan(size_t(p), 1), p, table, bs,
                       ForwardBatch::Logits::Last);
        tf.forward(b, kv, buf.data());
        out.emplace_back(buf.begin(), buf.begin() + V);
    }
    return out;
}

double rel_diff(const std::vector<float>& got, const std::vector<double>& ref) {
    double md = 0, mr = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        md = std::max(md, std::abs(double(got[i]) - ref[i]));
        mr = std::max(mr, std::abs(ref[i]));
    }
    return mr > 0 ? md / mr : md;
}

std::string edited(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    namespace fs = std::filesystem;
    const fs::path out = fs::path(fx().dir.path()) / name;
    fs::remove_all(out);
    fs::copy(model(ModelFileFormat::Safetensors).path, out, fs::copy_options::recursive);
    nlohmann::json j;
    std::ifstream(out / "config.json") >> j;
    edit(j);
    std::ofstream(out / "config.json", std::ios::trunc) << j.dump(2);
    return out.string();
}

} // namespace

MT_TEST(mistral_config_window_is_read_for_every_layer) {
    const LoadedModel& m = model(ModelFileFormat::Safetensors);
    MT_COMPARE(m.config.arch, Architecture::Llama);
    MT_COMPARE(m.config.arch_name, std::string("mistral"));
    MT_COMPARE(m.config.sliding_window, kWindow);
    MT_REQUIRE(m.config.layer_sliding.empty());
    for (int l = 0; l < m.config.num_layers; ++l)
        MT_COMPARE(m.config.window_for_layer(l), kWindow);
    // GGUF: no window key, full attention.
    MT_COMPARE(model(ModelFileFormat::Gguf).config.sliding_window, 0);
}

MT_TEST(mistral_window_forward_matches_reference) {
    const LoadedModel& m = model(ModelFileFormat::Safetensors);
    const std::vector<int32_t> ids = make_prompt(60, m.config.vocab_size);
    for (int32_t bs : {8, 16}) {
        const auto got = logits_of(m, ids, bs);
        ReferenceModel ref(m);
        double worst = 0;
        for (size_t i = 0; i < ids.size(); ++i)
            worst = std::max(worst, rel_diff(got[i], ref.step(ids[i])));
        std::printf("block %d: relative diff %.3g\n", bs, worst);
        MT_REQUIRE_MSG(worst < 1e-4, "relative diff %g", worst);
    }
}

// The same weights in GGUF (full attention): equal while every key is in the window, then not.
MT_TEST(gguf_mistral_runs_full_attention) {
    const LoadedModel& st = model(ModelFileFormat::Safetensors);
    const LoadedModel& gg = model(ModelFileFormat::Gguf);
    const std::vector<int32_t> ids = make_prompt(40, st.config.vocab_size);
    const auto a = logits_of(st, ids, 8), b = logits_of(gg, ids, 8);
    double inside = 0, after = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
        const double d = rel_diff(b[i], std::vector<double>(a[i].begin(), a[i].end()));
        (i < size_t(kWindow) ? inside : after) = std::max(i < size_t(kWindow) ? inside : after, d);
    }
    std::printf("gguf vs windowed: %.3g inside the window, %.3g after\n", inside, after);
    MT_REQUIRE_MSG(inside < 1e-5, "%g", inside);
    MT_REQUIRE_MSG(after > 1e-3, "%g", after);
}

MT_TEST(null_absent_and_context_wide_windows_are_none) {
    for (const auto& [name, edit] :
         std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>>{
             {"null", [](nlohmann::json& j) { j["sliding_window"] = nullptr; }},
             {"zero", [](nlohmann::json& j) { j["sliding_window"] = 0; }},
             {"absent", [](nlohmann::json& j) { j.erase("sliding_window"); }},
             {"context", [](nlohmann::json& j) { j["sliding_window"] = 4096; }},
             {"llama", [](nlohmann::json& j) { j["model_type"] = "llama"; }}}) {
        auto r = load_model(edited("mistral-" + name, edit));
        MT_REQUIRE_MSG(r.ok(), "%s: %s", name.c_str(), r.ok() ? "" : r.message().c_str());
        MT_REQUIRE_MSG(r.value()->config.sliding_window == 0, "%s", name.c_str());
    }
}

MT_TEST(bad_window_is_a_clear_error) {
    for (const nlohmann::json& v :
         {nlohmann::json(-3), nlohmann::json("big"), nlohmann::json(2.5)}) {
        auto r =
            load_model(edited("mistral-bad", [&](nlohmann::json& j) { j["sliding_window"] = v; }));
        MT_REQUIRE(!r.ok());
        std::printf("%s: %s\n", v.dump().c_str(), r.message().c_str());
        MT_REQUIRE(r.message().find("sliding_window") != std::string::npos);
    }
}

MINI_TEST_MAIN()
