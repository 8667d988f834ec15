#include "reference_model.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kernels/cpu/quant.h"

namespace llmwb::test {

namespace {

constexpr int32_t kMaxPositions = 512; // enough for every test

// out = x / sqrt(mean(x^2) + eps) * w
std::vector<double> rmsnorm(const double* x, const std::vector<double>& w, int64_t n, double eps) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i)
        ss += x[i] * x[i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    std::vector<double> out(n);
    for (int64_t i = 0; i < n; ++i)
        out[i] = x[i] * inv * w[i];
    return out;
}

} // namespace

ReferenceModel::Mat ReferenceModel::dequant(const TensorView& t) {
    Mat m;
    m.rows = t.rows;
    m.cols = t.cols;
    m.w.resize(static_cast<size_t>(t.rows * t.cols));
    std::vector<float> row(t.cols);
    for (int64_t r = 0; r < t.rows; ++r) {
        kernels::dequantize_row(t.type, t.row(r), row.data(), t.cols);
        for (int64_t c = 0; c < t.cols; ++c)
            m.w[r * t.cols + c] = row[c];
    }
    return m;
}

std::vector<double> ReferenceModel::dequant_vec(const TensorView& t) {
    if (!t.present())
        return {};
    return dequant(t).w;
}

ReferenceModel::ReferenceModel(const LoadedModel& model) : c_(model.config) {
    const ModelWeights& w = model.weights;
    embd_ = dequant(w.tok_embd);
    out_ = w.output.present() ? dequant(w.output) : embd_;
    out_norm_ = dequant_vec(w.output_norm);
    max_pos_ = kMaxPositions;

    // RoPE inverse frequencies, llama3 scaling from the rope_freqs tensor or the config.
    const int32_t half = c_.head_dim / 2;
    std::vector<double> factors = dequant_vec(w.rope_freqs);
    for (int32_t i = 0; i < half; ++i) {
        double f = 1.0 / std::pow(static_cast<double>(c_.rope_theta),
                                  static_cast<double>(2 * i) / c_.head_dim);
        if (!factors.empty()) {
            f /= factors[i];
        } else if (c_.rope_scaling.kind == RopeScaling::Kind::Llama3) {
            const RopeScaling& s = c_.rope_scaling;
            const double wavelen = 2 * std::numbers::pi / f;
            const double lo = s.original_max_position / static_cast<double>(s.low_freq_factor);
            const double hi = s.original_max_position / static_cast<double>(s.high_freq_factor);
            if (wavelen > lo) {
                f = f / s.factor;
            } else if (wavelen >= hi) {
                const double sm = (s.original_max_position / wavelen - s.low_freq_factor) /
                                  (s.high_freq_factor - s.low_freq_factor);
                f = (1 - sm) * f / s.factor + sm * f;
            }
        }
        inv_freq_.push_back(f);
    }

    for (const LayerWeights& lw : w.layers) {
        Layer l;
        l.wq = dequant(lw.wq);
        l.wk = dequant(lw.wk);
        l.wv = dequant(lw.wv);
        l.wo = dequant(lw.wo);
        l.w_gate = dequant(lw.w_gate);
        l.w_up = dequant(lw.w_up);
        l.w_down = dequant(lw.w_down);
        l.attn_norm = dequant_vec(lw.attn_norm);
        l.ffn_norm = dequant_vec(lw.ffn_norm);
        l.q_norm = dequant_vec(lw.q_norm);
        l.k_norm = dequant_vec(lw.k_norm);
        l.bq = dequant_vec(lw.bq);
        l.bk = dequant_vec(lw.bk);
        l.bv = dequant_vec(lw.bv);
        l.k_cache.assign(static_cast<size_t>(max_pos_) * c_.num_kv_heads * c_.head_dim, 0.0);
        l.v_cache.assign(l.k_cache.size(), 0.0);
        layers_.push_back(std::move(l));
    }
}

