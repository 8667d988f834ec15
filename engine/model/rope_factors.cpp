#include "engine/model/rope_factors.h"

#include <cmath>

namespace llmwb {

std::vector<float> llama3_rope_factors(const ModelConfig& c) {
    const int half = c.head_dim / 2;
    std::vector<float> out(half > 0 ? half : 0, 1.0f);
    if (c.rope_scaling.kind != RopeScaling::Kind::Llama3)
        return out;
    const RopeScaling& s = c.rope_scaling;
    const double old_ctx = s.original_max_position;
    const double low_wavelen = old_ctx / s.low_freq_factor;
    const double high_wavelen = old_ctx / s.high_freq_factor;
    const double pi = 3.14159265358979323846;
    for (int i = 0; i < half; ++i) {
        double freq = 1.0 / std::pow(double(c.rope_theta), double(2 * i) / double(c.head_dim));
        double wavelen = 2.0 * pi / freq;
        double f;
        if (wavelen < high_wavelen) {
            f = 1.0;
        } else if (wavelen > low_wavelen) {
            f = s.factor;
        } else {
            double smooth =
                (old_ctx / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
            f = 1.0 / ((1.0 - smooth) / s.factor + smooth);
        }
        out[i] = float(f);
    }
    return out;
}

} // namespace llmwb
