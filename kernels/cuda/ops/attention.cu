// Paged causal attention (GQA) over block tables; prefill chunks and decode rows in one batch.
//
// A thread block handles one (sequence, kv head, key split) and a tile of NW * PW (query row,
// head of the kv group) pairs; each warp owns PW pairs. Keys are visited in tiles of 32 staged
// in shared memory (fp32): lane j scores key j of the tile, then every lane accumulates the
// softmax-weighted V rows for its dims (lane + 32 i). The softmax is online (running max m,
// running sum l), so no score matrix is ever stored. Long contexts with few blocks are split
// over the keys (flash-decoding): each split writes its unnormalised (acc, m, l) to the
// workspace and a combine kernel merges them.
//
// The cache may hold any KvDtype (kernels/cpu/kv_format.h's block-major layout): the kernel is
// instantiated per type, and each group of 4 elements is dequantized in registers as it is
// loaded (bf16 by a shift, fp8 by its bit pattern times the layer's scale, int8 times the row's
// scale read from the block's scale area) before it is staged as fp32.
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "kernels/cuda/ops/attention_tc.cuh"
#include "kernels/cuda/ops/common.cuh"
#include "kernels/cuda/ops/kv_cache.cuh"

namespace llmwb::cuda {

using detail::check_launch;
using detail::invalid;

namespace {

constexpr int kNW = 4;    // warps per block
constexpr int kTK = 32;   // keys per tile
constexpr int kMaxDL = 8; // head_dim / 32 at most
constexpr int kMinSplitKeys = 256;
constexpr int kMaxSplits = 32;
constexpr int kMaxSplitTokens = 64; // token rows the default workspace can split

struct KernelArgs {
    float* out;
    const float* q;
    const void* k_cache;
    const void* v_cache;
    const int32_t* query_start;
    const int32_t* context_lens;
    const int32_t* block_tables;
    int32_t max_blocks_per_seq;
    int32_t n_tokens;
    int32_t heads, kv_heads, head_dim, block_size;
    float scale;
    int32_t window; // sliding window (0: none)
    float softcap;  // attention-logit soft-cap (0: none)
    int32_t split_len, n_splits;
    int32_t skip_query_from; // > 0: sequences with this many query rows are not ours (TC)
    float* part_acc;         // [n_splits][n_tokens][heads][head_dim]
    float* part_m;           // [n_splits][n_tokens][heads]
    float* part_l;
    detail::KvGeom geom; // the pools' layout (any KvDtype)
    float k_scale, v_scale;
};

size_t smem_bytes(int pw, int d) {
    return sizeof(float) * (static_cast<size_t>(kNW) * pw * d + static_cast<size_t>(kTK) * (d + 1) +
                            static_cast<size_t>(kTK) * d + static_cast<size_t>(kNW) * kTK);
}

template <KvDtype T, int PW>
__global__ void __launch_bounds__(kNW * 32) attention_kernel(KernelArgs a) {
    LLMWB_DYNAMIC_SHARED(float, smem);
    const int D = a.head_dim;
    const int dl = D / 32;
    float* qs = smem;               // [kNW * PW][D]
    float* ks = qs + kNW * PW * D;  // [kTK][D + 1] (padded: lane j reads row j)
    float* vs = ks + kTK * (D + 1); // [kTK][D]
    float* ps = vs + kTK * D;       // [kNW][kTK]

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int seq = blockIdx.y / a.kv_heads, kvh = blockIdx.y % a.kv_heads;
    const int split = blockIdx.z;
    const int group = a.heads / a.kv_heads;
    const int32_t q0 = a.query_start[seq];
    const int32_t qlen = a.query_start[seq + 1] - q0;
    const int32_t ctx = a.context_lens[seq];
    const int64_t total_pairs = static_cast<int64_t>(qlen) * group;
    const int64_t p0 = static_cast<int64_t>(blockIdx.x) * (kNW * PW);
    // Uniform over the block: no pair of this sequence here, or the sequence is the tensor-core
    // kernel's.
    if (p0 >= total_pairs || (a.skip_query_from > 0 && qlen >= a.skip_query_from))
        return;
    const int64_t p_last = std::min<int64_t>(p0 + kNW * PW, total_pairs) - 1;
    const int32_t key_max = ctx - qlen + static_cast<int32_t>(p_last / group); // inclusive
    const int32_t kb = split * a.split_len;
    // The last split runs to the end of the context, so a context longer than the host's
    // max_context_len bound (a graph captured earlier) is still attended to completely.
    const int32_t split_end = split == a.n_splits - 1 ? INT_MAX : kb + a.split_len;
    const int32_t ke = std::min<int32_t>(std::min<int32_t>(split_end, key_max + 1), ctx);
    // Under a sliding window no pair of this block sees a key before the first pair's window
    // (its position is the smallest): those keys, and their blocks, are never touched.
    const int32_t key_min =
        a.window > 0
            ? std::max<int32_t>(0, ctx - qlen + static_cast<int32_t>(p0 / group) - a.window + 1)
            : 0;

    const int64_t q_stride = static_cast<int64_t>(a.heads) * D;
    const int32_t* table = a.block_tables + static_cast<int64_t>(seq) * a.max_blocks_per_seq;

    // Stage the block's queries (zeros for pairs past the end).
    for (int i = tid; i < kNW * PW * D; i += blockDim.x) {
        const int lp = i / D, d = i % D;
        const int64_t p = p0 + lp;
        float v = 0.0f;
        if (p < total_pairs) {
            const int64_t row = q0 + p / group;
            const int head = kvh * group + static_cast<int>(p % group);
            v = a.q[row * q_stride + static_cast<int64_t>(head) * D + d];
        }
        qs[i] = v;
    }

    float m[PW], l[PW], acc[PW][kMaxDL];
    int32_t lim[PW], lo[PW]; // keys [lo, lim] of each pair
    bool valid[PW];
#pragma unroll
    for (int k = 0; k < PW; ++k) {
        const int64_t p = p0 + warp * PW + k;
        valid[k] = p < total_pairs;
        lim[k] = valid[k] ? ctx - qlen + static_cast<int32_t>(p / group) : -1;
        lo[k] = a.window > 0 ? std::max<int32_t>(0, lim[k] - a.window + 1) : 0;
        m[k] = -INFINITY;
        l[k] = 0.0f;
#pragma unroll
        for (int i = 0; i < kMaxDL; ++i)
            acc[k][i] = 0.0f;
    }

    const auto* kc = static_cast<const unsigned char*>(a.k_cache);
    const auto* vc = static_cast<const unsigned char*>(a.v_cache);
    constexpr int elem = T == KvDtype::F32 ? 4 : (T == KvDtype::F16 || T == KvDtype::BF16 ? 2 : 1);
    for (int32_t t0 = std::max(kb, key_min); t0 < ke; t0 += kTK) {
        __syncthreads();      // previous tile (and the query staging) done
        const int d4 = D / 4; // groups of 4 elements per key row
        for (int i = tid; i < kTK * d4; i += blockDim.x) {
            const int j = i / d4, d = (i % d4) * 4;
            const int32_t key = t0 + j;
            float4 kv = make_float4(0.0f, 0.0f, 0.0f, 0.0f), vv = kv; // zeros past the range
            if (key < ke) {                                           // dequantized in registers
                const int64_t blk = table[key / a.block_size];
                const int32_t o = key % a.block_size;
                kv = detail::load_kv4<T>(
                    detail::kv_row(kc, a.geom, blk, o, kvh) + d * elem,
                    detail::kv_row_scale<T>(kc, a.geom, blk, o, kvh, a.k_scale));
                vv = detail::load_kv4<T>(
                    detail::kv_row(vc, a.geom, blk, o, kvh) + d * elem,
                    detail::kv_row_scale<T>(vc, a.geom, blk, o, kvh, a.v_scale));
            }
            float* kd = ks + j * (D + 1) + d; // padded rows: not 16-byte aligned
            kd[0] = kv.x;
            kd[1] = kv.y;
            kd[2] = kv.z;
            kd[3] = kv.w;
            float* vd = vs + j * D + d;
            vd[0] = vv.x;
            vd[1] = vv.y;
            vd[2] = vv.z;
            vd[3] = vv.w;
        }
        __syncthreads();
        const int32_t key = t0 + lane;
#pragma unroll
        for (int k = 0; k < PW; ++k) {
            // Warp-uniform: no key of this pair in the tile (so every tile that runs has one).
            if (!valid[k] || t0 > lim[k] || lo[k] >= t0 + kTK || lo[k] >= ke)
                continue;
            const float* qp = qs + (warp * PW + k) * D;
            float s = -INFINITY;
            if (key < ke && key <= lim[k] && key >= lo[k]) {
                const float* kp = ks + lane * (D + 1);
                float dot = 0.0f;
                for (int d = 0; d < D; ++d)
                    dot += qp[d] * kp[d];
                s = dot * a.scale;
                if (a.softcap > 0.0f)
                    s = a.softcap * tanhf(s / a.softcap);
            }
            const float tile_max = detail::warp_max(s); // finite: key t0 <= lim is valid
            const float m_new = fmaxf(m[k], tile_max);
            const float alpha = expf(m[k] - m_new); // 0 on the first tile (m = -inf)
            const float p = s == -INFINITY ? 0.0f : expf(s - m_new);
            l[k] = l[k] * alpha + detail::warp_sum(p);
            m[k] = m_new;
            ps[warp * kTK + lane] = p;
            __syncwarp();
#pragma unroll
            for (int i = 0; i < kMaxDL; ++i) {
                if (i < dl) {
                    float v = acc[k][i] * alpha;
                    const float* vp = vs + lane + 32 * i;
                    for (int j = 0; j < kTK; ++j)
                        v += ps[warp * kTK + j] * vp[j * D];
                    acc[k][i] = v;
                }
            }
            __syncwarp(); // ps is rewritten by the next pair
        }
    }

#pragma unroll
    for (int k = 0; k < PW; ++k) {
        if (!valid[k])
            continue;
        const int64_t p = p0 + warp * PW + k;
        const int64_t row = q0 + p / group;
        const int head = kvh * group + static_cast<int>(p % group);
        if (a.n_splits == 1) {
            const float inv = l[k] > 0.0f ? 1.0f / l[k] : 0.0f;
            float* op = a.out + row * q_stride + static_cast<int64_t>(head) * D;
#pragma unroll
            for (int i = 0; i < kMaxDL; ++i)
                if (i < dl)
                    op[lane + 32 * i] = acc[k][i] * inv;
        } else {
            const int64_t idx = (static_cast<int64_t>(split) * a.n_tokens + row) * a.heads + head;
            float* ap = a.part_acc + idx * D;
#pragma unroll
            for (int i = 0; i < kMaxDL; ++i)
                if (i < dl)
                    ap[lane + 32 * i] = acc[k][i];
            if (lane == 0) {
                a.part_m[idx] = m[k];
                a.part_l[idx] = l[k];
            }
        }
    }
}

// One warp per (token, head): merges the splits' partial results.
__global__ void combine_kernel(KernelArgs a) {
    const int64_t pair = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int64_t pairs = static_cast<int64_t>(a.n_tokens) * a.heads;
    if (pair >= pairs)
        return;
    const int D = a.head_dim;
    float mx = -INFINITY;
    for (int s = 0; s < a.n_splits; ++s)
        mx = fmaxf(mx, a.part_m[s * pairs + pair]);
    float denom = 0.0f;
    for (int s = 0; s < a.n_splits; ++s) {
        const float ms = a.part_m[s * pairs + pair];
        if (ms != -INFINITY)
            denom += expf(ms - mx) * a.part_l[s * pairs + pair];
    }
    const float inv = denom > 0.0f ? 1.0f / denom : 0.0f;
    float* op = a.out + pair * D; // out row (token) * heads + head == pair
    for (int d = lane; d < D; d += 32) {
        float v = 0.0f;
        for (int s = 0; s < a.n_splits; ++s) {
            const float ms = a.part_m[s * pairs + pair];
            if (ms != -INFINITY)
                v += expf(ms - mx) * a.part_acc[(s * pairs + pair) * D + d];
        }
        op[d] = v * inv;
    }
}

int sm_count() {
    static const int count = [] {
        int dev = 0, n = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
            n = 0;
        return n > 0 ? n : 100;
    }();
    return count;
}

size_t split_bytes(int64_t n_tokens, int32_t heads, int32_t head_dim) {
    return static_cast<size_t>(n_tokens) * static_cast<size_t>(heads) *
           (static_cast<size_t>(head_dim) + 2) * sizeof(float);
}

template <KvDtype T, int PW>
OpStatus launch(const KernelArgs& args, dim3 grid, cudaStream_t stream) {
    const size_t smem = smem_bytes(PW, args.head_dim);
    if (smem > 48 * 1024) {
        // Once per instantiation, for the largest head_dim (so later calls, e.g. inside graph
        // capture, need no attribute change).
        static const cudaError_t e = cudaFuncSetAttribute(
            attention_kernel<T, PW>, cudaFuncAttributeMaxDynamicSharedMemorySize,
            static_cast<int>(smem_bytes(PW, 32 * kMaxDL)));
        if (e != cudaSuccess) {
            cudaGetLastError();
            detail::set_error("paged_attention", cudaGetErrorString(e));
            return OpStatus::CudaError;
        }
    }
    LLMWB_LAUNCH(grid, kNW * 32, smem, stream, attention_kernel<T, PW>)(args);
    return check_launch("paged_attention");
}

template <KvDtype T>
OpStatus launch_pw(int pw, const KernelArgs& args, dim3 grid, cudaStream_t stream) {
    switch (pw) {
    case 1:
        return launch<T, 1>(args, grid, stream);
    case 2:
        return launch<T, 2>(args, grid, stream);
    default:
        return launch<T, 4>(args, grid, stream);
    }
}

OpStatus launch_kv(KvDtype t, int pw, const KernelArgs& args, dim3 grid, cudaStream_t stream) {
    switch (t) {
    case KvDtype::F32:
        return launch_pw<KvDtype::F32>(pw, args, grid, stream);
    case KvDtype::F16:
        return launch_pw<KvDtype::F16>(pw, args, grid, stream);
    case KvDtype::BF16:
        return launch_pw<KvDtype::BF16>(pw, args, grid, stream);
    case KvDtype::Fp8E4M3:
        return launch_pw<KvDtype::Fp8E4M3>(pw, args, grid, stream);
    case KvDtype::Fp8E5M2:
        return launch_pw<KvDtype::Fp8E5M2>(pw, args, grid, stream);
    case KvDtype::Int8:
        return launch_pw<KvDtype::Int8>(pw, args, grid, stream);
    }
    return invalid("paged_attention", "unknown KV dtype");
}

} // namespace

size_t paged_attention_workspace_bytes(int32_t max_tokens, int32_t heads, int32_t head_dim,
                                       int32_t max_context_len) {
    if (max_tokens <= 0 || heads <= 0 || head_dim <= 0 || max_context_len <= kMinSplitKeys)
        return 0;
    const int64_t splits =
        std::min<int64_t>(kMaxSplits, detail::ceil_div(max_context_len, kMinSplitKeys));
    return static_cast<size_t>(splits) *
           split_bytes(std::min(max_tokens, kMaxSplitTokens), heads, head_dim);
}

OpStatus paged_attention(float* out, const float* q, const void* k_cache, const void* v_cache,
                         const AttentionBatch& b, const AttentionParams& p, void* workspace,
                         size_t workspace_bytes, cudaStream_t stream) {
    if (p.heads <= 0 || p.kv_heads <= 0 || p.heads % p.kv_heads != 0)
        return invalid("paged_attention", "heads must be a positive multiple of kv_heads");
    if (p.head_dim <= 0 || p.head_dim % 32 != 0 || p.head_dim > 32 * kMaxDL)
        return invalid("paged_attention", "head_dim must be a multiple of 32 up to 256");
    if (p.block_size != 8 && p.block_size != 16 && p.block_size != 32)
        return invalid("paged_attention", "block_size must be 8, 16 or 32");
    if (static_cast<unsigned>(p.kv_dtype) > static_cast<unsigned>(KvDtype::Int8))
        return invalid("paged_attention", "unknown KV dtype");
    if (!(p.k_scale > 0.0f) || !(p.v_scale > 0.0f) || !std::isfinite(p.k_scale) ||
        !std::isfinite(p.v_scale))
        return invalid("paged_attention", "KV scales must be finite and positive");
    if (p.window < 0 || p.logit_softcap < 0.0f || !std::isfinite(p.logit_softcap))
        return invalid("paged_attention", "negative window or soft-cap");
    if (reinterpret_cast<uintptr_t>(k_cache) % 16 != 0 ||
        reinterpret_cast<uintptr_t>(v_cache) % 16 != 0)
        return invalid("paged_attention", "KV caches must be 16-byte aligned");
    if (b.n_seqs < 0 || b.n_tokens < 0 || b.max_query_len < 0 || b.max_context_len < 0 ||
        b.max_blocks_per_seq < 0)
        return invalid("paged_attention", "negative batch size");
    if (static_cast<int64_t>(b.n_seqs) * p.kv_heads > 65535)
        return invalid("paged_attention", "n_seqs * kv_heads beyond the grid's y limit");
    if (b.n_seqs == 0 || b.n_tokens == 0 || b.max_query_len == 0)
        return OpStatus::Ok;

    const int group = p.heads / p.kv_heads;
    const int64_t pairs = static_cast<int64_t>(b.max_query_len) * group;
    const int pw = pairs <= kNW ? 1 : (pairs <= 2 * kNW ? 2 : 4);
    const int64_t tiles = detail::ceil_div(pairs, kNW * pw);
    if (tiles > INT_MAX)
        return invalid("paged_attention", "too many query rows");
    const int64_t base_blocks = tiles * b.n_seqs * p.kv_heads;

    // Splits: only while the grid is small, each split at least kMinSplitKeys keys, and only as
    // many as the workspace holds.
    // Prefill sequences go to the tensor-core kernel; the batch then has work enough without
    // key splits.
    const bool use_tc = p.tensor_cores && detail::attention_tc_supported(p) &&
                        b.max_query_len >= detail::kTcMinQuery &&
                        static_cast<int64_t>(b.n_seqs) * p.heads <= 65535;
    int64_t n_splits = 1;
    const int64_t target = 2 * static_cast<int64_t>(sm_count());
    if (!use_tc && base_blocks < target && b.max_context_len > kMinSplitKeys) {
        n_splits = std::min<int64_t>(detail::ceil_div(target, base_blocks),
                                     detail::ceil_div(b.max_context_len, kMinSplitKeys));
        n_splits = std::min<int64_t>(n_splits, kMaxSplits);
        const size_t per_split = split_bytes(b.n_tokens, p.heads, p.head_dim);
        const int64_t fit = workspace ? static_cast<int64_t>(workspace_bytes / per_split) : 0;
        n_splits = std::max<int64_t>(1, std::min(n_splits, fit));
    }
    int64_t split_len = INT_MAX;
    if (n_splits > 1) {
        split_len = detail::ceil_div(detail::ceil_div(b.max_context_len, n_splits), kTK) * kTK;
        n_splits = detail::ceil_div(b.max_context_len, split_len);
    }

    KernelArgs args{};
    args.out = out;
    args.q = q;
    args.k_cache = k_cache;
    args.v_cache = v_cache;
    args.query_start = b.query_start;
    args.context_lens = b.context_lens;
    args.block_tables = b.block_tables;
    args.max_blocks_per_seq = b.max_blocks_per_seq;
    args.n_tokens = b.n_tokens;
    args.heads = p.heads;
    args.kv_heads = p.kv_heads;
    args.head_dim = p.head_dim;
    args.block_size = p.block_size;
    args.scale = p.scale;
    args.window = p.window;
    args.softcap = p.logit_softcap;
    args.split_len = static_cast<int32_t>(split_len);
    args.n_splits = static_cast<int32_t>(n_splits);
    args.skip_query_from = use_tc ? detail::kTcMinQuery : 0;
    args.geom = detail::kv_geom(KvLayout{p.kv_dtype, p.block_size, p.kv_heads, p.head_dim});
    args.k_scale = p.k_scale;
    args.v_scale = p.v_scale;
    if (n_splits > 1) {
        const int64_t pair_count = static_cast<int64_t>(b.n_tokens) * p.heads;
        args.part_acc = static_cast<float*>(workspace);
        args.part_m = args.part_acc + n_splits * pair_count * p.head_dim;
        args.part_l = args.part_m + n_splits * pair_count;
    }
    const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(b.n_seqs * p.kv_heads),
                    static_cast<unsigned>(n_splits));
    const OpStatus s = launch_kv(p.kv_dtype, pw, args, grid, stream);
    if (s != OpStatus::Ok)
        return s;
    if (use_tc)
        return detail::launch_attention_tc(out, q, k_cache, v_cache, b, p, stream);
    if (n_splits == 1)
        return s;
    const int64_t pair_count = static_cast<int64_t>(b.n_tokens) * p.heads;
    LLMWB_LAUNCH(static_cast<unsigned>(detail::ceil_div(pair_count, 4)), 128, 0, stream,
                 combine_kernel)
    (args);
    return check_launch("paged_attention (combine)");
}

} // namespace llmwb::cuda
