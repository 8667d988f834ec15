// Prefill attention on tensor cores (WMMA 16x16x16, f16 operands, fp32 accumulation).
//
// A block of 4 warps handles 64 query rows of one head of one sequence (warp w: rows 16w..16w+15)
// and walks the keys the last row may see in tiles of 32:
//   S = (scale * Q) K^T           wmma into shared memory (fp32)
//   online softmax per row        one lane per row: running max m, sum l, rescale factor alpha
//   O = alpha * O + P V           O lives in shared memory (fp32); P is stored as f16
// Every row-level buffer (S, P, O, m, l, alpha) of a row is touched by its own warp only, so
// only the shared K/V tile needs block-wide barriers.
//
// Every KV type runs here: K/V are dequantized as the tiles are staged (bf16, fp8 times the
// layer's scale, int8 times the row's scale, in registers) into the same f16 shared tiles, so the
// mma is f16 for all of them. Converting one 32-key tile costs a few instructions per element
// against the 2 x 32 x head_dim multiply-adds per query row it feeds, and keeps one kernel; the
// f16 rounding it adds is of the order of the rounding Q and P already get here. Values beyond
// f16's range (possible for bf16 and scaled fp8 only) saturate at +-65504.
#include <cuda_fp16.h>
#ifdef LLMWB_CUDASIM
#include "kernels/cuda/sim/wmma.h"
#else
#include <mma.h>
#endif

#include <climits>

#include "kernels/cuda/ops/attention_tc.cuh"
#include "kernels/cuda/ops/common.cuh"
#include "kernels/cuda/ops/kv_cache.cuh"

