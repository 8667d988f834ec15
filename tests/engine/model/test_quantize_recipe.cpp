// Quantization recipes: for every preset, the type of each tensor of a 24-layer
// Qwen2.5-0.5B-shaped model (hidden 896: not a multiple of 256, so the K-quants fall back)
// matches the table below, derived by hand from llama.cpp's llama_tensor_get_type_impl and
// tensor_type_fallback at the version quantize_recipe_version() names. Target names, the
// out-of-scope types, and make-model writing every type.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/model/loaded_model.h"
#include "engine/model/model_writer.h"
#include "engine/model/quant_recipe.h"
#include "engine/model/quantize.h"
#include "engine/model/weight_plan.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

ModelConfig qwen05b() {
    ModelConfig c;
    c.arch = Architecture::Qwen2;
    c.vocab_size = 151936;
    c.hidden_size = 896;
    c.intermediate_size = 4864;
    c.num_layers = 24;
    c.num_heads = 14;
    c.num_kv_heads = 2;
    c.head_dim = 64;
    c.attention_bias = true;
    c.tie_word_embeddings = true;
    return c;
}

// use_more_bits for 24 layers: the first 3, the last 3, and 5, 8, ..., 20.
bool more(int l) {
    return l < 3 || l >= 21 || (l - 3) % 3 == 2;
}

using D = DType;
// Expected type of a matrix: (kind, layer) -> type, for Qwen2.5-0.5B (n_gqa 7, tied output).
using Table = std::function<D(TensorKind, int)>;

std::map<std::string, Table> expected_tables() {
    std::map<std::string, Table> t;
    // Every 896-column matrix falls back; ffn_down (4864 = 19 * 256 columns) does not.
    // token_embd is tied: the output rule (Q8_0 for a row length the base type cannot hold,
    // or Q6_K -> Q8_0 by fallback).
    t["Q8_0"] = [](TensorKind, int) { return D::Q8_0; };
    t["Q6_K"] = [](TensorKind k, int) { return k == TensorKind::FfnDown ? D::Q6_K : D::Q8_0; };
    t["Q5_K_M"] = [](TensorKind k, int l) {
        if (k == TensorKind::TokenEmbd)
            return D::Q8_0;
        if (k == TensorKind::AttnV)
            return more(l) ? D::Q8_0 : D::Q5_1; // Q6_K -> Q8_0, Q5_K -> Q5_1
        if (k == TensorKind::FfnDown)
            return more(l) ? D::Q6_K : D::Q5_K;
        return D::Q5_1;
    };
    t["Q5_K_S"] = [](TensorKind k, int) {
        return k == TensorKind::TokenEmbd ? D::Q8_0 : k == TensorKind::FfnDown ? D::Q5_K : D::Q5_1;
    };
    t["Q4_K_M"] = [](TensorKind k, int l) {
        if (k == TensorKind::TokenEmbd)
            return D::Q8_0;
        if (k == TensorKind::AttnV)
            return more(l) ? D::Q8_0 : D::Q5_0; // Q6_K -> Q8_0, Q4_K -> Q5_0
        if (k == TensorKind::FfnDown)
            return more(l) ? D::Q6_K : D::Q4_K;
        return D::Q5_0;
    };
    t["Q4_K_S"] = [](TensorKind k, int l) {
        if (k == TensorKind::TokenEmbd)
            return D::Q8_0;
        if (k == TensorKind::AttnV)
            return l < 4 ? D::Q5_1 : D::Q5_0;
        if (k == TensorKind::FfnDown)
            return l < 3 ? D::Q5_K : D::Q4_K;
        return D::Q5_0;
    };
    t["Q4_0"] = [](TensorKind k, int) { return k == TensorKind::TokenEmbd ? D::Q8_0 : D::Q4_0; };
    t["Q3_K_M"] = [](TensorKind k, int l) {
        switch (k) {
        case TensorKind::TokenEmbd:
            return D::Q8_0;
        case TensorKind::AttnV:
            return l < 2 ? D::Q5_1 : D::Q5_0; // Q5_K / Q4_K, both fall back
        case TensorKind::FfnDown:
            return l < 1 ? D::Q5_K : D::Q4_K; // 24 / 16 = 1
        case TensorKind::AttnOutput:
            return D::Q5_0; // Q4_K -> Q5_0
        default:
            return D::Q4_0; // Q3_K -> Q4_0
        }
    };
    t["Q2_K"] = [](TensorKind k, int) {
        switch (k) {
        case TensorKind::TokenEmbd:
            return D::Q8_0;
        case TensorKind::AttnV:
            return D::Q5_0; // n_gqa 7 >= 4: Q4_K -> Q5_0
        case TensorKind::FfnDown:
            return D::Q3_K;
        default:
            return D::Q4_0; // Q2_K / Q3_K (attn_output) -> Q4_0
        }
    };
    t["IQ4_XS"] = [](TensorKind k, int l) {
        if (k == TensorKind::TokenEmbd)
            return D::Q8_0;
        if (k == TensorKind::AttnV)
            return D::Q5_1; // n_gqa >= 4: Q5_K -> Q5_1
        if (k == TensorKind::FfnDown)
            return l < 3 ? D::Q5_K : D::IQ4_XS; // no imatrix
        return D::IQ4_NL;
    };
    t["IQ4_NL"] = [](TensorKind k, int l) {
        if (k == TensorKind::TokenEmbd)
            return D::Q8_0;
        if (k == TensorKind::AttnV)
            return D::Q5_1;
        if (k == TensorKind::FfnDown)
            return l < 3 ? D::Q5_K : D::IQ4_NL;
        return D::IQ4_NL;
    };
    // Single types: every matrix, then the fallback.
    t["Q4_K"] = [](TensorKind k, int) { return k == TensorKind::FfnDown ? D::Q4_K : D::Q5_0; };
    t["F16"] = [](TensorKind, int) { return D::F16; };
    return t;
}

} // namespace

