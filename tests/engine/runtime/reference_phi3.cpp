#include "reference_phi3.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/quant.h"

namespace llmwb::test {

namespace {

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

std::vector<double> matvec(const std::vector<double>& w, int64_t rows, int64_t cols,
                           const double* x) {
    std::vector<double> y(rows, 0.0);
    for (int64_t r = 0; r < rows; ++r) {
        double s = 0;
        for (int64_t c = 0; c < cols; ++c)
            s += w[r * cols + c] * x[c];
        y[r] = s;
    }
    return y;
}

} // namespace

ReferencePhi3::Mat ReferencePhi3::dequant(const TensorView& t) {
    Mat m;
    m.rows = t.rows;
    m.cols = t.cols;
    m.w.resize(static_cast<size_t>(t.rows * t.cols));
    std::vector<float> row(t.cols);
    for (int64_t r = 0; r < t.rows; ++r) {
        kernels::dequantize_row(t.type, t.row(r), row.data(), t.cols);
        std::copy(row.begin(), row.end(), m.w.begin() + r * t.cols);
    }
    return m;
}

ReferencePhi3::ReferencePhi3(const LoadedModel& model, FactorSet set) : c_(model.config) {
    const ModelWeights& w = model.weights;
    embd_ = dequant(w.tok_embd);
    out_ = w.output.present() ? dequant(w.output) : embd_;
    out_norm_ = dequant(w.output_norm).w;
    // Phi3RotaryEmbedding: dim = int(head_dim * partial_rotary_factor); longrope divides each
    // frequency by its factor and scales cos/sin by the attention factor.
    const int32_t dim = c_.rotary_dim > 0 ? c_.rotary_dim : c_.head_dim;
    const RopeScaling& rs = c_.rope_scaling;
    const bool longrope = rs.kind == RopeScaling::Kind::LongRope;
    for (int32_t i = 0; i < dim / 2; ++i) {
        double ext = 1.0;
        if (longrope)
            ext = set == FactorSet::Long ? rs.long_factor.at(i) : rs.short_factor.at(i);
        inv_freq_.push_back(1.0 / (ext * std::pow(double(c_.rope_theta), 2.0 * i / dim)));
    }
    mscale_ = longrope ? rs.attention_factor : 1.0;
    for (const LayerWeights& lw : w.layers) {
        Layer l;
        l.wqkv = dequant(lw.wqkv);
        l.wo = dequant(lw.wo);
        l.w_gate_up = dequant(lw.w_gate_up);
        l.w_down = dequant(lw.w_down);
        l.attn_norm = dequant(lw.attn_norm).w;
        l.ffn_norm = dequant(lw.ffn_norm).w;
        layers_.push_back(std::move(l));
    }
}

std::vector<double> ReferencePhi3::step(int32_t token) {
    const int64_t H = c_.hidden_size, hd = c_.head_dim;
    const int64_t nh = c_.num_heads, nkv = c_.num_kv_heads, group = nh / nkv;
    const int64_t I = c_.intermediate_size;
    const int64_t rot = static_cast<int64_t>(inv_freq_.size()) * 2, half = rot / 2;
    const double eps = c_.rms_norm_eps;
    const int32_t pos = pos_++;

    // apply_rotary_pos_emb: q_rot = q[..., :rot] rotated with rotate_half, q[..., rot:] passes.
    auto rope = [&](double* v, int64_t heads) {
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t i = 0; i < half; ++i) {
                double* x = v + h * hd;
                const double ang = pos * inv_freq_[i];
                const double cs = std::cos(ang) * mscale_, sn = std::sin(ang) * mscale_;
                const double x0 = x[i], x1 = x[i + half];
                x[i] = x0 * cs - x1 * sn;
                x[i + half] = x1 * cs + x0 * sn;
            }
    };

    std::vector<double> x(embd_.w.begin() + token * H, embd_.w.begin() + (token + 1) * H);
    for (Layer& l : layers_) {
        const int32_t window = c_.sliding_window; // every phi3 layer slides when set
        const int32_t lo = window > 0 ? std::max(0, pos - window + 1) : 0;
        std::vector<double> xb = rmsnorm(x.data(), l.attn_norm, H, eps);
        std::vector<double> qkv = matvec(l.wqkv.w, l.wqkv.rows, l.wqkv.cols, xb.data());
        double* q = qkv.data();
        double* k = qkv.data() + nh * hd;
        double* v = k + nkv * hd;
        rope(q, nh);
        rope(k, nkv);
        l.k_cache.insert(l.k_cache.end(), k, k + nkv * hd);
        l.v_cache.insert(l.v_cache.end(), v, v + nkv * hd);

        std::vector<double> att(nh * hd, 0.0);
        for (int64_t h = 0; h < nh; ++h) {
            const int64_t kvh = h / group;
            std::vector<double> score;
            double mx = -1e300;
            for (int32_t j = lo; j <= pos; ++j) {
                double s = 0;
                for (int64_t d = 0; d < hd; ++d)
                    s += q[h * hd + d] * l.k_cache[(j * nkv + kvh) * hd + d];
                score.push_back(s / std::sqrt(double(hd)));
                mx = std::max(mx, score.back());
            }
            double z = 0;
            for (double& s : score)
                z += (s = std::exp(s - mx));
            for (int32_t j = lo; j <= pos; ++j)
                for (int64_t d = 0; d < hd; ++d)
                    att[h * hd + d] += score[j - lo] / z * l.v_cache[(j * nkv + kvh) * hd + d];
        }
        std::vector<double> o = matvec(l.wo.w, l.wo.rows, l.wo.cols, att.data());
        for (int64_t i = 0; i < H; ++i)
            x[i] += o[i];

        // Phi3MLP: gate, up = gate_up_proj(x).chunk(2); down(silu(gate) * up).
        xb = rmsnorm(x.data(), l.ffn_norm, H, eps);
        std::vector<double> gu =
            matvec(l.w_gate_up.w, l.w_gate_up.rows, l.w_gate_up.cols, xb.data());
        std::vector<double> g(I);
        for (int64_t i = 0; i < I; ++i)
            g[i] = gu[i] / (1.0 + std::exp(-gu[i])) * gu[I + i];
        std::vector<double> d = matvec(l.w_down.w, l.w_down.rows, l.w_down.cols, g.data());
        for (int64_t i = 0; i < H; ++i)
            x[i] += d[i];
    }
    std::vector<double> xf = rmsnorm(x.data(), out_norm_, H, eps);
    return matvec(out_.w, out_.rows, out_.cols, xf.data());
}

} // namespace llmwb::test