namespace llmwb::cuda::detail {

namespace {

using namespace nvcuda;

constexpr int kBM = 64;   // query rows per block
constexpr int kBN = 32;   // keys per tile
constexpr int kWarps = 4; // kBM / 16
constexpr int kMaxDK = 8; // head_dim / 16 at most
constexpr int kLdS = kBN + 4;
constexpr int kLdP = kBN + 8;

struct TcArgs {
    float* out;
    const float* q;
    const void* k_cache;
    const void* v_cache;
    const int32_t* query_start;
    const int32_t* context_lens;
    const int32_t* block_tables;
    int32_t max_blocks_per_seq;
    int32_t heads, kv_heads, head_dim, block_size;
    float scale;
    int32_t window; // sliding window (0: none)
    float softcap;  // attention-logit soft-cap (0: none)
    KvGeom geom;
    float k_scale, v_scale;
};

// Shared memory layout (every region a multiple of 32 bytes, as WMMA pointers must be):
//   O [kBM][D + 4] f32 (first holds Q as f16 [kBM][D + 8]), K, V [kBN][D + 8] f16,
//   S [kBM][kLdS] f32, P [kBM][kLdP] f16, m, l, alpha [kBM] f32.
size_t tc_smem_bytes(int d) {
    return sizeof(float) * kBM * (d + 4) + 2 * sizeof(__half) * kBN * (d + 8) +
           sizeof(float) * kBM * kLdS + sizeof(__half) * kBM * kLdP + 3 * sizeof(float) * kBM;
}

// Four dequantized cache elements as two half2 (8-byte aligned destination); F16 is copied.
template <KvDtype T>
__device__ __forceinline__ void copy4(__half* dst, const unsigned char* src, float scale) {
    if constexpr (T == KvDtype::F16) {
        *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(src);
    } else {
        float4 v = load_kv4<T>(src, scale);
        if constexpr (T != KvDtype::F32) { // saturate what f16 cannot hold
            constexpr float kMax = 65504.0f;
            v.x = fminf(fmaxf(v.x, -kMax), kMax);
            v.y = fminf(fmaxf(v.y, -kMax), kMax);
            v.z = fminf(fmaxf(v.z, -kMax), kMax);
            v.w = fminf(fmaxf(v.w, -kMax), kMax);
        }
        reinterpret_cast<__half2*>(dst)[0] = __floats2half2_rn(v.x, v.y);
        reinterpret_cast<__half2*>(dst)[1] = __floats2half2_rn(v.z, v.w);
    }
}

template <KvDtype T> __global__ void __launch_bounds__(kWarps * 32) attention_tc_kernel(TcArgs a) {
    LLMWB_DYNAMIC_SHARED(unsigned char, smem_raw);
    const int D = a.head_dim;
    const int dk = D / 16;
    const int ldo = D + 4, ldkv = D + 8;
    float* os = reinterpret_cast<float*>(smem_raw);
    __half* ks = reinterpret_cast<__half*>(os + kBM * ldo);
    __half* vs = ks + kBN * ldkv;
    float* ss = reinterpret_cast<float*>(vs + kBN * ldkv);
    __half* ps = reinterpret_cast<__half*>(ss + kBM * kLdS);
    float* m_s = reinterpret_cast<float*>(ps + kBM * kLdP);
    float* l_s = m_s + kBM;
    float* alpha_s = l_s + kBM;

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int seq = blockIdx.y / a.heads, head = blockIdx.y % a.heads;
    const int kvh = head / (a.heads / a.kv_heads);
    const int32_t q0 = a.query_start[seq];
    const int32_t qlen = a.query_start[seq + 1] - q0;
    const int32_t ctx = a.context_lens[seq];
    const int32_t rb = static_cast<int32_t>(blockIdx.x) * kBM;
    if (qlen < kTcMinQuery || rb >= qlen)
        return; // uniform over the block
    const int32_t rows_here = qlen - rb < kBM ? qlen - rb : kBM;
    const int32_t kend = ctx - qlen + rb + rows_here; // keys [0, kend) (last row's limit + 1)
    const int64_t q_stride = static_cast<int64_t>(a.heads) * D;
    const int32_t* table = a.block_tables + static_cast<int64_t>(seq) * a.max_blocks_per_seq;

    // Q (pre-scaled, f16) staged in the O region, then kept in fragments.
    __half* qs = reinterpret_cast<__half*>(os);
    for (int i = tid; i < kBM * D; i += blockDim.x) {
        const int r = i / D, d = i % D;
        float v = 0.0f;
        if (r < rows_here)
            v = a.q[(q0 + rb + r) * q_stride + static_cast<int64_t>(head) * D + d] * a.scale;
        qs[r * ldkv + d] = __float2half_rn(v);
    }
    __syncthreads();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> qf[kMaxDK];
#pragma unroll
    for (int kk = 0; kk < kMaxDK; ++kk)
        if (kk < dk)
            wmma::load_matrix_sync(qf[kk], qs + warp * 16 * ldkv + kk * 16, ldkv);
    __syncthreads(); // the region becomes O
    for (int i = tid; i < kBM * ldo; i += blockDim.x)
        os[i] = 0.0f;
    if (tid < kBM) {
        m_s[tid] = -INFINITY;
        l_s[tid] = 0.0f;
    }

    const auto* kc = static_cast<const unsigned char*>(a.k_cache);
    const auto* vc = static_cast<const unsigned char*>(a.v_cache);
    constexpr int elem = T == KvDtype::F32 ? 4 : (T == KvDtype::F16 || T == KvDtype::BF16 ? 2 : 1);
    const int d4 = D / 4;
    // Under a sliding window the block's first row has the earliest window: keys before it (and
    // their possibly freed blocks) are never read.
    const int32_t first = ctx - qlen + rb - a.window + 1;
    const int32_t kstart = a.window > 0 && first > 0 ? first : 0;
    for (int32_t t0 = kstart; t0 < kend; t0 += kBN) {
        __syncthreads(); // previous tile fully used (and O/m/l initialised)
        for (int i = tid; i < kBN * d4; i += blockDim.x) {
            const int j = i / d4, d = (i % d4) * 4;
            const int32_t key = t0 + j;
            __half* kd = ks + j * ldkv + d;
            __half* vd = vs + j * ldkv + d;
            if (key < kend) {
                const int64_t blk = table[key / a.block_size];
                const int32_t o = key % a.block_size;
                copy4<T>(kd, kv_row(kc, a.geom, blk, o, kvh) + d * elem,
                         kv_row_scale<T>(kc, a.geom, blk, o, kvh, a.k_scale));
                copy4<T>(vd, kv_row(vc, a.geom, blk, o, kvh) + d * elem,
                         kv_row_scale<T>(vc, a.geom, blk, o, kvh, a.v_scale));
            } else {
                const __half2 z = __floats2half2_rn(0.0f, 0.0f);
                reinterpret_cast<__half2*>(kd)[0] = z;
                reinterpret_cast<__half2*>(kd)[1] = z;
                reinterpret_cast<__half2*>(vd)[0] = z;
                reinterpret_cast<__half2*>(vd)[1] = z;
            }
        }
        __syncthreads();

        // S rows of this warp = Q K^T.
#pragma unroll
        for (int n = 0; n < kBN / 16; ++n) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> sf;
            wmma::fill_fragment(sf, 0.0f);
#pragma unroll
            for (int kk = 0; kk < kMaxDK; ++kk) {
                if (kk < dk) {
                    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> kf;
                    wmma::load_matrix_sync(kf, ks + n * 16 * ldkv + kk * 16, ldkv);
                    wmma::mma_sync(sf, qf[kk], kf, sf);
                }
            }
            wmma::store_matrix_sync(ss + warp * 16 * kLdS + n * 16, sf, kLdS, wmma::mem_row_major);
        }
        __syncwarp();

        // Online softmax: lane r < 16 owns row 16 * warp + r.
        if (lane < 16) {
            const int r = warp * 16 + lane;
            const int32_t lim = ctx - qlen + rb + r; // last key this row sees
            const int32_t lo = a.window > 0 && lim - a.window + 1 > 0 ? lim - a.window + 1 : 0;
            float* srow = ss + r * kLdS;
            if (a.softcap > 0.0f && r < rows_here)
                for (int j = 0; j < kBN; ++j)
                    srow[j] = a.softcap * tanhf(srow[j] / a.softcap);
            __half* prow = ps + r * kLdP;
            float mx = -INFINITY;
            if (r < rows_here)
                for (int j = 0; j < kBN; ++j)
                    if (t0 + j <= lim && t0 + j >= lo && t0 + j < kend)
                        mx = fmaxf(mx, srow[j]);
            float alpha = 1.0f;
            if (mx == -INFINITY) { // padding row or no visible key in this tile
                for (int j = 0; j < kBN; ++j)
                    prow[j] = __float2half_rn(0.0f);
            } else {
                const float m_new = fmaxf(m_s[r], mx);
                alpha = expf(m_s[r] - m_new); // 0 on the first visible tile
                float sum = 0.0f;
                for (int j = 0; j < kBN; ++j) {
                    const bool vis = t0 + j <= lim && t0 + j >= lo && t0 + j < kend;
                    const float pj = vis ? expf(srow[j] - m_new) : 0.0f;
                    const __half ph = __float2half_rn(pj);
                    prow[j] = ph;
                    sum += __half2float(ph); // l sums what P V multiplies
                }
                l_s[r] = l_s[r] * alpha + sum;
                m_s[r] = m_new;
            }
            alpha_s[r] = alpha;
        }
        __syncwarp();

        // O rows of this warp: rescale, then add P V.
        for (int i = lane; i < 16 * D; i += 32) {
            const int r = warp * 16 + i / D, d = i % D;
            os[r * ldo + d] *= alpha_s[r];
        }
        __syncwarp();
#pragma unroll
        for (int n = 0; n < kMaxDK; ++n) {
            if (n < dk) {
                wmma::fragment<wmma::accumulator, 16, 16, 16, float> of;
                float* optr = os + warp * 16 * ldo + n * 16;
                wmma::load_matrix_sync(of, optr, ldo, wmma::mem_row_major);
#pragma unroll
                for (int kk = 0; kk < kBN / 16; ++kk) {
                    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> pf;
                    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> vf;
                    wmma::load_matrix_sync(pf, ps + warp * 16 * kLdP + kk * 16, kLdP);
                    wmma::load_matrix_sync(vf, vs + kk * 16 * ldkv + n * 16, ldkv);
                    wmma::mma_sync(of, pf, vf, of);
                }
                wmma::store_matrix_sync(optr, of, ldo, wmma::mem_row_major);
            }
        }
    }
    __syncthreads(); // O/l complete (also when there was no tile at all)