MT_TEST(presetTablesForQwen05B) {
    const ModelConfig c = qwen05b();
    const auto plan = plan_tensors(c, false);
    std::vector<RecipeTensor> tensors;
    for (const auto& t : plan)
        tensors.push_back({t.gguf_name, t.vector ? 1 : 2, t.cols});
    for (const auto& [name, table] : expected_tables()) {
        MT_SCOPE("preset %s", name.c_str());
        auto target = parse_quant_target(name);
        MT_REQUIRE(target.ok());
        const auto choices = recipe_plan(*target, tensors, c.num_heads, c.num_kv_heads, false);
        MT_REQUIRE_COMPARE(choices.size(), plan.size());
        int matrices = 0;
        for (size_t i = 0; i < plan.size(); ++i) {
            MT_SCOPE("tensor %s", plan[i].gguf_name.c_str());
            const RecipeChoice& ch = choices[i];
            MT_CHECK(!ch.unsupported);
            if (plan[i].vector) {
                MT_CHECK(!ch.quantizable);
                MT_COMPARE(std::string(dtype_name(ch.type)), std::string("F32"));
                continue;
            }
            ++matrices;
            MT_CHECK(ch.quantizable);
            const D want = table(tensor_kind_of(plan[i].gguf_name), plan[i].layer);
            MT_COMPARE(std::string(dtype_name(ch.type)), std::string(dtype_name(want)));
            MT_COMPARE(ch.fallback, ch.type != ch.wanted);
        }
        MT_COMPARE(matrices, 1 + 24 * 7);
    }
}

MT_TEST(imatrixChangesQ4_0AndIQ4Recipes) {
    const ModelConfig c = qwen05b();
    const auto plan = plan_tensors(c, false);
    std::vector<RecipeTensor> tensors;
    for (const auto& t : plan)
        tensors.push_back({t.gguf_name, t.vector ? 1 : 2, t.cols});
    auto q40 = recipe_plan(parse_quant_target("Q4_0").value(), tensors, 14, 2, true);
    auto iq4 = recipe_plan(parse_quant_target("IQ4_XS").value(), tensors, 14, 2, true);
    for (size_t i = 0; i < plan.size(); ++i) {
        if (tensor_kind_of(plan[i].gguf_name) != TensorKind::FfnDown)
            continue;
        MT_SCOPE("layer %d", plan[i].layer);
        // With an imatrix, the first eighth of ffn_down gets Q4_1 (Q4_0) and IQ4_XS stays.
        MT_COMPARE(std::string(dtype_name(q40[i].type)), plan[i].layer < 3 ? "Q4_1" : "Q4_0");
        MT_COMPARE(std::string(dtype_name(iq4[i].type)), "IQ4_XS");
    }
}

MT_TEST(untiedOutputAndSmallGqa) {
    // An untied llama-like model with 256-multiple rows: output Q6_K, token_embd the base type;
    // n_gqa 2 < 4 so Q2_K's attn_v is Q3_K.
    ModelConfig c = qwen05b();
    c.arch = Architecture::Llama;
    c.hidden_size = 512;
    c.intermediate_size = 1024;
    c.num_layers = 8;
    c.num_heads = 8;
    c.num_kv_heads = 4;
    c.attention_bias = false;
    c.tie_word_embeddings = false;
    const auto plan = plan_tensors(c, false);
    std::vector<RecipeTensor> tensors;
    for (const auto& t : plan)
        tensors.push_back({t.gguf_name, t.vector ? 1 : 2, t.cols});
    auto q2 = recipe_plan(parse_quant_target("q2_k").value(), tensors, 8, 4, false);
    for (size_t i = 0; i < plan.size(); ++i) {
        MT_SCOPE("tensor %s", plan[i].gguf_name.c_str());
        const TensorKind k = tensor_kind_of(plan[i].gguf_name);
        MT_CHECK(!q2[i].fallback);
        if (k == TensorKind::Output)
            MT_COMPARE(std::string(dtype_name(q2[i].type)), "Q6_K");
        if (k == TensorKind::TokenEmbd)
            MT_COMPARE(std::string(dtype_name(q2[i].type)), "Q2_K");
        if (k == TensorKind::AttnV)
            MT_COMPARE(std::string(dtype_name(q2[i].type)), "Q3_K");
        if (k == TensorKind::AttnQ)
            MT_COMPARE(std::string(dtype_name(q2[i].type)), "Q2_K");
    }
}

