// matmul driver: picks the kernel of the active SIMD level, prepares (quantizes) the
// activations once, and splits the rows over the thread pool. Matrix-vector: each thread streams
// a contiguous range of weight rows. Matrix-matrix: each thread takes blocks of rows small
// enough to stay in L1/L2 and sweeps every tile of up to kMaxTileTokens tokens over them, so the
// weights are read from memory once per matmul and from cache once per token tile.
#include "kernels/cpu/matmul.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <memory>
#include <vector>

#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/thread_pool.h"

namespace llmwb::kernels {

namespace {

using detail::MatmulKernel;
using detail::TileArgs;

const MatmulKernel* select_kernel(DType t) {
    const MatmulKernel* k = nullptr;
    switch (active_simd_level()) {
    case SimdLevel::Avx512:
        k = detail::avx512_matmul_kernel(t);
        break;
    case SimdLevel::Avx2:
        k = detail::avx2_matmul_kernel(t);
        break;
    case SimdLevel::Scalar:
        break;
    }
    return k ? k : detail::scalar_matmul_kernel(t);
}

void for_range(ThreadPool* pool, int64_t n, int64_t grain,
               const std::function<void(int64_t, int64_t)>& fn) {
    if (pool && pool->size() > 1)
        pool->parallel_for(n, grain, fn);
    else if (n > 0)
        fn(0, n);
}

// Packs the activations per token tile ([cols][nt], see matmul_kernels.h) and splits the row
// panels over the threads.
void gemm_float(detail::GemmRowsFn gemm, float* y, const uint8_t* w, size_t w_stride, int64_t rows,
                int64_t cols, const float* x, int64_t n_tokens, ThreadPool* pool) {
    thread_local detail::AlignedBuffer scratch;
    auto* acts = reinterpret_cast<float*>(
        scratch.get(static_cast<size_t>(n_tokens * cols) * sizeof(float), true));
    const int64_t n_tiles = (n_tokens + detail::kGemmTileTokens - 1) / detail::kGemmTileTokens;
    auto pack = [&](int64_t g0, int64_t g1) {
        for (int64_t g = g0; g < g1; ++g) {
            const int64_t t0 = g * detail::kGemmTileTokens;
            const int64_t nt = std::min<int64_t>(detail::kGemmTileTokens, n_tokens - t0);
            float* dst = acts + t0 * cols;
            for (int64_t t = 0; t < nt; ++t) {
                const float* src = x + (t0 + t) * cols;
                for (int64_t c = 0; c < cols; ++c)
                    dst[c * nt + t] = src[c];
            }
        }
    };
    if (n_tokens * cols >= (1 << 16))
        for_range(pool, n_tiles, 1, pack);
    else
        pack(0, n_tiles);
    const detail::GemmArgs args{w, w_stride, rows, cols, acts, n_tokens, y, rows};
    const int64_t n_panels = (rows + detail::kGemmRows - 1) / detail::kGemmRows;
    for_range(pool, n_panels, 1, [&](int64_t p0, int64_t p1) {
        gemm(args, p0 * detail::kGemmRows, std::min(rows, p1 * detail::kGemmRows));
    });
}

// Quantizes the activations once (in parallel when large) and splits the row groups over the
// threads; each thread repacks its rows group by group (see matmul_qgemm_avx512.cpp).
void gemm_quant(const detail::QGemm& q, float* y, const uint8_t* w, size_t w_stride, int64_t rows,
                int64_t cols, const float* x, int64_t n_tokens, ThreadPool* pool) {
    thread_local detail::AlignedBuffer scratch;
    const size_t a_stride = q.act_row_bytes(cols);
    uint8_t* acts = scratch.get(a_stride * static_cast<size_t>(n_tokens), true);
    auto prep = [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t)
            q.prepare_act(x + t * cols, cols, acts + t * a_stride);
    };
    if (n_tokens * cols >= (1 << 16))
        for_range(pool, n_tokens, 1, prep);
    else
        prep(0, n_tokens);
    const detail::QGemmArgs args{w, w_stride, rows, cols, acts, a_stride, n_tokens, y, rows};
    const int64_t n_groups = (rows + detail::kQGemmRows - 1) / detail::kQGemmRows;
    for_range(pool, n_groups, 1, [&](int64_t g0, int64_t g1) {
        q.rows(args, g0 * detail::kQGemmRows, std::min(rows, g1 * detail::kQGemmRows));
    });
}

const detail::PanelKernel* select_panel_kernel(DType t) {
    const SimdLevel l = active_simd_level();
    if (const detail::PanelKernel* k = detail::q32_panel_kernel(t, l))
        return k;
    if (const detail::PanelKernel* k = detail::kq_panel_kernel(t, l))
        return k;
    if (const detail::PanelKernel* k = detail::q5_panel_kernel(t, l))
        return k;
    if (const detail::PanelKernel* k = detail::kx_panel_kernel(t, l))
        return k;
    return detail::float_panel_kernel(t, l);
}

// Activation rows in a kernel's prepared format (thread-local scratch), or x itself.
const uint8_t* prepare_rows(size_t (*row_bytes)(int64_t),
                            void (*prep)(const float*, int64_t, uint8_t*), const float* x,
                            int64_t cols, int64_t n_tokens, ThreadPool* pool, size_t* stride) {
    *stride = static_cast<size_t>(cols) * sizeof(float);
    if (!row_bytes)
        return reinterpret_cast<const uint8_t*>(x);
    thread_local detail::AlignedBuffer scratch;
    *stride = row_bytes(cols);
    uint8_t* buf = scratch.get(*stride * static_cast<size_t>(n_tokens), true);
    const size_t s = *stride;
    auto work = [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t)
            prep(x + t * cols, cols, buf + t * s);
    };
    if (n_tokens * cols >= (1 << 16))
        for_range(pool, n_tokens, 1, work);
    else
        work(0, n_tokens);
    return buf;
}

