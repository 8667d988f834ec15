// The mixture-of-experts MLP of one layer on the device (qwen3moe), the CUDA counterpart of
// engine/runtime/cpu_moe.h with the same routing: router logits = W_router x (fp32), per token a
// softmax over all experts, the top k (ties: the lower expert index), renormalised to sum to 1
// when configured. The routing is decided on the host: the router logits are copied back (one
// stream synchronisation per MoE layer, so MoE models run eagerly, without CUDA graphs), the
// token rows are grouped by expert (expert ascending, tokens ascending inside a group), and every
// expert chosen by at least one token runs once over its gathered rows:
//     gather rows -> gate, up matmuls (cuBLAS above 8 rows, the GEMV below) -> silu_mul -> down
// then each token's k expert outputs are summed with their weights in ascending expert order
// (one thread per output element: no atomics, the same order as the CPU).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/cuda/ops/launch.cuh"
#include "kernels/cuda/runner/gather_rows.cuh"
#include "kernels/cuda/runner/model_runner.h"
#include "kernels/cuda/runner/runner_util.cuh"

namespace llmwb::cuda {

namespace {

// out[t][d] = sum_j w[t][j] * y[rows[t][j]][d], j < k (rows in ascending expert order).
__global__ void moe_combine_kernel(float* __restrict__ out, const float* __restrict__ y,
                                   const int32_t* __restrict__ rows, const float* __restrict__ w,
                                   int32_t n, int32_t k, int32_t dim) {
    const int64_t total = static_cast<int64_t>(n) * dim;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t t = i / dim, d = i % dim;
        float acc = 0.0f;
        for (int32_t j = 0; j < k; ++j)
            acc += w[t * k + j] * y[static_cast<int64_t>(rows[t * k + j]) * dim + d];
        out[i] = acc;
    }
}

} // namespace

void ModelRunner::route_tokens(int32_t n) {
    const int32_t E = n_experts_, K = experts_used_;
    const float* logits = moe_logits_host_.as<float>();
    auto* gather = moe_index_host_.as<int32_t>();    // [n * K] token of each gathered row
    int32_t* combine_rows = gather + int64_t{n} * K; // [n][K] gathered rows of each token
    auto* combine_w = reinterpret_cast<float*>(combine_rows + int64_t{n} * K); // [n][K]
    moe_ids_.resize(size_t(n) * K);
    moe_w_.resize(size_t(n) * K);
    moe_probs_.resize(size_t(E));
    for (int32_t t = 0; t < n; ++t) {
        const float* lt = logits + int64_t{t} * E;
        float mx = lt[0];
        for (int32_t e = 1; e < E; ++e)
            mx = std::max(mx, lt[e]);
        float sum = 0.0f;
        for (int32_t e = 0; e < E; ++e) {
            moe_probs_[e] = std::exp(lt[e] - mx);
            sum += moe_probs_[e];
        }
        for (int32_t e = 0; e < E; ++e)
            moe_probs_[e] /= sum;
        float picked = 0.0f;
        for (int32_t i = 0; i < K; ++i) {
            int32_t best = -1;
            for (int32_t e = 0; e < E; ++e)
                if (moe_probs_[e] >= 0.0f && (best < 0 || moe_probs_[e] > moe_probs_[best]))
                    best = e;
            if (best < 0)
                best = 0; // NaN logits: any expert (the logits are NaN anyway)
            moe_ids_[size_t(t) * K + i] = best;
            moe_w_[size_t(t) * K + i] = moe_probs_[best];
            picked += moe_probs_[best];
            moe_probs_[best] = -1.0f;
        }
        if (norm_topk_ && picked > 0.0f)
            for (int32_t i = 0; i < K; ++i)
                moe_w_[size_t(t) * K + i] /= picked;
    }
    moe_start_.assign(size_t(E) + 1, 0);
    for (int32_t id : moe_ids_)
        ++moe_start_[size_t(id) + 1];
    for (int32_t e = 0; e < E; ++e)
        moe_start_[size_t(e) + 1] += moe_start_[size_t(e)];
    std::vector<int32_t> fill(moe_start_.begin(), moe_start_.end() - 1);
    for (int32_t t = 0; t < n; ++t) {
        // The token's experts in ascending order: its sum is formed as the CPU forms it.
        int32_t order[64];
        for (int32_t i = 0; i < K; ++i)
            order[i] = i;
        std::sort(order, order + K, [&](int32_t a, int32_t b) {
            return moe_ids_[size_t(t) * K + a] < moe_ids_[size_t(t) * K + b];
        });
        for (int32_t i = 0; i < K; ++i) {
            const size_t j = size_t(t) * K + order[i];
            const int32_t row = fill[size_t(moe_ids_[j])]++;
            gather[row] = t;
            combine_rows[int64_t{t} * K + i] = row;
            combine_w[int64_t{t} * K + i] = moe_w_[j];
        }
    }
}

