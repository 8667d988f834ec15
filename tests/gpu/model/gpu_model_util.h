// Shared pieces of the whole-model GPU tests: the plugin (or a skip), tiny models written by the
// model writer and loaded back, and the logits comparison.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/cuda_executor.h"
#include "engine/backend/cuda_plugin.h"
#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"
#include "engine/runtime/forward_batch.h"
#include "support/mini_test.h"

namespace llmwb::gputest {

// The plugin with at least one device, or the current test ends as SKIPPED with the reason.
inline std::shared_ptr<CudaPlugin> plugin_or_skip() {
    static std::shared_ptr<CudaPlugin> plugin;
    static std::string why;
    static bool tried = false;
    if (!tried) {
        tried = true;
        auto p = CudaPlugin::load();
        if (!p) {
            why = p.message();
        } else if (auto d = (*p)->devices(); !d) {
            why = d.message();
        } else if (d->empty()) {
            why = "device count is 0";
        } else {
            plugin = *p;
        }
    }
    if (!plugin)
        MT_SKIP("no CUDA device (" + why + ")");
    return plugin;
}

inline std::string temp_dir() {
    static std::string dir = [] {
        auto d = std::filesystem::temp_directory_path() /
                 ("llmwb-gpu-model-" + std::to_string(getpid()));
        std::filesystem::create_directories(d);
        return d.string();
    }();
    return dir;
}

// A small model with CUDA-friendly shapes (head_dim 64, K-quant friendly rows of 256).
inline ModelWriterSpec tiny_spec(Architecture arch, WeightType type) {
    ModelWriterSpec s;
    s.arch = arch;
    s.format = ModelFileFormat::Gguf;
    s.weight_type = type;
    s.seed = 77;
    s.hidden_size = 256;
    s.intermediate_size = 512;
    s.num_layers = 2;
    s.num_heads = 4;
    s.num_kv_heads = 2;
    s.max_position = 2048;
    s.rope_theta = 10000.0f;
    return s;
}

inline std::unique_ptr<LoadedModel> write_and_load(const ModelWriterSpec& s,
                                                   const std::string& name) {
    const std::string path =
        temp_dir() + "/" + name + (s.format == ModelFileFormat::Gguf ? ".gguf" : "");
    if (Status st = write_model(s, path); !st) {
        mini_test::report_failure(__FILE__, __LINE__, "write_model", st.message());
        throw mini_test::Abort{};
    }
    auto m = load_model(path);
    if (!m) {
        mini_test::report_failure(__FILE__, __LINE__, "load_model", m.message());
        throw mini_test::Abort{};
    }
    return std::move(m.value());
}

// The step sequence: (seq A tokens, seq B tokens) per step, A on blocks 0..3, B on 4..7.
struct Step {
    int32_t a_first, a_len, b_first, b_len;
};
constexpr Step kSteps[] = {
    {0, 37, 0, 5}, {37, 1, 5, 3}, {38, 1, 8, 1}, {39, 1, 9, 1}, {40, 1, 10, 1}};

inline ForwardBatch make_batch(const Step& s, int32_t vocab) {
    ForwardBatch b;
    std::vector<int32_t> a_tokens, b_tokens;
    for (int32_t i = 0; i < s.a_len; ++i)
        a_tokens.push_back((7 * (s.a_first + i) + 3) % vocab);
    for (int32_t i = 0; i < s.b_len; ++i)
        b_tokens.push_back((11 * (s.b_first + i) + 5) % vocab);
    const int32_t a_blocks[] = {0, 1, 2, 3}, b_blocks[] = {4, 5, 6, 7};
    b.add_sequence(a_tokens, s.a_first, a_blocks, 16, ForwardBatch::Logits::Last);
    b.add_sequence(b_tokens, s.b_first, b_blocks, 16, ForwardBatch::Logits::Last);
    return b;
}

// max |a - b| over a row, relative to max |b| (b: the CPU reference).
inline double rel_err(const float* a, const float* b, int64_t n) {
    double diff = 0, ref = 1e-6;
    for (int64_t i = 0; i < n; ++i) {
        if (!std::isfinite(a[i]))
            return INFINITY;
        diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
        ref = std::max(ref, std::fabs(static_cast<double>(b[i])));
    }
    return diff / ref;
}

} // namespace llmwb::gputest
