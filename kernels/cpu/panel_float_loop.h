// The loop of the float panel kernels (panel_float.h) over panels, column chunks and token
// blocks, shared by the SIMD levels. Include only from panel_float_avx2.cpp and
// panel_float_avx512.cpp: like run_by_nt (matmul_kernels.h) it lives in an anonymous namespace
// so that every level's file has its own copy.
//
// A level's kernel K provides:
//   kRowPanels, kTokens  the largest register block: panels (16 rows each) x tokens;
//   kMvRowPanels         panels per block of a 1-token call (matrix-vector: more independent
//                        accumulators to hide the FMA latency; 0: kRowPanels);
//   kChunkSteps          steps per column chunk (sized so a chunk of kRowPanels panels stays in
//                        L1 while every token block passes over it);
//   steps(cols)          the number of steps (a step: the columns one weight load covers);
//   tail(cols)           whether an odd last column follows the steps (BF16);
//   block<RV, NT>(b)     the register block: y (+)= panels x tokens over steps [s0, s1), then
//                        the tail column when b.tail.
// The accumulators of a chunk start from the values the previous chunk stored (exact fp32
// round trip), so a (row, token) sees one accumulation over the columns in order, whatever the
// chunking or the token blocks: the same bits alone or in any batch.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "kernels/cpu/matmul_kernels.h"

namespace llmwb::kernels::detail {

namespace {

constexpr int kMaxBlockPanels = 4;
constexpr int kMaxBlockTokens = 8;

struct PanelBlock {
    const uint8_t* w[kMaxBlockPanels]; // first byte of each panel
    const uint8_t* x[kMaxBlockTokens]; // each token's prepared activation row
    int64_t s0, s1;                    // steps of this chunk
    bool first;                        // the accumulators start at zero (else from y)
    bool tail;                         // add the odd last column after step s1 - 1
    float* y;                          // (token 0, row 0) of the block
    int64_t ldy;
};

using PanelBlockFn = void (*)(const PanelBlock&);

template <class K, int RV, int... NT>
constexpr std::array<PanelBlockFn, sizeof...(NT)> block_row(std::integer_sequence<int, NT...>) {
    return {&K::template block<RV, NT + 1>...};
}

template <class K, int... RV> constexpr auto block_table(std::integer_sequence<int, RV...>) {
    return std::array<std::array<PanelBlockFn, K::kTokens>, sizeof...(RV)>{
        block_row<K, RV + 1>(std::make_integer_sequence<int, K::kTokens>{})...};
}

template <class K> void panel_loop(const PanelArgs& a, int64_t p0, int64_t p1) {
    constexpr int kMaxRv = std::max(K::kRowPanels, K::kMvRowPanels);
    static_assert(kMaxRv <= kMaxBlockPanels && K::kTokens <= kMaxBlockTokens);
    static constexpr auto kTable = block_table<K>(std::make_integer_sequence<int, kMaxRv>{});
    const int64_t group = a.n_tokens == 1 && K::kMvRowPanels > 0 ? K::kMvRowPanels : K::kRowPanels;
    const int64_t n = K::steps(a.cols);
    const bool tail = K::tail(a.cols);
    const size_t panel_bytes = a.row_bytes * kPanelRows;
    PanelBlock b{};
    b.ldy = a.ldy;
    for (int64_t p = p0; p < p1; p += group) {
        const int rv = static_cast<int>(std::min<int64_t>(group, p1 - p));
        for (int v = 0; v < rv; ++v)
            b.w[v] = a.w + static_cast<size_t>(p + v) * panel_bytes;
        for (int64_t s0 = 0;; s0 += K::kChunkSteps) {
            b.s0 = s0;
            b.s1 = std::min<int64_t>(n, s0 + K::kChunkSteps);
            b.first = s0 == 0;
            b.tail = tail && b.s1 == n;
            for (int64_t t0 = 0; t0 < a.n_tokens; t0 += K::kTokens) {
                const int nt = static_cast<int>(std::min<int64_t>(K::kTokens, a.n_tokens - t0));
                for (int t = 0; t < nt; ++t)
                    b.x[t] = a.a + static_cast<size_t>(t0 + t) * a.a_stride;
                b.y = a.y + t0 * a.ldy + p * kPanelRows;
                kTable[static_cast<size_t>(rv - 1)][static_cast<size_t>(nt - 1)](b);
            }
            if (b.s1 >= n)
                break;
        }
    }
}

} // namespace

} // namespace llmwb::kernels::detail
