#include "engine/runtime/rope.h"

#include <cmath>
#include <numbers>

#include "kernels/cpu/quant.h"

namespace llmwb {

std::vector<double> rope_inv_freq(const ModelConfig& config, const TensorView& rope_freqs) {
    const int32_t rot = config.rotary_dims();
    const int32_t half = rot / 2;
    std::vector<double> inv(half);
    for (int32_t i = 0; i < half; ++i)
        inv[i] =
            std::pow(static_cast<double>(config.rope_theta), -2.0 * i / static_cast<double>(rot));

    if (rope_freqs.present() && rope_freqs.rows * rope_freqs.cols == half) {
        std::vector<float> factors(half);
        kernels::dequantize_row(rope_freqs.type, rope_freqs.data, factors.data(), half);
        for (int32_t i = 0; i < half; ++i)
            inv[i] /= factors[i];
        return inv;
    }
    const RopeScaling& s = config.rope_scaling;
    if (s.kind == RopeScaling::Kind::Linear) // positions / factor (gemma3's global layers)
        for (double& f : inv)
            f /= s.factor;
    if (s.kind == RopeScaling::Kind::LongRope) {
        // The loaders check that both sets hold rotary_dim/2 factors; a set of another length
        // (a config built by hand) leaves the frequencies unscaled rather than reading past it.
        const std::vector<float>& f =
            longrope_uses_long_factors(config) ? s.long_factor : s.short_factor;
        if (f.size() == inv.size())
            for (int32_t i = 0; i < half; ++i)
                inv[i] /= static_cast<double>(f[i]);
        return inv;
    }
    if (s.kind == RopeScaling::Kind::Llama3) {
        const double old_ctx = s.original_max_position;
        const double low_wavelen = old_ctx / s.low_freq_factor;
        const double high_wavelen = old_ctx / s.high_freq_factor;
        for (double& f : inv) {
            const double wavelen = 2.0 * std::numbers::pi / f;
            if (wavelen < high_wavelen)
                continue; // high frequency: unchanged
            if (wavelen > low_wavelen) {
                f /= s.factor; // low frequency: fully scaled
            } else {
                const double smooth = (old_ctx / wavelen - s.low_freq_factor) /
                                      (s.high_freq_factor - s.low_freq_factor);
                f = (1.0 - smooth) * f / s.factor + smooth * f;
            }
        }
    }
    return inv;
}

bool longrope_uses_long_factors(const ModelConfig& config) {
    return config.rope_scaling.kind == RopeScaling::Kind::LongRope &&
           config.max_position > config.rope_scaling.original_max_position;
}

float rope_attention_scale(const ModelConfig& config) {
    return config.rope_scaling.kind == RopeScaling::Kind::LongRope
               ? config.rope_scaling.attention_factor
               : 1.0f;
}

void rope_cos_sin(float* cos_out, float* sin_out, const std::vector<double>& inv_freq,
                  int32_t position, float scale) {
    for (size_t i = 0; i < inv_freq.size(); ++i) {
        const double a = position * inv_freq[i];
        cos_out[i] = static_cast<float>(std::cos(a) * scale);
        sin_out[i] = static_cast<float>(std::sin(a) * scale);
    }
}

void rope_apply(float* x, int32_t n_heads, int32_t head_dim, const float* cos, const float* sin,
                RopeStyle style, int32_t rotary_dim) {
    const int32_t half = (rotary_dim > 0 && rotary_dim <= head_dim ? rotary_dim : head_dim) / 2;
    for (int32_t h = 0; h < n_heads; ++h) {
        float* v = x + static_cast<int64_t>(h) * head_dim;
        if (style == RopeStyle::RotateHalf) {
            for (int32_t i = 0; i < half; ++i) {
                const float a = v[i], b = v[i + half];
                v[i] = a * cos[i] - b * sin[i];
                v[i + half] = a * sin[i] + b * cos[i];
            }
        } else {
            for (int32_t i = 0; i < half; ++i) {
                const float a = v[2 * i], b = v[2 * i + 1];
                v[2 * i] = a * cos[i] - b * sin[i];
                v[2 * i + 1] = a * sin[i] + b * cos[i];
            }
        }
    }
}

} // namespace llmwb
