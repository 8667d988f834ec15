// The dispatch shared by the SIMD attention kernels (attention_avx2.cpp, attention_avx512.cpp):
// head dims they compile for, the split into chunks of at most 64 heads (their per-head 1/sum
// array), and the run-time (head_dim, KvDtype) -> template arguments switch. In an anonymous
// namespace, like run_by_nt in matmul_kernels.h: each SIMD file keeps its own internal copy, so
// instantiations compiled for different instruction sets are never merged.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/attention.h"

namespace llmwb::kernels {
namespace {

constexpr bool attention_simd_head_dim(int head_dim) {
    return head_dim == 32 || head_dim == 64 || head_dim == 96 || head_dim == 128 ||
           head_dim == 256; // 256: gemma2/3
}

template <KvDtype T> using KvType = std::integral_constant<KvDtype, T>;

// Calls f(std::integral_constant<int, head_dim / Lanes>{}, KvType<t>{}, out, q, n_heads) for each
// chunk of at most 64 heads; head_dim must satisfy attention_simd_head_dim (else nothing runs).
template <int Lanes, class F>
void attend_group_chunks(float* out, const float* q, int n_heads, int head_dim, int32_t n_keys,
                         KvDtype t, F&& f) {
    if (n_keys <= 0 || n_heads <= 0 || !attention_simd_head_dim(head_dim))
        return;
    auto with_type = [&](auto cols, float* o, const float* qq, int nh) {
        switch (t) {
        case KvDtype::F32:
            return f(cols, KvType<KvDtype::F32>{}, o, qq, nh);
        case KvDtype::F16:
            return f(cols, KvType<KvDtype::F16>{}, o, qq, nh);
        case KvDtype::BF16:
            return f(cols, KvType<KvDtype::BF16>{}, o, qq, nh);
        case KvDtype::Fp8E4M3:
            return f(cols, KvType<KvDtype::Fp8E4M3>{}, o, qq, nh);
        case KvDtype::Fp8E5M2:
            return f(cols, KvType<KvDtype::Fp8E5M2>{}, o, qq, nh);
        case KvDtype::Int8:
            return f(cols, KvType<KvDtype::Int8>{}, o, qq, nh);
        }
    };
    for (int h0 = 0; h0 < n_heads; h0 += 64) {
        const int nh = std::min(64, n_heads - h0);
        float* o = out + static_cast<int64_t>(h0) * head_dim;
        const float* qq = q + static_cast<int64_t>(h0) * head_dim;
        switch (head_dim) {
        case 32:
            with_type(std::integral_constant<int, 32 / Lanes>{}, o, qq, nh);
            break;
        case 64:
            with_type(std::integral_constant<int, 64 / Lanes>{}, o, qq, nh);
            break;
        case 96:
            with_type(std::integral_constant<int, 96 / Lanes>{}, o, qq, nh);
            break;
        case 128:
            with_type(std::integral_constant<int, 128 / Lanes>{}, o, qq, nh);
            break;
        case 256:
            with_type(std::integral_constant<int, 256 / Lanes>{}, o, qq, nh);
            break;
        default:
            break;
        }
    }
}

} // namespace
} // namespace llmwb::kernels
