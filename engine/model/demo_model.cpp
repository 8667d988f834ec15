#include "engine/model/demo_model.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "engine/model/demo_ngram.h"
#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"
#include "kernels/cpu/quant.h"

namespace llmwb {

Status write_demo_model(const std::string& path) {
    const DemoBigramModel& lm = DemoBigramModel::instance();
    if (lm.vocab_size() == 0)
        return make_error("demo model: the built-in demo tokenizer does not load");
    const double margin = lm.min_margin();
    if (!(margin >= kDemoMinMargin))
        return make_error("demo model: the bigram table's margin " + std::to_string(margin) +
                          " is below " + std::to_string(kDemoMinMargin));
    const int32_t V = lm.vocab_size();
    ModelWriterSpec spec;
    spec.arch = Architecture::Qwen2;
    spec.format = ModelFileFormat::Gguf;
    spec.weight_type = WeightType::F16; // norms stay F32; one-hot rows are exact in F16
    spec.name = kDemoModelName;
    spec.vocab_size = V;
    spec.hidden_size = (V + 31) / 32 * 32;
    spec.intermediate_size = 8;
    spec.num_layers = 1;
    spec.num_heads = 1;
    spec.num_kv_heads = 1;
    spec.head_dim = 32; // the smallest the CUDA attention supports
    spec.max_position = 8192;
    spec.rope_theta = 10000.0f;
    spec.rms_norm_eps = 1e-6f;
    spec.tie_word_embeddings = false;
    const int64_t H = spec.hidden_size;
    // What the final RMSNorm divides a one-hot row by; its weight multiplies it back, so the
    // row reaching lm_head is e_v times a factor within float rounding of 1.
    const float r = std::sqrt(1.0f / float(H) + spec.rms_norm_eps);
    // The score table transposed and rounded to F16: lm_head row u holds score(v -> u) for
    // every v. A logit is then one product (weight x that factor, the same for the whole row),
    // so the argmax after token v is the argmax of column v of the rounded table: checked here
    // to be most_likely_next(v), ahead of every other token by at least kDemoMinMargin.
    std::vector<float> table(size_t(V) * size_t(V));
    for (int32_t v = 0; v < V; ++v) {
        const std::vector<float> s = lm.scores(v);
        const int32_t best = lm.most_likely_next(v);
        const float best16 = kernels::fp16_to_fp32(kernels::fp32_to_fp16(s[size_t(best)]));
        for (int32_t u = 0; u < V; ++u) {
            const float x = kernels::fp16_to_fp32(kernels::fp32_to_fp16(s[size_t(u)]));
            if (u != best && !(double(best16) - double(x) >= kDemoMinMargin))
                return make_error("demo model: after token " + std::to_string(v) + ", token " +
                                  std::to_string(u) +
                                  " comes too close to the most likely one in F16");
            table[size_t(u) * size_t(V) + size_t(v)] = x;
        }
    }
    spec.tensor_values = [&](const std::string& name, int64_t a, int64_t b, int64_t cols,
                             float* out) {
        std::fill(out, out + (b - a) * cols, 0.0f);
        const bool is_norm =
            name.size() >= 11 && name.compare(name.size() - 11, 11, "norm.weight") == 0;
        for (int64_t row = a; row < b; ++row) {
            float* o = out + (row - a) * cols;
            if (name == "model.embed_tokens.weight") {
                o[row] = 1.0f;
            } else if (name == "model.norm.weight") {
                std::fill(o, o + cols, r);
            } else if (is_norm) {
                std::fill(o, o + cols, 1.0f);
            } else if (name == "lm_head.weight") {
                std::copy_n(table.data() + row * V, V, o);
            }
        }
    };
    return write_model(spec, path);
}

Result<std::string> ensure_demo_model(const std::string& dir) {
    namespace fs = std::filesystem;
    const std::string path = (fs::path(dir) / kDemoModelFileName).string();
    std::error_code ec;
    fs::remove(fs::path(dir) / kOldDemoModelFileName, ec); // superseded; ours to remove
    if (fs::is_regular_file(path, ec)) {
        auto m = load_model(path);
        if (m)
            return path; // reuse; a broken file is rewritten below
    }
    fs::create_directories(dir, ec);
    if (ec)
        return make_error(dir + ": cannot create folder: " + ec.message());
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    Status s = write_demo_model(tmp);
    if (!s) {
        fs::remove(tmp, ec);
        return s.error();
    }
    fs::rename(tmp, path, ec);
    if (ec) {
        fs::remove(tmp, ec);
        return make_error(path + ": cannot rename the written file: " + ec.message());
    }
    return path;
}

} // namespace llmwb
