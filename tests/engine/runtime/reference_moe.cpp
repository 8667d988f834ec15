#include "reference_moe.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/quant.h"

namespace llmwb::test {

namespace {

constexpr int32_t kMaxPositions = 256; // enough for every MoE test

std::vector<double> rmsnorm(const double* x, const std::vector<double>& w, int64_t n, double eps) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i)
        ss += x[i] * x[i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    std::vector<double> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        out[static_cast<size_t>(i)] = x[i] * inv * w[static_cast<size_t>(i)];
    return out;
}

} // namespace

ReferenceRouting reference_route(const std::vector<double>& logits, int32_t k, bool renormalize) {
    const double mx = *std::max_element(logits.begin(), logits.end());
    std::vector<double> p(logits.size());
    double z = 0;
    for (size_t e = 0; e < p.size(); ++e)
        z += (p[e] = std::exp(logits[e] - mx));
    for (double& v : p)
        v /= z;
    std::vector<int32_t> order(p.size());
    for (size_t e = 0; e < order.size(); ++e)
        order[e] = static_cast<int32_t>(e);
    // Most probable first; a stable sort keeps the lower index first among equals.
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return p[size_t(a)] > p[size_t(b)]; });
    ReferenceRouting r;
    double sum = 0;
    for (int32_t i = 0; i < k; ++i) {
        r.ids.push_back(order[size_t(i)]);
        r.weights.push_back(p[size_t(order[size_t(i)])]);
        sum += r.weights.back();
    }
    if (renormalize)
        for (double& w : r.weights)
            w /= sum;
    return r;
}

