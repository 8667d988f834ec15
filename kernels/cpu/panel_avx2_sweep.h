// The sweep of the AVX2 panel kernels of the 256-column families (panel_kq_avx2_kernels.h: Q4_K,
// Q5_K, Q6_K; panel_kx_avx2.h: IQ4_XS, Q3_K, Q2_K) over panels [p0, p1). Internal to kernels/cpu;
// instantiated only with the including file's internal-linkage kernels, so each ISA's copy stays
// its own.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/matmul_kernels.h"

namespace llmwb::kernels::detail {

// F<H, NT>::run(a, p, h0, t0): halves [h0, h0 + H) (8 rows each) of panel p for NT tokens from t0.
// One token: both halves of each panel per call (one sequential stream). 2+ tokens: chunks of
// panels that stay in L2 (~kChunkBytes) while tiles of kTile tokens (then 2, then 1 for the rest)
// pass over them, one half at a time: a panel's codes are decoded once per tile, so a wider tile
// spends fewer instructions per product until its accumulators no longer fit the 16 ymm registers.
// Each (row, token) value is computed alone in a fixed order, so the tile that holds a token does
// not change its bits.
template <template <int, int> class F, int kTile>
void sweep_panels(const PanelArgs& a, int64_t p0, int64_t p1) {
    static_assert(kTile >= 2);
    constexpr size_t kChunkBytes = 192 << 10;
    if (a.n_tokens == 1) {
        for (int64_t p = p0; p < p1; ++p)
            F<2, 1>::run(a, p, 0, 0);
        return;
    }
    const size_t panel_bytes = kPanelRows * a.row_bytes;
    const int64_t chunk =
        std::max<int64_t>(1, static_cast<int64_t>(kChunkBytes / std::max<size_t>(panel_bytes, 1)));
    for (int64_t c0 = p0; c0 < p1; c0 += chunk) {
        const int64_t c1 = std::min(p1, c0 + chunk);
        for (int64_t t0 = 0; t0 < a.n_tokens;) {
            const int64_t left = a.n_tokens - t0;
            const int nt = left >= kTile ? kTile : left >= 2 ? 2 : 1;
            for (int64_t p = c0; p < c1; ++p)
                for (int h = 0; h < 2; ++h) {
                    if (nt == kTile)
                        F<1, kTile>::run(a, p, h, t0);
                    else if (nt == 2)
                        F<1, 2>::run(a, p, h, t0);
                    else
                        F<1, 1>::run(a, p, h, t0);
                }
            t0 += nt;
        }
    }
}

} // namespace llmwb::kernels::detail