std::vector<double> ReferenceModel::step(int32_t token) {
    const int64_t H = c_.hidden_size, hd = c_.head_dim, half = hd / 2;
    const int64_t nh = c_.num_heads, nkv = c_.num_kv_heads, group = nh / nkv;
    const double eps = c_.rms_norm_eps;
    const int32_t pos = pos_++;

    // y = W x + b
    auto matvec = [](const Mat& m, const std::vector<double>& x, const std::vector<double>& b) {
        std::vector<double> y(m.rows);
        for (int64_t r = 0; r < m.rows; ++r) {
            double s = b.empty() ? 0.0 : b[r];
            for (int64_t c = 0; c < m.cols; ++c)
                s += m.w[r * m.cols + c] * x[c];
            y[r] = s;
        }
        return y;
    };
    // Rotates heads of one vector at `pos`, pairing per the file's RoPE style.
    auto rope = [&](std::vector<double>& v, int64_t heads) {
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t i = 0; i < half; ++i) {
                const int64_t a =
                    c_.rope_style == RopeStyle::Interleaved ? h * hd + 2 * i : h * hd + i;
                const int64_t b = c_.rope_style == RopeStyle::Interleaved ? a + 1 : a + half;
                const double ang = pos * inv_freq_[i];
                const double x0 = v[a], x1 = v[b];
                v[a] = x0 * std::cos(ang) - x1 * std::sin(ang);
                v[b] = x0 * std::sin(ang) + x1 * std::cos(ang);
            }
    };

    const double score_scale =
        c_.query_scale > 0 ? c_.query_scale : 1.0 / std::sqrt(static_cast<double>(hd));
    std::vector<double> x(embd_.w.begin() + token * H, embd_.w.begin() + (token + 1) * H);
    for (int32_t li = 0; li < static_cast<int32_t>(layers_.size()); ++li) {
        Layer& l = layers_[static_cast<size_t>(li)];
        // Keys a query at pos sees: all up to pos, or the last `window` of them.
        const int32_t window = c_.window_for_layer(li);
        const int32_t lo = window > 0 ? std::max(0, pos - window + 1) : 0;
        // Attention.
        std::vector<double> xb = rmsnorm(x.data(), l.attn_norm, H, eps);
        std::vector<double> q = matvec(l.wq, xb, l.bq); // [nh*hd]
        std::vector<double> k = matvec(l.wk, xb, l.bk); // [nkv*hd]
        std::vector<double> v = matvec(l.wv, xb, l.bv); // [nkv*hd]
        if (!l.q_norm.empty()) {
            for (int64_t h = 0; h < nh; ++h) {
                std::vector<double> n = rmsnorm(q.data() + h * hd, l.q_norm, hd, eps);
                std::copy(n.begin(), n.end(), q.begin() + h * hd);
            }
            for (int64_t h = 0; h < nkv; ++h) {
                std::vector<double> n = rmsnorm(k.data() + h * hd, l.k_norm, hd, eps);
                std::copy(n.begin(), n.end(), k.begin() + h * hd);
            }
        }
        rope(q, nh);
        rope(k, nkv);
        std::copy(k.begin(), k.end(), l.k_cache.begin() + pos * nkv * hd);
        std::copy(v.begin(), v.end(), l.v_cache.begin() + pos * nkv * hd);

        std::vector<double> att(nh * hd, 0.0);
        for (int64_t h = 0; h < nh; ++h) {
            const int64_t kvh = h / group;
            std::vector<double> score(pos + 1 - lo);
            double mx = -1e300;
            for (int32_t j = lo; j <= pos; ++j) {
                double s = 0;
                for (int64_t d = 0; d < hd; ++d)
                    s += q[h * hd + d] * l.k_cache[(j * nkv + kvh) * hd + d];
                score[j - lo] = s * score_scale;
                mx = std::max(mx, score[j - lo]);
            }
            double z = 0;
            for (double& s : score)
                z += (s = std::exp(s - mx));
            for (int32_t j = lo; j <= pos; ++j)
                for (int64_t d = 0; d < hd; ++d)
                    att[h * hd + d] += score[j - lo] / z * l.v_cache[(j * nkv + kvh) * hd + d];
        }
        std::vector<double> o = matvec(l.wo, att, {});
        for (int64_t i = 0; i < H; ++i)
            x[i] += o[i];

        // MLP: down(silu(gate(x)) * up(x)).
        xb = rmsnorm(x.data(), l.ffn_norm, H, eps);
        std::vector<double> g = matvec(l.w_gate, xb, {});
        std::vector<double> u = matvec(l.w_up, xb, {});
        for (size_t i = 0; i < g.size(); ++i)
            g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
        std::vector<double> d = matvec(l.w_down, g, {});
        for (int64_t i = 0; i < H; ++i)
            x[i] += d[i];
    }
    std::vector<double> xf = rmsnorm(x.data(), out_norm_, H, eps);
    return matvec(out_, xf, {});
}

} // namespace llmwb::test
