// The fit calculator (app/discovery/fit_calculator.h) against hand-computed cases. The shape is
// Llama-3-8B's (32 layers, hidden 4096, 32 heads, 8 KV heads, head_dim 128, FFN 14336, vocab
// 128256; 8,030,261,248 parameters) with a 128k context (Llama 3.1).
#include <cstdint>

#include "app/discovery/fit_calculator.h"
#include "engine/runtime/model_executor.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

constexpr int64_t kGiB = int64_t(1) << 30;
constexpr int64_t kLlama8bParams = 8030261248;

ModelConfig llama3_8b() {
    ModelConfig c;
    c.arch = Architecture::Llama;
    c.arch_name = "llama";
    c.num_layers = 32;
    c.hidden_size = 4096;
    c.num_heads = 32;
    c.num_kv_heads = 8;
    c.head_dim = 128;
    c.intermediate_size = 14336;
    c.vocab_size = 128256;
    c.max_position = 131072;
    return c;
}

FitDevice cpu_with_available(int64_t bytes) {
    FitDevice d;
    d.gpu = false;
    d.name = "CPU";
    d.total_bytes = bytes * 2;
    d.base_bytes = bytes;
    return d;
}

// estimate_workspace_bytes of the Llama-3-8B shape, by hand: per token row 2*4096 (residual,
// normed) + 2*32*128 (q, attention output) + 2*8*128 (k, v) + 2*14336 (gate, up) + 128 (cos,
// sin) = 47,232 floats; per logits row 4096 + 128256 = 132,352 floats; 4 bytes each.
constexpr int64_t workspace(int64_t tokens, int64_t logits) {
    return 4 * (47232 * tokens + 132352 * logits);
}

} // namespace

// 2 x 32 layers x 8 KV heads x 128 x 8192 tokens x 2 bytes = 1 GiB in f16; f32 twice that;
// fp8 half; int8 half plus one fp32 scale per token, KV head, layer, for K and V:
// 2 x 32 x 8 x 8192 x 4 = 16 MiB.
MT_TEST(kv_cache_bytes_of_llama3_8b_at_8k) {
    const ModelConfig c = llama3_8b();
    MT_COMPARE(fit_kv_cache_bytes(c, 8192, KvDtype::F16), kGiB);
    MT_COMPARE(fit_kv_cache_bytes(c, 8192, KvDtype::BF16), kGiB);
    MT_COMPARE(fit_kv_cache_bytes(c, 8192, KvDtype::F32), 2 * kGiB);
    MT_COMPARE(fit_kv_cache_bytes(c, 8192, KvDtype::Fp8E4M3), kGiB / 2);
    MT_COMPARE(fit_kv_cache_bytes(c, 8192, KvDtype::Int8), kGiB / 2 + (int64_t(16) << 20));
    // The engine's pool allocates exactly this: 512 blocks of 16 tokens.
    for (KvDtype t : kAllKvDtypes)
        MT_COMPARE(fit_kv_cache_bytes(c, 8192, t), 512 * kv_bytes_per_block(c, 16, t));
}

// Sliding-window layers (gemma2/3): the engine's pool gives every layer every token, so the fit
// counts them in full, as kv_bytes_per_block does.
MT_TEST(sliding_layers_count_as_the_engine_allocates) {
    ModelConfig c = llama3_8b();
    c.sliding_window = 4096;
    c.layer_sliding.assign(32, 0);
    for (size_t l = 0; l < 32; l += 2)
        c.layer_sliding[l] = 1;
    MT_COMPARE(fit_kv_cache_bytes(c, 32768, KvDtype::F16),
               2048 * kv_bytes_per_block(c, 16, KvDtype::F16));
    MT_COMPARE(fit_kv_cache_bytes(c, 32768, KvDtype::F16), 4 * kGiB);
}

// An 80 GiB GPU at 0.9: budget 72 GiB. Weights 16 GiB + KV 4 x 8k f16 = 4 GiB + activations of
// a 2048-token step with 4 logits rows (389,042,176) + the GPU runtime 768 MiB = 22,669,185,024.
// Utilization: 22,669,185,024 / 80 GiB = 0.2639 + 0.02 margin -> 0.29. Sequences of 8k the budget
// holds: (72 GiB - 16 GiB - 389,042,176 - 768 MiB) / 1 GiB = 54.9 -> 54.
MT_TEST(fits_an_80_gib_gpu) {
    const ModelConfig c = llama3_8b();
    FitDevice gpu;
    gpu.gpu = true;
    gpu.name = "GPU";
    gpu.total_bytes = gpu.base_bytes = 80 * kGiB;
    FitRequest r;
    r.context = 8192;
    r.seqs = 4;
    r.kv_dtype = KvDtype::F16;
    const FitEstimate e = estimate_fit(c, 16 * kGiB, gpu, r);
    MT_COMPARE(e.kv_bytes, 4 * kGiB);
    MT_COMPARE(e.activation_bytes, workspace(2048, 4));
    MT_COMPARE(e.activation_bytes, int64_t(389042176));
    MT_COMPARE(e.runtime_bytes, int64_t(768) << 20);
    MT_COMPARE(e.need_bytes, int64_t(22669185024));
    MT_COMPARE(e.budget_bytes, int64_t(77309411328));
    MT_CHECK(e.fits);
    const FitAdvice a = advise_fit(c, 16 * kGiB, kLlama8bParams, gpu, r);
    MT_CHECK(a.fits);
    MT_COMPARE(a.kv_dtype, KvDtype::F16);
    MT_CHECK(a.gpu_memory_utilization > 0.2899 && a.gpu_memory_utilization < 0.2901);
    MT_COMPARE(a.max_num_seqs, 54);
    MT_CHECK(a.quantization.empty());
}

