// cudasim: nvcuda::wmma (the 16x16x16 shapes, __half operands, float accumulators) for kernels
// compiled against the CPU emulator. Each lane holds the whole tile (the per-lane element
// layout of real fragments is unspecified, and the kernels here never index fragments), every
// operation is warp-synchronous like the real one (computed once per warp, copied to the other
// lanes), and the documented operand constraints are checked: the same pointer and ldm in every
// lane, 256-bit aligned pointers and a leading dimension that is a multiple of 16 bytes.
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
template <class Use, int M, int N, int K> struct shape;
template <int M, int N, int K> struct shape<matrix_a, M, N, K> {
    static constexpr int rows = M, cols = K;
};
template <int M, int N, int K> struct shape<matrix_b, M, N, K> {
    static constexpr int rows = K, cols = N;
};
template <int M, int N, int K> struct shape<accumulator, M, N, K> {
    static constexpr int rows = M, cols = N;
};

// The warp-synchronous entry of a load or store: every lane must pass the same pointer and ldm,
// the pointer 256-bit aligned and ldm a multiple of 16 bytes.
template <class T> inline void enter(const T* p, unsigned ldm, const char* api) {
    const uint64_t key = reinterpret_cast<uintptr_t>(p) ^ (uint64_t{ldm} << 48);
    if (!::cudasim::warp_uniform(key)) {
        std::fprintf(stderr,
                     "cudasim: wmma::%s: the lanes of a warp pass different pointers or "
                     "leading dimensions\n",
                     api);
        std::abort();
    }
    if (reinterpret_cast<uintptr_t>(p) % 32 != 0 || (ldm * sizeof(T)) % 16 != 0) {
        std::fprintf(stderr,
                     "cudasim: wmma::%s: pointer %p must be 256-bit aligned and ldm (%u elements) "
                     "a multiple of 16 bytes\n",
                     api, static_cast<const void*>(p), ldm);
        std::abort();
    }
}
} // namespace detail

inline float to_float(float v) {
    return v;
}
inline float to_float(__half v) {
    return __half2float(v);
}

// The tile, row-major in x: x[r * cols + c], held as float whatever T is (f16 values are exact in
// float, and products of two of them too, as on the tensor cores).
template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment {
    static constexpr int rows = detail::shape<Use, M, N, K>::rows;
    static constexpr int cols = detail::shape<Use, M, N, K>::cols;
    static constexpr int num_elements = rows * cols;
    float x[num_elements];
};

template <class Use, int M, int N, int K, class T, class L>
inline void fill_fragment(fragment<Use, M, N, K, T, L>& f, const T& v) {
    __syncwarp();
    const float fv = to_float(v);
    for (auto& e : f.x)
        e = fv;
}

// matrix_a / matrix_b with the layout in the fragment type.
template <class Use, int M, int N, int K, class T, class L>
inline void load_matrix_sync(fragment<Use, M, N, K, T, L>& f, const T* p, unsigned ldm) {
    static_assert(std::is_same_v<L, row_major> || std::is_same_v<L, col_major>);
    detail::enter(p, ldm, "load_matrix_sync");
    using F = fragment<Use, M, N, K, T, L>;
    ::cudasim::warp_once(f.x, sizeof f.x, [&](void* buf) {
        auto* x = static_cast<float*>(buf);
        for (int r = 0; r < F::rows; ++r)
            for (int c = 0; c < F::cols; ++c)
                x[r * F::cols + c] = to_float(
                    std::is_same_v<L, row_major> ? p[size_t(r) * ldm + c] : p[size_t(c) * ldm + r]);
    });
}

// Accumulators: the layout is an argument.
template <int M, int N, int K, class T>
inline void load_matrix_sync(fragment<accumulator, M, N, K, T>& f, const T* p, unsigned ldm,
                             layout_t layout) {
    detail::enter(p, ldm, "load_matrix_sync");
    for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c)
            f.x[r * N + c] =
                layout == mem_row_major ? p[size_t(r) * ldm + c] : p[size_t(c) * ldm + r];
}

template <int M, int N, int K, class T>
inline void store_matrix_sync(T* p, const fragment<accumulator, M, N, K, T>& f, unsigned ldm,
                              layout_t layout) {
    detail::enter(p, ldm, "store_matrix_sync");
    // Every lane holds the whole tile; the first one to run stores it.
    unsigned char done;
    ::cudasim::warp_once(&done, 0, [&](void*) {
        for (int r = 0; r < M; ++r)
            for (int c = 0; c < N; ++c)
                (layout == mem_row_major ? p[size_t(r) * ldm + c] : p[size_t(c) * ldm + r]) =
                    f.x[r * N + c];
    });
}

// d = a b + c, fp32 accumulation of the (exact) products of the f16 operands.
template <int M, int N, int K, class LA, class LB>
inline void mma_sync(fragment<accumulator, M, N, K, float>& d,
                     const fragment<matrix_a, M, N, K, __half, LA>& a,
                     const fragment<matrix_b, M, N, K, __half, LB>& b,
                     const fragment<accumulator, M, N, K, float>& c) {
    __syncwarp();
    ::cudasim::warp_once(d.x, sizeof d.x, [&](void* buf) {
        auto* out = static_cast<float*>(buf);
        for (int i = 0; i < M * N; ++i)
            out[i] = c.x[i];
        for (int i = 0; i < M; ++i)
            for (int k = 0; k < K; ++k) {
                const float aik = a.x[i * K + k];
                for (int j = 0; j < N; ++j)
                    out[i * N + j] += aik * b.x[k * N + j];
            }
    });
}

} // namespace nvcuda::wmma
