// ModelRunner's bf16 weight cache (bf16 copies of quantized matrices for prefill GEMMs), the
// matmul that uses it, and the step-limit reservation (kept apart from model_runner.cu's
// forward).
#include <string>
#include <vector>

#include "kernels/cuda/runner/model_runner.h"

namespace llmwb::cuda {

namespace {

constexpr int64_t kGemvMaxRows = 8; // matmul(): more token rows than this go to cuBLAS

std::string cuda_error(const char* what, cudaError_t e) {
    return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

std::string op_error(const char* what, OpStatus s) {
    std::string t = std::string(what) + ": " + op_status_name(s);
    const char* m = last_error_message();
    if (m && *m)
        t += std::string(" (") + m + ")";
    return t;
}

bool is_quantized(DType t) {
    return dtype_block_elems(t) > 1;
}

} // namespace

const DeviceMatrix& ModelRunner::matrix_at(int32_t slot) const {
    if (slot >= layers_n_ * kLayerMatrices)
        return lm_head_;
    const Layer& L = layers_[static_cast<size_t>(slot / kLayerMatrices)];
    switch (slot % kLayerMatrices) {
    case 0:
        return L.wq;
    case 1:
        return L.wk;
    case 2:
        return L.wv;
    case 3:
        return L.wo;
    case 4:
        return L.w_gate;
    case 5:
        return L.w_up;
    default:
        return L.w_down;
    }
}

bool ModelRunner::mm(float* out, int32_t slot, const float* x, int64_t n, const char* what,
                     std::string& err) {
    const DeviceMatrix& w = matrix_at(slot);
    const void* cached = n > kGemvMaxRows && static_cast<size_t>(slot) < cache_.size()
                             ? cache_[static_cast<size_t>(slot)]
                             : nullptr;
    const DeviceMatrix use = cached ? DeviceMatrix{DType::BF16, cached, w.rows, w.cols} : w;
    const OpStatus s = matmul(*blas_, out, use, x, n, matmul_ws_.get(), matmul_ws_bytes_, stream_);
    if (s != OpStatus::Ok) {
        err = op_error(what, s);
        return false;
    }
    if (cached)
        ++cached_matmuls_;
    return true;
}

void ModelRunner::free_weight_cache() {
    for (void*& p : cache_) {
        if (p)
            cudaFree(p);
        p = nullptr;
    }
    cache_bytes_ = 0;
    cache_count_ = 0;
}

bool ModelRunner::set_weight_cache(const int32_t* slots, int32_t n, std::string& err) {
    const int32_t total = layers_n_ * kLayerMatrices + 1;
    std::vector<char> want(static_cast<size_t>(total), 0);
    for (int32_t i = 0; i < n; ++i) {
        const int32_t s = slots[i];
        if (s < 0 || s >= total || want[static_cast<size_t>(s)]) {
            err = "weight cache: matrix slot " + std::to_string(s) + " is out of range or repeated";
            return false;
        }
        if (!is_quantized(matrix_at(s).type)) {
            err = "weight cache: matrix slot " + std::to_string(s) + " (" +
                  dtype_name(matrix_at(s).type) + ") is not quantized";
            return false;
        }
        want[static_cast<size_t>(s)] = 1;
    }
    cudaError_t e = cudaSetDevice(device_);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(stream_);
    if (e != cudaSuccess) {
        err = cuda_error("weight cache", e);
        return false;
    }
    drop_graphs(); // graphs of more than 8 decode rows captured the old matrices
    cache_.resize(static_cast<size_t>(total), nullptr);
    // Copies no longer wanted go first, so that their memory serves the new ones.
    for (int32_t s = 0; s < total; ++s) {
        void*& p = cache_[static_cast<size_t>(s)];
        if (p && !want[static_cast<size_t>(s)]) {
            const DeviceMatrix& w = matrix_at(s);
            cudaFree(p);
            p = nullptr;
            cache_bytes_ -= w.rows * w.cols * 2;
            --cache_count_;
        }
    }
    for (int32_t s = 0; s < total; ++s) {
        void*& p = cache_[static_cast<size_t>(s)];
        if (!want[static_cast<size_t>(s)] || p)
            continue;
        const DeviceMatrix& w = matrix_at(s);
        const size_t bytes = static_cast<size_t>(w.rows) * static_cast<size_t>(w.cols) * 2;
        e = cudaMalloc(&p, bytes);
        if (e != cudaSuccess) {
            p = nullptr;
            cudaGetLastError();
            free_weight_cache();
            err = "weight cache: cudaMalloc of " + std::to_string(bytes >> 20) +
                  " MiB: " + cudaGetErrorString(e);
            return false;
        }
        cache_bytes_ += static_cast<int64_t>(bytes);
        ++cache_count_;
        const OpStatus st = dequantize_to_bf16(p, w, stream_);
        if (st != OpStatus::Ok) {
            err = op_error("weight cache", st);
            free_weight_cache();
            return false;
        }
    }
    e = cudaStreamSynchronize(stream_);
    if (e != cudaSuccess) {
        free_weight_cache();
        err = cuda_error("weight cache", e);
        return false;
    }
    return true;
}

int64_t ModelRunner::step_buffer_bytes() const {
    size_t b = 0;
    for (const DeviceBuffer* d :
         {&x_,       &xb_,         &delta_,     &q_,          &k_,         &v_,       &att_,
          &gate_,    &up_,         &xl_,        &logits_dev_, &matmul_ws_, &attn_ws_, &meta_dev_,
          &ids_dev_, &moe_logits_, &moe_index_, &moe_x_,      &moe_gate_,  &moe_up_,  &moe_y_})
        b += d->bytes();
    return static_cast<int64_t>(b);
}

bool ModelRunner::reserve(int32_t max_tokens, int32_t max_seqs, std::string& err) {
    const cudaError_t e = cudaSetDevice(device_);
    if (e != cudaSuccess) {
        err = cuda_error("cudaSetDevice", e);
        return false;
    }
    if (max_tokens < 1 || max_seqs < 1) {
        err = "step limits must be >= 1";
        return false;
    }
    // Buffers in use by queued work must not move under it.
    const cudaError_t se = cudaStreamSynchronize(stream_);
    if (se != cudaSuccess) {
        err = cuda_error("step limits", se);
        return false;
    }
    return ensure_step_buffers(max_tokens, max_seqs, 0, err);
}

} // namespace llmwb::cuda
