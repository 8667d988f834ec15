#include "reference_gemma.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kernels/cpu/quant.h"

namespace llmwb::test {

namespace {

constexpr int32_t kMaxPositions = 256;

// Gemma*RMSNorm: x * rsqrt(mean(x^2) + eps) * (1 + w)
std::vector<double> gemma_rmsnorm(const double* x, const std::vector<double>& w, int64_t n,
                                  double eps) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i)
        ss += x[i] * x[i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    std::vector<double> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        out[static_cast<size_t>(i)] = x[i] * inv * (1.0 + w[static_cast<size_t>(i)]);
    return out;
}

// gelu_pytorch_tanh
double gelu_tanh(double x) {
    const double c = std::sqrt(2.0 / std::numbers::pi);
    return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

std::vector<double> inv_freq(double base, int64_t head_dim, double linear_factor) {
    std::vector<double> f;
    for (int64_t i = 0; i < head_dim / 2; ++i)
        f.push_back(1.0 / std::pow(base, static_cast<double>(2 * i) / head_dim) / linear_factor);
    return f;
}

} // namespace

ReferenceGemma::Mat ReferenceGemma::dequant(const TensorView& t) {
    Mat m;
    m.rows = t.rows;
    m.cols = t.cols;
    m.w.resize(static_cast<size_t>(t.rows * t.cols));
    std::vector<float> row(static_cast<size_t>(t.cols));
    for (int64_t r = 0; r < t.rows; ++r) {
        kernels::dequantize_row(t.type, t.row(r), row.data(), t.cols);
        for (int64_t c = 0; c < t.cols; ++c)
            m.w[static_cast<size_t>(r * t.cols + c)] = row[static_cast<size_t>(c)];
    }
    return m;
}

ReferenceGemma::ReferenceGemma(
    const LoadedModel& model, const ModelWriterSpec& spec,
    const std::function<std::vector<double>(const std::string&)>& hf_norm) {
    gemma3_ = spec.arch == Architecture::Gemma3;
    hidden_ = spec.hidden_size;
    heads_ = spec.num_heads;
    kv_heads_ = spec.num_kv_heads;
    head_dim_ = spec.head_dim > 0 ? spec.head_dim : spec.hidden_size / spec.num_heads;
    eps_ = spec.rms_norm_eps;
    // query_pre_attn_scalar ** -0.5 (config default: head_dim in the files this tests).
    const double qpas =
        spec.query_pre_attn_scalar > 0 ? spec.query_pre_attn_scalar : double(head_dim_);
    scaling_ = 1.0 / std::sqrt(qpas);
    attn_cap_ = spec.attn_logit_softcap;
    final_cap_ = spec.final_logit_softcap;
    window_ = spec.sliding_window;
    const double factor =
        spec.rope_scaling.kind == RopeScaling::Kind::Linear ? spec.rope_scaling.factor : 1.0;
    inv_freq_global_ = inv_freq(spec.rope_theta, head_dim_, factor);
    inv_freq_local_ =
        inv_freq(spec.rope_theta_local > 0 ? spec.rope_theta_local : 10000.0, head_dim_, 1.0);

    const ModelWeights& w = model.weights;
    embed_ = dequant(w.tok_embd);
    final_norm_ = hf_norm("model.norm.weight");
    for (size_t l = 0; l < w.layers.size(); ++l) {
        const LayerWeights& lw = w.layers[l];
        const std::string p = "model.layers." + std::to_string(l) + ".";
        Layer L;
        L.wq = dequant(lw.wq);
        L.wk = dequant(lw.wk);
        L.wv = dequant(lw.wv);
        L.wo = dequant(lw.wo);
        L.gate = dequant(lw.w_gate);
        L.up = dequant(lw.w_up);
        L.down = dequant(lw.w_down);
        L.input_norm = hf_norm(p + "input_layernorm.weight");
        L.post_attn_norm = hf_norm(p + "post_attention_layernorm.weight");
        L.pre_ffn_norm = hf_norm(p + "pre_feedforward_layernorm.weight");
        L.post_ffn_norm = hf_norm(p + "post_feedforward_layernorm.weight");
        if (gemma3_) {
            L.q_norm = hf_norm(p + "self_attn.q_norm.weight");
            L.k_norm = hf_norm(p + "self_attn.k_norm.weight");
        }
        // Gemma2: even layers slide; Gemma3: all but every sixth (sliding_window_pattern 6).
        const int64_t i = static_cast<int64_t>(l);
        L.sliding = gemma3_ ? (i + 1) % 6 != 0 : i % 2 == 0;
        L.k_cache.assign(static_cast<size_t>(kMaxPositions * kv_heads_ * head_dim_), 0.0);
        L.v_cache = L.k_cache;
        layers_.push_back(std::move(L));
    }
}

std::vector<double> ReferenceGemma::step(int32_t token) {
    const int64_t H = hidden_, hd = head_dim_, half = hd / 2, nh = heads_, nkv = kv_heads_;
    const int64_t group = nh / nkv;
    const int32_t pos = pos_++;
    auto matvec = [](const Mat& m, const std::vector<double>& x) {
        std::vector<double> y(static_cast<size_t>(m.rows), 0.0);
        for (int64_t r = 0; r < m.rows; ++r) {
            double s = 0;
            for (int64_t c = 0; c < m.cols; ++c)
                s += m.w[static_cast<size_t>(r * m.cols + c)] * x[static_cast<size_t>(c)];
            y[static_cast<size_t>(r)] = s;
        }
        return y;
    };
    // rotate_half RoPE: (x[i], x[i + d/2]).
    auto rope = [&](std::vector<double>& v, int64_t n_heads, const std::vector<double>& inv) {
        for (int64_t h = 0; h < n_heads; ++h)
            for (int64_t i = 0; i < half; ++i) {
                const double a = pos * inv[static_cast<size_t>(i)];
                double& x0 = v[static_cast<size_t>(h * hd + i)];
                double& x1 = v[static_cast<size_t>(h * hd + i + half)];
                const double y0 = x0 * std::cos(a) - x1 * std::sin(a);
                const double y1 = x1 * std::cos(a) + x0 * std::sin(a);
                x0 = y0;
                x1 = y1;
            }
    };
    auto head_norm = [&](std::vector<double>& v, int64_t n_heads, const std::vector<double>& w) {
        for (int64_t h = 0; h < n_heads; ++h) {
            const auto n = gemma_rmsnorm(v.data() + h * hd, w, hd, eps_);
            std::copy(n.begin(), n.end(), v.begin() + h * hd);
        }
    };

    // Gemma*Model: inputs_embeds * sqrt(hidden_size)
    std::vector<double> h(embed_.w.begin() + token * H, embed_.w.begin() + (token + 1) * H);
    const double normalizer = std::sqrt(static_cast<double>(H));
    for (double& x : h)
        x *= normalizer;

    for (Layer& L : layers_) {
        // Attention block.
        std::vector<double> x = gemma_rmsnorm(h.data(), L.input_norm, H, eps_);
        std::vector<double> q = matvec(L.wq, x), k = matvec(L.wk, x), v = matvec(L.wv, x);
        if (gemma3_) {
            head_norm(q, nh, L.q_norm);
            head_norm(k, nkv, L.k_norm);
        }
        const std::vector<double>& inv = gemma3_ && L.sliding ? inv_freq_local_ : inv_freq_global_;
        rope(q, nh, inv);
        rope(k, nkv, inv);
        std::copy(k.begin(), k.end(), L.k_cache.begin() + pos * nkv * hd);
        std::copy(v.begin(), v.end(), L.v_cache.begin() + pos * nkv * hd);
        // Sliding layers see keys j with pos - j < window.
        const int32_t lo = L.sliding && window_ > 0 ? std::max(0, pos - window_ + 1) : 0;
        std::vector<double> att(static_cast<size_t>(nh * hd), 0.0);
        for (int64_t hh = 0; hh < nh; ++hh) {
            const int64_t kvh = hh / group;
            std::vector<double> s;
            double mx = -1e300;
            for (int32_t j = lo; j <= pos; ++j) {
                double d = 0;
                for (int64_t e = 0; e < hd; ++e)
                    d += q[static_cast<size_t>(hh * hd + e)] *
                         L.k_cache[static_cast<size_t>((j * nkv + kvh) * hd + e)];
                d *= scaling_;
                if (attn_cap_ > 0) // attn_logit_softcapping, before the mask and softmax
                    d = std::tanh(d / attn_cap_) * attn_cap_;
                s.push_back(d);
                mx = std::max(mx, d);
            }
            double z = 0;
            for (double& e : s)
                z += (e = std::exp(e - mx));
            for (int32_t j = lo; j <= pos; ++j)
                for (int64_t e = 0; e < hd; ++e)
                    att[static_cast<size_t>(hh * hd + e)] +=
                        s[static_cast<size_t>(j - lo)] / z *
                        L.v_cache[static_cast<size_t>((j * nkv + kvh) * hd + e)];
        }
        std::vector<double> o = gemma_rmsnorm(matvec(L.wo, att).data(), L.post_attn_norm, H, eps_);
        for (int64_t i = 0; i < H; ++i)
            h[static_cast<size_t>(i)] += o[static_cast<size_t>(i)];

        // MLP block: down(gelu_tanh(gate(x)) * up(x)) between the pre and post norms.
        x = gemma_rmsnorm(h.data(), L.pre_ffn_norm, H, eps_);
        std::vector<double> g = matvec(L.gate, x), u = matvec(L.up, x);
        for (size_t i = 0; i < g.size(); ++i)
            g[i] = gelu_tanh(g[i]) * u[i];
        std::vector<double> d = gemma_rmsnorm(matvec(L.down, g).data(), L.post_ffn_norm, H, eps_);
        for (int64_t i = 0; i < H; ++i)
            h[static_cast<size_t>(i)] += d[static_cast<size_t>(i)];
    }
    // Final norm, tied lm_head, final_logit_softcapping.
    std::vector<double> logits = matvec(embed_, gemma_rmsnorm(h.data(), final_norm_, H, eps_));
    if (final_cap_ > 0)
        for (double& l : logits)
            l = std::tanh(l / final_cap_) * final_cap_;
    return logits;
}

} // namespace llmwb::test