void matmul_rows(float* y, const WeightMatrix& w, const float* x, int64_t n_tokens,
                 ThreadPool* pool);

// One matrix of a panel product: its kernel, arguments and number of whole panels.
struct PanelJob {
    const detail::PanelKernel* pk;
    detail::PanelArgs args;
    int64_t n_panels;
};

// Panels [u0, u1) of the jobs' panels taken one after the other.
void run_panel_range(const PanelJob* jobs, size_t n_jobs, int64_t u0, int64_t u1) {
    int64_t base = 0;
    for (size_t j = 0; j < n_jobs && u0 < u1; ++j) {
        const int64_t end = base + jobs[j].n_panels;
        if (u0 < end) {
            const int64_t stop = std::min(u1, end);
            jobs[j].pk->panels(jobs[j].args, u0 - base, stop - base);
            u0 = stop;
        }
        base = end;
    }
}

// Every whole panel of the jobs over the threads: a contiguous range of the jobs' panels per
// thread (one sequential stream each). Which thread computes a panel never changes its bits: a
// panel's outputs depend only on its weights and the prepared activations. (Chunks handed out
// from a shared counter, so that a thread held back by the VM does not hold the product, were
// tried: no gain measurable on the shared 2-vCPU machine, and they break the threads' streams.)
void run_panel_jobs(const PanelJob* jobs, size_t n_jobs, ThreadPool* pool) {
    int64_t total = 0;
    for (size_t j = 0; j < n_jobs; ++j)
        total += jobs[j].n_panels;
    for_range(pool, total, 1,
              [&](int64_t u0, int64_t u1) { run_panel_range(jobs, n_jobs, u0, u1); });
}

// The rows % 16 tail of a Panels matrix (Rows order after the last panel), one token at a time
// (the matrix-vector path; < 16 rows, one thread): the Rows kernels sum differently with more
// tokens, and a token's result must not depend on its batch.
void panel_tail(float* y, const WeightMatrix& w, const float* x, int64_t n_tokens) {
    const int64_t full = w.rows / kPanelRows * kPanelRows;
    if (full == w.rows)
        return;
    const auto row_bytes = static_cast<size_t>(dtype_row_bytes(w.type, w.cols));
    const int64_t tail = w.rows - full;
    thread_local std::vector<float> ty;
    ty.resize(static_cast<size_t>(tail * n_tokens));
    const WeightMatrix rest{
        w.type, static_cast<const uint8_t*>(w.data) + static_cast<size_t>(full) * row_bytes, tail,
        w.cols, WeightLayout::Rows};
    for (int64_t t = 0; t < n_tokens; ++t)
        matmul_rows(ty.data() + t * tail, rest, x + t * w.cols, 1, nullptr);
    for (int64_t t = 0; t < n_tokens; ++t)
        std::copy_n(ty.data() + t * tail, tail, y + t * w.rows + full);
}

