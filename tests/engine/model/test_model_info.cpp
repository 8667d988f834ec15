// The type histogram and bits per weight of engine/model/model_info.h over models written by the
// model writer: F32 (32 bpw), Q8_0 (8.5 bpw: 34 bytes per 32 weights), the Q4_K_M mix (between
// Q4_K's 4.5 and Q6_K's 6.5625), tied embeddings counted once.
#include <map>
#include <string>

#include "engine/model/loaded_model.h"
#include "engine/model/model_info.h"
#include "engine/model/model_writer.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

ModelWriterSpec spec(WeightType type, bool tied) {
    ModelWriterSpec s;
    s.arch = Architecture::Qwen2;
    s.weight_type = type;
    s.hidden_size = 256;
    s.intermediate_size = 512;
    s.num_layers = 4;
    s.num_heads = 4;
    s.num_kv_heads = 2;
    s.max_position = 256;
    s.tie_word_embeddings = tied;
    return s;
}

std::unique_ptr<LoadedModel> write_load(const ModelWriterSpec& s, const std::string& path) {
    if (Status st = write_model(s, path); !st) {
        std::fprintf(stderr, "%s\n", st.message().c_str());
        return nullptr;
    }
    auto m = load_model(path);
    if (!m) {
        std::fprintf(stderr, "%s\n", m.message().c_str());
        return nullptr;
    }
    return std::move(m.value());
}

// Histogram and groups add up to the model's tensors and bytes.
void check_totals(const LoadedModel& m, const TypeHistogram& h) {
    int tensors = 0;
    int64_t params = 0, bytes = 0;
    for (const DTypeCount& e : h.types) {
        tensors += e.tensors;
        params += e.parameters;
        bytes += e.bytes;
    }
    MT_COMPARE(tensors, h.tensors);
    MT_COMPARE(params, h.parameters);
    MT_COMPARE(bytes, h.bytes);
    MT_COMPARE(h.bytes, m.weight_bytes);
    int64_t group_bytes = 0, group_params = 0;
    for (const TensorGroupTypes& g : tensor_group_types(m)) {
        group_bytes += g.bytes;
        group_params += g.parameters;
    }
    MT_COMPARE(group_bytes, h.bytes);
    MT_COMPARE(group_params, h.parameters);
    for (size_t i = 1; i < h.types.size(); ++i)
        MT_CHECK(h.types[i - 1].bytes >= h.types[i].bytes); // most bytes first
}

} // namespace

MT_TEST(bits_per_weight_helper) {
    MT_COMPARE(bits_per_weight(34, 32), 8.5);
    MT_COMPARE(bits_per_weight(144, 256), 4.5);
    MT_COMPARE(bits_per_weight(100, 0), 0.0);
}

MT_TEST(f32_and_q8_0) {
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    auto f = write_load(spec(WeightType::F32, false), dir.file("f32.gguf"));
    auto q = write_load(spec(WeightType::Q8_0, false), dir.file("q8.gguf"));
    MT_REQUIRE(f && q);
    TypeHistogram hf = type_histogram(*f);
    check_totals(*f, hf);
    MT_REQUIRE_COMPARE(hf.types.size(), size_t{1});
    MT_COMPARE(hf.types[0].type, DType::F32);
    MT_COMPARE(hf.matrix_bits_per_weight(), 32.0);
    MT_COMPARE(hf.bits_per_weight(), 32.0);
    // embedding + 4 x (q, k, v, o, gate, up, down) + output
    MT_COMPARE(hf.matrix_tensors, 1 + 4 * 7 + 1);

    TypeHistogram hq = type_histogram(*q);
    check_totals(*q, hq);
    MT_COMPARE(hq.matrix_tensors, 30);
    std::map<DType, DTypeCount> by;
    for (const DTypeCount& e : hq.types)
        by[e.type] = e;
    MT_COMPARE(by[DType::Q8_0].tensors, 30);
    MT_COMPARE(by[DType::Q8_0].bits_per_weight(), 8.5);
    MT_COMPARE(hq.matrix_bits_per_weight(), 8.5);
    // Norms and biases stay F32: the average over all tensors is a little above 8.5.
    MT_CHECK(by[DType::F32].tensors == 4 * 2 + 1 + 4 * 3);
    MT_CHECK(hq.bits_per_weight() > 8.5 && hq.bits_per_weight() < 8.6);
    for (const TensorGroupTypes& g : tensor_group_types(*q)) {
        if (g.group == "ffn" || g.group == "embedding" || g.group == "output")
            MT_COMPARE(g.bits_per_weight(), 8.5);
        if (g.group == "norm")
            MT_COMPARE(g.bits_per_weight(), 32.0);
    }
}

MT_TEST(q4_k_m_mix_and_tied_embeddings) {
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    auto m = write_load(spec(WeightType::Q4_K_M, true), dir.file("km.gguf"));
    MT_REQUIRE(m);
    TypeHistogram h = type_histogram(*m);
    check_totals(*m, h);
    MT_COMPARE(h.matrix_tensors, 1 + 4 * 7); // the tied output is the embedding
    std::map<DType, DTypeCount> by;
    for (const DTypeCount& e : h.types)
        by[e.type] = e;
    MT_CHECK(by[DType::Q4_K].tensors > 0);
    MT_CHECK(by[DType::Q6_K].tensors > 0);
    MT_COMPARE(by[DType::Q4_K].bits_per_weight(), 4.5);
    MT_COMPARE(by[DType::Q6_K].bits_per_weight(), 6.5625);
    MT_CHECK_MSG(h.matrix_bits_per_weight() > 4.5 && h.matrix_bits_per_weight() < 6.5625, "%g",
                 h.matrix_bits_per_weight());
    for (const TensorGroupTypes& g : tensor_group_types(*m))
        MT_CHECK(g.group != "output");
}

MINI_TEST_MAIN()
