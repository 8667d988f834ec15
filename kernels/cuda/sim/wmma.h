// cudasim: nvcuda::wmma (the 16x16x16 shapes, __half operands, float accumulators) for kernels
// compiled against the CPU emulator. Each lane holds the whole tile (the per-lane element
// layout of real fragments is unspecified, and the kernels here never index fragments), every
// operation is warp-synchronous like the real one, and the documented operand constraints are
// checked: 256-bit aligned pointers and a leading dimension that is a multiple of 16 bytes.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "kernels/cuda/sim/device.h"

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

namespace detail {
template <class Use, int M, int N, int K>
struct shape;
template <int M, int N, int K>
struct shape<matrix_a, M, N, K> {
    static constexpr int rows = M, cols = K;
};
template <int M, int N, int K>
struct shape<matrix_b, M, N, K> {
    static constexpr int rows = K, cols = N;
};
template <int M, int N, int K>
struct shape<accumulator, M, N, K> {
    static constexpr int rows = M, cols = N;
};

template <class T>
inline void check_operand(const T* p, unsigned ldm, const char* api) {
    if (reinterpret_cast<uintptr_t>(p) % 32 != 0 || (ldm * sizeof(T)) % 16 != 0) {
        std::fprintf(stderr,
                     "cudasim: wmma::%s: pointer %p must be 256-bit aligned and ldm (%u elements) "
                     "a multiple of 16 bytes\n",
                     api, static_cast<const void*>(p), ldm);
        std::abort();
    }
}
}  // namespace detail

// The tile, row-major in x: x[r * cols + c].
template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment {
    static constexpr int rows = detail::shape<Use, M, N, K>::rows;
    static constexpr int cols = detail::shape<Use, M, N, K>::cols;
    static constexpr int num_elements = rows * cols;
    T x[num_elements];
};

template <class Use, int M, int N, int K, class T, class L>
inline void fill_fragment(fragment<Use, M, N, K, T, L>& f, const T& v) {
    __syncwarp();
    for (auto& e : f.x) e = v;
}

// matrix_a / matrix_b with the layout in the fragment type.
template <class Use, int M, int N, int K, class T, class L>
inline void load_matrix_sync(fragment<Use, M, N, K, T, L>& f, const T* p, unsigned ldm) {
    static_assert(std::is_same_v<L, row_major> || std::is_same_v<L, col_major>);
    __syncwarp();
    detail::check_operand(p, ldm, "load_matrix_sync");
    using F = fragment<Use, M, N, K, T, L>;
    for (int r = 0; r < F::rows; ++r)
        for (int c = 0; c < F::cols; ++c)
            f.x[r * F::cols + c] = std::is_same_v<L, row_major> ? p[size_t(r) * ldm + c]
                                                                : p[size_t(c) * ldm + r];
}

// Accumulators: the layout is an argument.
template <int M, int N, int K, class T>
inline void load_matrix_sync(fragment<accumulator, M, N, K, T>& f, const T* p, unsigned ldm,
                             layout_t layout) {
    __syncwarp();
    detail::check_operand(p, ldm, "load_matrix_sync");
    for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c)
            f.x[r * N + c] =
                layout == mem_row_major ? p[size_t(r) * ldm + c] : p[size_t(c) * ldm + r];
}

template <int M, int N, int K, class T>
inline void store_matrix_sync(T* p, const fragment<accumulator, M, N, K, T>& f, unsigned ldm,
                              layout_t layout) {
    __syncwarp();
    detail::check_operand(p, ldm, "store_matrix_sync");
    for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c)
            (layout == mem_row_major ? p[size_t(r) * ldm + c] : p[size_t(c) * ldm + r]) =
                f.x[r * N + c];
    __syncwarp();  // every lane stores the whole tile: finish before anyone reads it back
}

// d = a b + c, fp32 accumulation of the (exact) products of the f16 operands.
template <int M, int N, int K, class LA, class LB>
inline void mma_sync(fragment<accumulator, M, N, K, float>& d,
                     const fragment<matrix_a, M, N, K, __half, LA>& a,
                     const fragment<matrix_b, M, N, K, __half, LB>& b,
                     const fragment<accumulator, M, N, K, float>& c) {
    __syncwarp();
    float out[M * N];
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = c.x[i * N + j];
            for (int k = 0; k < K; ++k)
                s += __half2float(a.x[i * K + k]) * __half2float(b.x[k * N + j]);
            out[i * N + j] = s;
        }
    for (int i = 0; i < M * N; ++i) d.x[i] = out[i];
}

}  // namespace nvcuda::wmma