// 20 GiB of RAM available (budget 0.9 x 20 GiB = 19,327,352,832), F16 weights (2 bytes x 8.03 B
// = 16,060,522,496), 32k context, one sequence, CPU runtime 256 MiB, activations
// workspace(2048, 1) = 387,453,952:
//   f16 KV  4 GiB:                   need 21,011,379,200 > budget
//   int8 KV 2 GiB + 64 MiB scales:   need 18,931,004,416 <= budget -> int8.
MT_TEST(int8_kv_when_f16_does_not_fit) {
    const ModelConfig c = llama3_8b();
    const FitDevice cpu = cpu_with_available(20 * kGiB);
    FitRequest r;
    r.context = 32768;
    r.seqs = 1;
    const int64_t weights = 2 * kLlama8bParams;
    r.kv_dtype = KvDtype::F16;
    FitEstimate e = estimate_fit(c, weights, cpu, r);
    MT_COMPARE(e.budget_bytes, int64_t(19327352832));
    MT_COMPARE(e.need_bytes, int64_t(21011379200));
    MT_CHECK(!e.fits);
    r.kv_dtype = KvDtype::Int8;
    e = estimate_fit(c, weights, cpu, r);
    MT_COMPARE(e.need_bytes, int64_t(18931004416));
    MT_CHECK(e.fits);
    r.kv_dtype = KvDtype::F16;
    const FitAdvice a = advise_fit(c, weights, kLlama8bParams, cpu, r);
    MT_CHECK(a.fits);
    MT_COMPARE(a.kv_dtype, KvDtype::Int8);
    // (19,327,352,832 - 16,716,411,904) / 2,214,592,512 int8 bytes per 32k sequence = 1.18.
    MT_COMPARE(a.max_num_seqs, 1);
}

// 16 GiB available (budget 15,461,882,265): F16 weights alone are more. Q8_0: 8.03 B x 8.5 / 8 =
// 8,532,152,576 bytes; with 16k f16 KV (2 GiB) + 387,453,952 + 256 MiB = 11,335,525,632: fits.
// Longest context: (15,461,882,265 - 8,532,152,576 - 387,453,952 - 268,435,456) / 131,072 bytes
// per token = 47,865 -> 32k.
MT_TEST(q8_0_advised_on_16_gib) {
    const ModelConfig c = llama3_8b();
    FitRequest r;
    r.context = 16384;
    const FitAdvice a =
        advise_fit(c, 2 * kLlama8bParams, kLlama8bParams, cpu_with_available(16 * kGiB), r);
    MT_CHECK(!a.fits);
    MT_COMPARE(a.quantization, std::string("Q8_0"));
    MT_COMPARE(a.quantization_context, int64_t(32768));
    MT_COMPARE(a.summary, std::string("Q8_0 fits with 32k context"));
}

// 8 GiB available (budget 7,730,941,132), 16k context, f16 KV 2 GiB + 655,889,408 overhead:
//   Q8_0   8,532,152,576 weights: more than the budget alone
//   Q6_K   6,587,323,680 -> need 9,390,696,736 > budget
//   Q5_K_M 5,721,561,139 -> need 8,524,934,195 > budget
//   Q4_K_M 4,918,535,014 -> need 7,721,908,070 <= budget: advised. Longest context:
//   (7,730,941,132 - 4,918,535,014 - 655,889,408) / 131,072 = 16,452 -> 16k.
MT_TEST(q4_k_m_advised_on_8_gib) {
    const ModelConfig c = llama3_8b();
    FitRequest r;
    r.context = 16384;
    const FitAdvice a =
        advise_fit(c, 2 * kLlama8bParams, kLlama8bParams, cpu_with_available(8 * kGiB), r);
    MT_CHECK(!a.fits);
    MT_COMPARE(a.quantization, std::string("Q4_K_M"));
    MT_COMPARE(a.summary, std::string("Q4_K_M fits with 16k context"));
}

// Nothing fits 2 GiB: even Q3_K_M's 3.9 GB of weights exceed the budget.
MT_TEST(nothing_fits_a_tiny_machine) {
    FitRequest r;
    const FitAdvice a = advise_fit(llama3_8b(), 2 * kLlama8bParams, kLlama8bParams,
                                   cpu_with_available(2 * kGiB), r);
    MT_CHECK(!a.fits);
    MT_CHECK(a.quantization.empty());
    MT_COMPARE(a.summary, std::string("does not fit this machine"));
}

// Hostile shapes saturate instead of overflowing.
MT_TEST(huge_shapes_do_not_overflow) {
    ModelConfig c = llama3_8b();
    c.num_layers = 1 << 24;
    c.num_kv_heads = 1 << 24;
    c.head_dim = 1 << 24;
    const int64_t kv = fit_kv_cache_bytes(c, int64_t(1) << 40, KvDtype::F32);
    MT_CHECK(kv > 0);
    FitRequest r;
    r.context = int64_t(1) << 40;
    MT_CHECK(!estimate_fit(c, 1, cpu_with_available(kGiB), r).fits);
}

MT_TEST(context_text) {
    MT_COMPARE(fit_context_text(16384), std::string("16k"));
    MT_COMPARE(fit_context_text(131072), std::string("128k"));
    MT_COMPARE(fit_context_text(3000), std::string("3000"));
}
