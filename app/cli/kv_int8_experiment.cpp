#include "app/cli/kv_int8_experiment.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

namespace llmwb::cli {

namespace {

// x[i * stride] for i < n, quantized to int8 with one scale (the largest |x|) and read back.
void fake_quantize(float* x, int64_t n, int64_t stride) {
    float amax = 0;
    for (int64_t i = 0; i < n; ++i)
        amax = std::max(amax, std::fabs(x[i * stride]));
    if (amax == 0)
        return;
    const float inv = 127.0f / amax;
    const float scale = amax / 127.0f;
    for (int64_t i = 0; i < n; ++i) {
        const float q = std::clamp(std::nearbyint(x[i * stride] * inv), -127.0f, 127.0f);
        x[i * stride] = q * scale;
    }
}

void quantize_block(KvInt8Experiment e, KvCacheStorage& kv, int64_t block) {
    const int32_t bs = kv.block_size(), heads = kv.num_kv_heads(), hd = kv.head_dim();
    const int64_t row = kv.slot_stride(); // heads * hd floats per slot
    for (int32_t l = 0; l < kv.num_layers(); ++l) {
        float* k = kv.k_slot(l, block * bs);
        float* v = kv.v_slot(l, block * bs);
        for (int32_t o = 0; o < bs; ++o) {
            float* ko = k + o * row;
            float* vo = v + o * row;
            if (e == KvInt8Experiment::Token) {
                fake_quantize(ko, row, 1);
                fake_quantize(vo, row, 1);
                continue;
            }
            for (int32_t h = 0; h < heads; ++h) {
                if (e == KvInt8Experiment::TokenHead)
                    fake_quantize(ko + h * hd, hd, 1);
                fake_quantize(vo + h * hd, hd, 1);
            }
        }
        if (e == KvInt8Experiment::KeyChannel)
            for (int64_t c = 0; c < row; ++c) // channel c over the block's bs tokens
                fake_quantize(k + c, bs, row);
    }
}

} // namespace

const char* kv_int8_experiment_name(KvInt8Experiment e) {
    switch (e) {
    case KvInt8Experiment::Off:
        return "off";
    case KvInt8Experiment::TokenHead:
        return "tokenhead";
    case KvInt8Experiment::Token:
        return "token";
    case KvInt8Experiment::KeyChannel:
        return "kchannel";
    }
    return "off";
}

void apply_kv_int8_experiment(KvInt8Experiment e, KvCacheStorage& kv, const ForwardBatch& batch) {
    assert(kv.dtype() == KvDtype::F32);
    if (e == KvInt8Experiment::Off)
        return;
    const int32_t bs = kv.block_size();
    for (int64_t slot : batch.slot_mapping)
        if (slot >= 0 && slot % bs == bs - 1)
            quantize_block(e, kv, slot / bs);
}

Status install_kv_int8_experiment(ModelExecutor& exec, KvInt8Experiment e) {
    auto* cpu = dynamic_cast<CpuExecutor*>(&exec);
    if (!cpu)
        return make_error("--kv-int8-experiment runs on the CPU only");
    if (e == KvInt8Experiment::Off) {
        cpu->set_after_forward_hook({});
        return ok_status();
    }
    if (cpu->kv_dtype() != KvDtype::F32)
        return make_error("--kv-int8-experiment simulates int8 on an f32 KV cache, not " +
                          std::string(kv_dtype_name(cpu->kv_dtype())));
    cpu->set_after_forward_hook([e](KvCacheStorage& kv, const ForwardBatch& batch) {
        apply_kv_int8_experiment(e, kv, batch);
    });
    return ok_status();
}

} // namespace llmwb::cli