    for (int i = lane; i < 16 * D; i += 32) {
        const int r = warp * 16 + i / D, d = i % D;
        if (r < rows_here) {
            const float l = l_s[r];
            a.out[(q0 + rb + r) * q_stride + static_cast<int64_t>(head) * D + d] =
                l > 0.0f ? os[r * ldo + d] / l : 0.0f;
        }
    }
}

template <KvDtype T> OpStatus launch_t(const TcArgs& args, dim3 grid, cudaStream_t stream) {
    const size_t smem = tc_smem_bytes(args.head_dim);
    if (smem > 48 * 1024) {
        // Once per instantiation, for the largest head_dim (no attribute change in later calls).
        static const cudaError_t e = cudaFuncSetAttribute(
            attention_tc_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
            static_cast<int>(tc_smem_bytes(16 * kMaxDK)));
        if (e != cudaSuccess) {
            cudaGetLastError();
            set_error("paged_attention (tensor cores)", cudaGetErrorString(e));
            return OpStatus::CudaError;
        }
    }
    LLMWB_LAUNCH(grid, kWarps * 32, smem, stream, attention_tc_kernel<T>)(args);
    return check_launch("paged_attention (tensor cores)");
}

} // namespace

OpStatus launch_attention_tc(float* out, const float* q, const void* k_cache, const void* v_cache,
                             const AttentionBatch& b, const AttentionParams& p,
                             cudaStream_t stream) {
    if (static_cast<int64_t>(b.n_seqs) * p.heads > 65535)
        return invalid("paged_attention", "n_seqs * heads beyond the grid's y limit");
    TcArgs args{};
    args.out = out;
    args.q = q;
    args.k_cache = k_cache;
    args.v_cache = v_cache;
    args.query_start = b.query_start;
    args.context_lens = b.context_lens;
    args.block_tables = b.block_tables;
    args.max_blocks_per_seq = b.max_blocks_per_seq;
    args.heads = p.heads;
    args.kv_heads = p.kv_heads;
    args.head_dim = p.head_dim;
    args.block_size = p.block_size;
    args.scale = p.scale;
    args.window = p.window;
    args.softcap = p.logit_softcap;
    args.geom = kv_geom(KvLayout{p.kv_dtype, p.block_size, p.kv_heads, p.head_dim});
    args.k_scale = p.k_scale;
    args.v_scale = p.v_scale;
    const dim3 grid(static_cast<unsigned>(ceil_div(b.max_query_len, kBM)),
                    static_cast<unsigned>(b.n_seqs * p.heads));
    switch (p.kv_dtype) {
    case KvDtype::F32:
        return launch_t<KvDtype::F32>(args, grid, stream);
    case KvDtype::F16:
        return launch_t<KvDtype::F16>(args, grid, stream);
    case KvDtype::BF16:
        return launch_t<KvDtype::BF16>(args, grid, stream);
    case KvDtype::Fp8E4M3:
        return launch_t<KvDtype::Fp8E4M3>(args, grid, stream);
    case KvDtype::Fp8E5M2:
        return launch_t<KvDtype::Fp8E5M2>(args, grid, stream);
    case KvDtype::Int8:
        return launch_t<KvDtype::Int8>(args, grid, stream);
    }
    return invalid("paged_attention", "unknown KV dtype");
}

} // namespace llmwb::cuda::detail
