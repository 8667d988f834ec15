// Panel layout (weight_layout.h) for the q32 types Q8_0 and Q4_0: the formats (layout in
// panel_q32.h) and the kernel of each SIMD level. The scalar level has no panel kernel (the
// driver unpacks each panel and runs the Rows kernels).
#include "kernels/cpu/panel_q32.h"

#include <cstring>

namespace llmwb::kernels::detail {

namespace {

template <class P> void q32_pack(const uint8_t* rows16, int64_t cols, uint8_t* panel) {
    const int64_t nb = cols / 32;
    const size_t row_bytes = static_cast<size_t>(nb) * P::kBlockBytes;
    for (int64_t b = 0; b < nb; ++b) {
        size_t sc = 0, codes = 0;
        P::offsets(nb, b, &sc, &codes);
        for (int i = 0; i < 16; ++i) {
            const uint8_t* blk = rows16 + i * row_bytes + static_cast<size_t>(b) * P::kBlockBytes;
            std::memcpy(panel + sc + 2 * i, blk, 2);
            for (int h = 0; h < P::kChunks; ++h)
                std::memcpy(panel + codes + 64 * h + 4 * i, blk + 2 + 4 * h, 4);
        }
    }
}

template <class P> void q32_unpack_row(const uint8_t* panel, int64_t cols, int row, uint8_t* dst) {
    const int64_t nb = cols / 32;
    for (int64_t b = 0; b < nb; ++b) {
        size_t sc = 0, codes = 0;
        P::offsets(nb, b, &sc, &codes);
        uint8_t* blk = dst + static_cast<size_t>(b) * P::kBlockBytes;
        std::memcpy(blk, panel + sc + 2 * row, 2);
        for (int h = 0; h < P::kChunks; ++h)
            std::memcpy(blk + 2 + 4 * h, panel + codes + 64 * h + 4 * row, 4);
    }
}

constexpr PanelFormat kQ8_0Format{q32_pack<Q8_0Panel>, q32_unpack_row<Q8_0Panel>};
constexpr PanelFormat kQ4_0Format{q32_pack<Q4_0Panel>, q32_unpack_row<Q4_0Panel>};

} // namespace

const PanelFormat* q32_panel_format(DType t) {
    switch (t) {
    case DType::Q8_0:
        return &kQ8_0Format;
    case DType::Q4_0:
        return &kQ4_0Format;
    default:
        return nullptr;
    }
}

const PanelKernel* q32_panel_kernel(DType t, SimdLevel level) {
    switch (level) {
    case SimdLevel::Avx512:
        return avx512_q32_panel_kernel(t);
    case SimdLevel::Avx2:
        return avx2_q32_panel_kernel(t);
    case SimdLevel::Scalar:
        break;
    }
    return nullptr;
}

} // namespace llmwb::kernels::detail