ReferenceMoeModel::Mat ReferenceMoeModel::dequant(const TensorView& t) {
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

ReferenceMoeModel::ReferenceMoeModel(const LoadedModel& model) : c_(model.config) {
    const ModelWeights& w = model.weights;
    embd_ = dequant(w.tok_embd);
    out_ = w.output.present() ? dequant(w.output) : embd_;
    out_norm_ = dequant(w.output_norm).w;
    for (int32_t i = 0; i < c_.head_dim / 2; ++i)
        inv_freq_.push_back(1.0 / std::pow(static_cast<double>(c_.rope_theta),
                                           static_cast<double>(2 * i) / c_.head_dim));
    for (const LayerWeights& lw : w.layers) {
        Layer l;
        l.wq = dequant(lw.wq);
        l.wk = dequant(lw.wk);
        l.wv = dequant(lw.wv);
        l.wo = dequant(lw.wo);
        l.router = dequant(lw.router);
        for (const ExpertWeights& e : lw.experts)
            l.experts.push_back({dequant(e.w_gate), dequant(e.w_up), dequant(e.w_down)});
        l.attn_norm = dequant(lw.attn_norm).w;
        l.ffn_norm = dequant(lw.ffn_norm).w;
        l.q_norm = dequant(lw.q_norm).w;
        l.k_norm = dequant(lw.k_norm).w;
        l.k_cache.assign(static_cast<size_t>(kMaxPositions) * c_.num_kv_heads * c_.head_dim, 0.0);
        l.v_cache.assign(l.k_cache.size(), 0.0);
        layers_.push_back(std::move(l));
    }
}

std::vector<double> ReferenceMoeModel::step(int32_t token) {
    const int64_t H = c_.hidden_size, hd = c_.head_dim, half = hd / 2;
    const int64_t nh = c_.num_heads, nkv = c_.num_kv_heads, group = nh / nkv;
    const double eps = c_.rms_norm_eps;
    const int32_t pos = pos_++;
    auto matvec = [](const Mat& m, const std::vector<double>& x) {
        std::vector<double> y(static_cast<size_t>(m.rows));
        for (int64_t r = 0; r < m.rows; ++r) {
            double s = 0;
            for (int64_t c = 0; c < m.cols; ++c)
                s += m.w[static_cast<size_t>(r * m.cols + c)] * x[static_cast<size_t>(c)];
            y[static_cast<size_t>(r)] = s;
        }
        return y;
    };
    auto rope = [&](std::vector<double>& v, int64_t heads) { // rotate-half pairs (i, i + hd/2)
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t i = 0; i < half; ++i) {
                const size_t a = size_t(h * hd + i), b = a + size_t(half);
                const double ang = pos * inv_freq_[size_t(i)];
                const double x0 = v[a], x1 = v[b];
                v[a] = x0 * std::cos(ang) - x1 * std::sin(ang);
                v[b] = x0 * std::sin(ang) + x1 * std::cos(ang);
            }
    };
    auto head_norm = [&](std::vector<double>& v, int64_t heads, const std::vector<double>& w) {
        for (int64_t h = 0; h < heads; ++h) {
            const std::vector<double> n = rmsnorm(v.data() + h * hd, w, hd, eps);
            std::copy(n.begin(), n.end(), v.begin() + h * hd);
        }
    };

    last_experts_.clear();
    std::vector<double> x(embd_.w.begin() + token * H, embd_.w.begin() + (token + 1) * H);
    for (Layer& l : layers_) {
        std::vector<double> xb = rmsnorm(x.data(), l.attn_norm, H, eps);
        std::vector<double> q = matvec(l.wq, xb), k = matvec(l.wk, xb), v = matvec(l.wv, xb);
        head_norm(q, nh, l.q_norm);
        head_norm(k, nkv, l.k_norm);
        rope(q, nh);
        rope(k, nkv);
        std::copy(k.begin(), k.end(), l.k_cache.begin() + pos * nkv * hd);
        std::copy(v.begin(), v.end(), l.v_cache.begin() + pos * nkv * hd);
        std::vector<double> att(static_cast<size_t>(nh * hd), 0.0);
        for (int64_t h = 0; h < nh; ++h) {
            const int64_t kvh = h / group;
            std::vector<double> score(static_cast<size_t>(pos + 1));
            double mx = -1e300;
            for (int32_t j = 0; j <= pos; ++j) {
                double s = 0;
                for (int64_t d = 0; d < hd; ++d)
                    s += q[size_t(h * hd + d)] * l.k_cache[size_t((j * nkv + kvh) * hd + d)];
                score[size_t(j)] = s / std::sqrt(static_cast<double>(hd));
                mx = std::max(mx, score[size_t(j)]);
            }
            double z = 0;
            for (double& s : score)
                z += (s = std::exp(s - mx));
            for (int32_t j = 0; j <= pos; ++j)
                for (int64_t d = 0; d < hd; ++d)
                    att[size_t(h * hd + d)] +=
                        score[size_t(j)] / z * l.v_cache[size_t((j * nkv + kvh) * hd + d)];
        }
        const std::vector<double> o = matvec(l.wo, att);
        for (int64_t i = 0; i < H; ++i)
            x[size_t(i)] += o[size_t(i)];

        // Mixture of experts.
        xb = rmsnorm(x.data(), l.ffn_norm, H, eps);
        const ReferenceRouting r =
            reference_route(matvec(l.router, xb), c_.num_experts_used, c_.expert_norm_topk);
        last_experts_.push_back(r.ids);
        for (size_t i = 0; i < r.ids.size(); ++i) {
            const Expert& e = l.experts[size_t(r.ids[i])];
            std::vector<double> g = matvec(e.gate, xb);
            const std::vector<double> u = matvec(e.up, xb);
            for (size_t j = 0; j < g.size(); ++j)
                g[j] = g[j] / (1.0 + std::exp(-g[j])) * u[j];
            const std::vector<double> d = matvec(e.down, g);
            for (int64_t j = 0; j < H; ++j)
                x[size_t(j)] += r.weights[i] * d[size_t(j)];
        }
    }
    const std::vector<double> xf = rmsnorm(x.data(), out_norm_, H, eps);
    return matvec(out_, xf);
}

} // namespace llmwb::test