// WeightLayout::Panels: the family's panel kernel over whole panels (or, at a level without
// one, each panel unpacked and run through the Rows tile kernels), then the Rows tail token by
// token.
void matmul_panels(float* y, const WeightMatrix& w, const float* x, int64_t n_tokens,
                   ThreadPool* pool) {
    const auto row_bytes = static_cast<size_t>(dtype_row_bytes(w.type, w.cols));
    const int64_t n_panels = w.rows / kPanelRows;
    const auto* base = static_cast<const uint8_t*>(w.data);
    if (const detail::PanelKernel* pk = select_panel_kernel(w.type)) {
        size_t a_stride = 0;
        const uint8_t* acts =
            prepare_rows(pk->act_row_bytes, pk->prepare_act, x, w.cols, n_tokens, pool, &a_stride);
        const PanelJob job{
            pk, detail::PanelArgs{base, row_bytes, w.cols, acts, a_stride, n_tokens, y, w.rows},
            n_panels};
        run_panel_jobs(&job, 1, pool);
    } else {
        const MatmulKernel* k = select_kernel(w.type);
        size_t a_stride = 0;
        const uint8_t* acts =
            prepare_rows(k->act_row_bytes, k->prepare_act, x, w.cols, n_tokens, pool, &a_stride);
        const PanelFormat* f = panel_format(w.type);
        for_range(pool, n_panels, 1, [&](int64_t p0, int64_t p1) {
            thread_local detail::AlignedBuffer rows16;
            uint8_t* buf = rows16.get(row_bytes * kPanelRows);
            for (int64_t p = p0; p < p1; ++p) {
                const uint8_t* panel = base + static_cast<size_t>(p) * kPanelRows * row_bytes;
                for (int i = 0; i < kPanelRows; ++i)
                    f->unpack_row(panel, w.cols, i, buf + static_cast<size_t>(i) * row_bytes);
                for (int64_t t0 = 0; t0 < n_tokens; t0 += detail::kMaxTileTokens) {
                    const int nt =
                        static_cast<int>(std::min<int64_t>(detail::kMaxTileTokens, n_tokens - t0));
                    const TileArgs a{buf,
                                     row_bytes,
                                     w.cols,
                                     kPanelRows,
                                     acts + t0 * a_stride,
                                     a_stride,
                                     nt,
                                     y + t0 * w.rows + p * kPanelRows,
                                     w.rows};
                    k->tile(a);
                }
            }
        });
    }
    panel_tail(y, w, x, n_tokens);
}

} // namespace

bool matmul_batch_invariant(const WeightMatrix& w) {
    return w.layout == WeightLayout::Panels && select_panel_kernel(w.type) != nullptr;
}

void matmul(float* y, const WeightMatrix& w, const float* x, int64_t n_tokens, ThreadPool* pool) {
    assert(w.cols % dtype_block_elems(w.type) == 0);
    if (n_tokens <= 0 || w.rows <= 0)
        return;
    if (w.layout == WeightLayout::Panels)
        matmul_panels(y, w, x, n_tokens, pool);
    else
        matmul_rows(y, w, x, n_tokens, pool);
}

void matmul_shared(std::span<const MatmulOut> outs, const float* x, int64_t n_tokens,
                   ThreadPool* pool) {
    if (n_tokens <= 0 || outs.empty())
        return;
    // One preparation and one pass over the threads when every matrix has a panel kernel and
    // they read the same prepared activations; otherwise one product after the other.
    constexpr size_t kMaxShared = 4;
    const detail::PanelKernel* first = nullptr;
    bool grouped = outs.size() <= kMaxShared;
    for (size_t i = 0; grouped && i < outs.size(); ++i) {
        const WeightMatrix& w = outs[i].w;
        const detail::PanelKernel* pk =
            w.layout == WeightLayout::Panels ? select_panel_kernel(w.type) : nullptr;
        grouped = pk && w.cols == outs[0].w.cols &&
                  (!first || (pk->act_row_bytes == first->act_row_bytes &&
                              pk->prepare_act == first->prepare_act));
        if (!first)
            first = pk;
    }
    if (!grouped) {
        for (const MatmulOut& o : outs)
            matmul(o.y, o.w, x, n_tokens, pool);
        return;
    }
    const int64_t cols = outs[0].w.cols;
    size_t a_stride = 0;
    const uint8_t* acts =
        prepare_rows(first->act_row_bytes, first->prepare_act, x, cols, n_tokens, pool, &a_stride);
    PanelJob jobs[kMaxShared];
    for (size_t i = 0; i < outs.size(); ++i) {
        const WeightMatrix& w = outs[i].w;
        jobs[i] = PanelJob{select_panel_kernel(w.type),
                           detail::PanelArgs{static_cast<const uint8_t*>(w.data),
                                             static_cast<size_t>(dtype_row_bytes(w.type, cols)),
                                             cols, acts, a_stride, n_tokens, outs[i].y, w.rows},
                           w.rows / kPanelRows};
    }
    run_panel_jobs(jobs, outs.size(), pool);
    for (const MatmulOut& o : outs)
        panel_tail(o.y, o.w, x, n_tokens);
}