MT_TEST(rowLengthsWithoutFallback) {
    RecipeModel m;
    m.n_attn_v = m.n_ffn_down = 1;
    auto q4k = parse_quant_target("Q4_K").value();
    // 200 columns: Q4_K -> Q5_0 does not fit either -> F16.
    auto c = recipe_tensor_type(q4k, "blk.0.ffn_gate.weight", 2, 200, 0, m);
    MT_CHECK(c.fallback);
    MT_COMPARE(std::string(dtype_name(c.type)), "F16");
    // Q8_0 has no fallback in the common quantizer: unsupported, with a reason.
    auto q8 = parse_quant_target("Q8_0").value();
    c = recipe_tensor_type(q8, "blk.0.ffn_gate.weight", 2, 200, 0, m);
    MT_CHECK(c.unsupported);
    MT_CHECK(c.reason.find("200") != std::string::npos);
    // Norms and biases are never quantized.
    c = recipe_tensor_type(q8, "blk.0.attn_norm.weight", 1, 896, 0, m);
    MT_CHECK(!c.quantizable);
    c = recipe_tensor_type(q8, "blk.0.attn_q.bias", 1, 896, 0, m);
    MT_CHECK(!c.quantizable);
}

MT_TEST(targetNames) {
    for (const char* n : {"Q8_0", "Q6_K", "Q5_K_M", "Q5_K_S", "Q4_K_M", "Q4_K_S", "Q4_0", "Q3_K_M",
                          "Q2_K", "IQ4_XS", "IQ4_NL", "q4_k_m", "f16", "bf16", "Q5_K"}) {
        MT_SCOPE("%s", n);
        MT_CHECK(parse_quant_target(n).ok());
    }
    MT_COMPARE(parse_quant_target("q4_k_m")->name, "Q4_K_M");
    MT_COMPARE(parse_quant_target("Q4_K_M")->file_type, 15u);
    MT_COMPARE(parse_quant_target("Q8_0")->file_type, 7u);
    auto bad = parse_quant_target("Q4_K_XL");
    MT_REQUIRE(!bad.ok());
    MT_CHECK(bad.message().find("Q4_K_M") != std::string::npos); // lists the valid names
    for (const char* n : {"IQ2_XXS", "iq3_s", "IQ1_M", "TQ1_0", "TQ2_0", "MXFP4"}) {
        MT_SCOPE("%s", n);
        auto r = parse_quant_target(n);
        MT_REQUIRE(!r.ok());
        MT_CHECK(r.message().find("out of scope for now") != std::string::npos);
    }
    MT_CHECK(std::string(quantize_recipe_version()).find("llama.cpp") != std::string::npos);
}

// make-model --type writes every single type and preset; each loads back with the recipe's
// types (a small qwen2 with 256-multiple rows and one 96-column shape for the fallbacks).
MT_TEST(makeModelWritesEveryType) {
    mini_test::TempDir dir;
    MT_REQUIRE(dir.valid());
    ModelWriterSpec spec;
    spec.arch = Architecture::Qwen2;
    spec.hidden_size = 256;
    spec.intermediate_size = 512;
    spec.num_layers = 2;
    spec.num_heads = 4;
    spec.num_kv_heads = 1;
    spec.tie_word_embeddings = true;
    for (WeightType wt : all_weight_types()) {
        MT_SCOPE("type %s", weight_type_name(wt));
        MT_REQUIRE(parse_weight_type(weight_type_name(wt)).ok());
        spec.weight_type = wt;
        const std::string path = dir.file(std::string(weight_type_name(wt)) + ".gguf");
        ModelWriteReport rep;
        auto st = write_model(spec, path, &rep);
        MT_REQUIRE_MSG(st.ok(), "%s", st.ok() ? "" : st.message().c_str());
        auto m = load_model(path);
        MT_REQUIRE_MSG(m.ok(), "%s", m.ok() ? "" : m.message().c_str());
        const auto plan = plan_tensors(m.value()->config, false);
        std::vector<bool> fb;
        const auto types = gguf_storage_types(plan, wt, m.value()->config, &fb);
        MT_COMPARE(rep.tensors.size(), plan.size());
        for (size_t i = 0; i < rep.tensors.size() && i < types.size(); ++i)
            MT_COMPARE(std::string(dtype_name(rep.tensors[i].type)), dtype_name(types[i]));
        auto target = parse_quant_target(weight_type_name(wt)).value();
        if (!dtype_is_float(target.base) && target.base != DType::Q8_0) {
            // The base type appears among the layers' matrices.
            bool seen = false;
            for (const auto& t : rep.tensors)
                seen |= t.type == target.base;
            MT_CHECK(seen);
        }
    }
}

MINI_TEST_MAIN()