bool ModelRunner::enqueue_moe(int32_t l, int32_t n, std::string& err) {
    const Layer& L = layers_[l];
    const int32_t E = n_experts_, K = experts_used_;
    const int64_t H = hidden_, I = expert_inter_, m = int64_t{n} * K;
    cudaStream_t s = stream_;
    float* xb = xb_.as<float>();
    if (matmul(*blas_, moe_logits_.as<float>(), L.router, xb, n, matmul_ws_.get(), matmul_ws_bytes_,
               s) != OpStatus::Ok) {
        err = std::string("router matmul: ") + last_error_message();
        return false;
    }
    cudaError_t e = cudaMemcpyAsync(moe_logits_host_.get(), moe_logits_.get(),
                                    size_t(n) * size_t(E) * 4, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
        err = std::string("router logits: ") + cudaGetErrorString(e);
        return false;
    }
    route_tokens(n);
    const size_t index_bytes = size_t(m) * 12; // gather, combine rows, combine weights
    e = cudaMemcpyAsync(moe_index_.get(), moe_index_host_.get(), index_bytes,
                        cudaMemcpyHostToDevice, s);
    if (e != cudaSuccess) {
        err = std::string("expert index upload: ") + cudaGetErrorString(e);
        return false;
    }
    const auto* gather = moe_index_.as<int32_t>();
    const int32_t* combine_rows = gather + m;
    const auto* combine_w = reinterpret_cast<const float*>(combine_rows + m);
    float *xg = moe_x_.as<float>(), *g = moe_gate_.as<float>(), *u = moe_up_.as<float>(),
          *y = moe_y_.as<float>();
    LLMWB_LAUNCH(static_cast<unsigned>(m), 256, 0, s, gather_rows_kernel)
    (xg, xb, gather, static_cast<int32_t>(m), hidden_);
    if ((e = cudaGetLastError()) != cudaSuccess) {
        err = std::string("expert gather: ") + cudaGetErrorString(e);
        return false;
    }
    for (int32_t x = 0; x < E; ++x) {
        const int64_t r0 = moe_start_[size_t(x)], cnt = moe_start_[size_t(x) + 1] - r0;
        if (cnt == 0)
            continue;
        const DeviceMatrix* w = &L.experts[size_t(x) * 3];
        OpStatus st = matmul(*blas_, g + r0 * I, w[0], xg + r0 * H, cnt, matmul_ws_.get(),
                             matmul_ws_bytes_, s);
        if (st == OpStatus::Ok)
            st = matmul(*blas_, u + r0 * I, w[1], xg + r0 * H, cnt, matmul_ws_.get(),
                        matmul_ws_bytes_, s);
        if (st == OpStatus::Ok)
            st = silu_mul(g + r0 * I, g + r0 * I, u + r0 * I, cnt * I, s);
        if (st == OpStatus::Ok)
            st = matmul(*blas_, y + r0 * H, w[2], g + r0 * I, cnt, matmul_ws_.get(),
                        matmul_ws_bytes_, s);
        if (st != OpStatus::Ok) {
            err = "layer " + std::to_string(l) + " expert " + std::to_string(x) + ": " +
                  op_status_name(st) + " (" + last_error_message() + ")";
            return false;
        }
    }
    const int64_t total = int64_t{n} * H;
    const auto blocks = static_cast<unsigned>(std::min<int64_t>((total + 255) / 256, 4096));
    LLMWB_LAUNCH(blocks, 256, 0, s, moe_combine_kernel)
    (delta_.as<float>(), y, combine_rows, combine_w, n, K, hidden_);
    if ((e = cudaGetLastError()) != cudaSuccess) {
        err = std::string("expert combine: ") + cudaGetErrorString(e);
        return false;
    }
    return true;
}

} // namespace llmwb::cuda