namespace {

void matmul_rows(float* y, const WeightMatrix& w, const float* x, int64_t n_tokens,
                 ThreadPool* pool) {
    const MatmulKernel* k = select_kernel(w.type);
    const auto* wbase = static_cast<const uint8_t*>(w.data);
    const size_t w_stride = static_cast<size_t>(dtype_row_bytes(w.type, w.cols));

    if (n_tokens >= detail::kGemmMinTokens && active_simd_level() == SimdLevel::Avx512) {
        if (const detail::GemmRowsFn gemm = detail::avx512_float_gemm(w.type)) {
            gemm_float(gemm, y, wbase, w_stride, w.rows, w.cols, x, n_tokens, pool);
            return;
        }
    }

    if (active_simd_level() == SimdLevel::Avx512) {
        const detail::QGemm* q = detail::avx512_quant_gemm(w.type);
        if (q && n_tokens >= q->min_tokens) {
            gemm_quant(*q, y, wbase, w_stride, w.rows, w.cols, x, n_tokens, pool);
            return;
        }
    }

    size_t a_stride = 0;
    const uint8_t* acts =
        prepare_rows(k->act_row_bytes, k->prepare_act, x, w.cols, n_tokens, pool, &a_stride);

    if (n_tokens == 1) {
        for_range(pool, w.rows, 16, [&](int64_t r0, int64_t r1) {
            TileArgs a{wbase + r0 * w_stride,
                       w_stride,
                       w.cols,
                       static_cast<int>(r1 - r0),
                       acts,
                       a_stride,
                       1,
                       y + r0,
                       w.rows};
            k->tile(a);
        });
        return;
    }

    // Rows per cache block: ~128 KiB of weights (L2), a multiple of 4 (the register blocks).
    const int64_t block_rows =
        std::clamp<int64_t>(static_cast<int64_t>((128 << 10) / std::max<size_t>(w_stride, 1)), 8,
                            256) /
        4 * 4;
    const int64_t n_blocks = (w.rows + block_rows - 1) / block_rows;
    for_range(pool, n_blocks, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
            const int64_t r0 = b * block_rows, r1 = std::min(w.rows, r0 + block_rows);
            for (int64_t t0 = 0; t0 < n_tokens; t0 += detail::kMaxTileTokens) {
                const int nt =
                    static_cast<int>(std::min<int64_t>(detail::kMaxTileTokens, n_tokens - t0));
                TileArgs a{wbase + r0 * w_stride,
                           w_stride,
                           w.cols,
                           static_cast<int>(r1 - r0),
                           acts + t0 * a_stride,
                           a_stride,
                           nt,
                           y + t0 * w.rows + r0,
                           w.rows};
                k->tile(a);
            }
        }
    });
}

} // namespace

void matmul_reference(float* y, const WeightMatrix& w, const float* x, int64_t n_tokens) {
    std::vector<float> row(static_cast<size_t>(w.cols));
    for (int64_t r = 0; r < w.rows; ++r) {
        dequantize_weight_row(w, r, row.data());
        for (int64_t t = 0; t < n_tokens; ++t) {
            const float* xt = x + t * w.cols;
            double s = 0;
            for (int64_t c = 0; c < w.cols; ++c)
                s += static_cast<double>(row[static_cast<size_t>(c)]) * xt[c];
            y[t * w.rows + r] = static_cast<float>(s);
        }
    }
}

} // namespace llmwb::kernels
