// Panel layout (weight_layout.h) of IQ4_XS, Q3_K and Q2_K: the format (pack and unpack_row,
// arrangement in panel_kx.h) and the kernel table per SIMD level (AVX2, AVX-512; the scalar level
// uses the driver's unpack fallback). The activations are panel_kq.h's KP rows.
#include "kernels/cpu/panel_kx.h"

#include <cstring>

#include "kernels/cpu/panel_kq.h"
#include "kernels/cpu/quant_blocks.h"

namespace llmwb::kernels::detail {

namespace {

struct IQ4XS {
    static constexpr size_t kBlock = sizeof(BlockIQ4_XS), kGroup = kIQ4XSGroupBytes;
    static void put(const uint8_t* blk, uint8_t* g, int r) {
        const auto* b = reinterpret_cast<const BlockIQ4_XS*>(blk);
        std::memcpy(g + 2 * r, &b->d, 2);
        std::memcpy(g + 32 + 2 * r, &b->scales_h, 2);
        std::memcpy(g + 64 + 4 * r, b->scales_l, 4);
        put_kgroups(b->qs, 128, g + 128, r);
    }
    static void get(const uint8_t* g, int r, uint8_t* blk) {
        auto* b = reinterpret_cast<BlockIQ4_XS*>(blk);
        std::memcpy(&b->d, g + 2 * r, 2);
        std::memcpy(&b->scales_h, g + 32 + 2 * r, 2);
        std::memcpy(b->scales_l, g + 64 + 4 * r, 4);
        get_kgroups(g + 128, 128, r, b->qs);
    }
};

struct Q3K {
    static constexpr size_t kBlock = sizeof(BlockQ3_K), kGroup = kQ3KGroupBytes;
    static void put(const uint8_t* blk, uint8_t* g, int r) {
        const auto* b = reinterpret_cast<const BlockQ3_K*>(blk);
        put_kgroups(b->hmask, 32, g, r);
        put_kgroups(b->qs, 64, g + 512, r);
        put_kgroups(b->scales, 12, g + 1536, r);
        std::memcpy(g + 1728 + 2 * r, &b->d, 2);
    }
    static void get(const uint8_t* g, int r, uint8_t* blk) {
        auto* b = reinterpret_cast<BlockQ3_K*>(blk);
        get_kgroups(g, 32, r, b->hmask);
        get_kgroups(g + 512, 64, r, b->qs);
        get_kgroups(g + 1536, 12, r, b->scales);
        std::memcpy(&b->d, g + 1728 + 2 * r, 2);
    }
};

struct Q2K {
    static constexpr size_t kBlock = sizeof(BlockQ2_K), kGroup = kQ2KGroupBytes;
    static void put(const uint8_t* blk, uint8_t* g, int r) {
        const auto* b = reinterpret_cast<const BlockQ2_K*>(blk);
        put_kgroups(b->scales, 16, g, r);
        put_kgroups(b->qs, 64, g + 256, r);
        std::memcpy(g + 1280 + 2 * r, &b->d, 2);
        std::memcpy(g + 1312 + 2 * r, &b->dmin, 2);
    }
    static void get(const uint8_t* g, int r, uint8_t* blk) {
        auto* b = reinterpret_cast<BlockQ2_K*>(blk);
        get_kgroups(g, 16, r, b->scales);
        get_kgroups(g + 256, 64, r, b->qs);
        std::memcpy(&b->d, g + 1280 + 2 * r, 2);
        std::memcpy(&b->dmin, g + 1312 + 2 * r, 2);
    }
};

static_assert(Q2K::kGroup == 16 * Q2K::kBlock && sizeof(BlockQ2_K) == 84);
static_assert(Q3K::kGroup == 16 * Q3K::kBlock && sizeof(BlockQ3_K) == 110);
static_assert(IQ4XS::kGroup == 16 * IQ4XS::kBlock && sizeof(BlockIQ4_XS) == 136);

template <class T> void kx_pack(const uint8_t* rows16, int64_t cols, uint8_t* panel) {
    const int64_t nb = cols / 256;
    const size_t row_bytes = T::kBlock * static_cast<size_t>(nb);
    for (int64_t b = 0; b < nb; ++b)
        for (int r = 0; r < kPanelRows; ++r)
            T::put(rows16 + static_cast<size_t>(r) * row_bytes + static_cast<size_t>(b) * T::kBlock,
                   panel + static_cast<size_t>(b) * T::kGroup, r);
}

template <class T> void kx_unpack_row(const uint8_t* panel, int64_t cols, int row, uint8_t* dst) {
    for (int64_t b = 0; b < cols / 256; ++b)
        T::get(panel + static_cast<size_t>(b) * T::kGroup, row,
               dst + static_cast<size_t>(b) * T::kBlock);
}

constexpr PanelFormat kIQ4XSFormat{kx_pack<IQ4XS>, kx_unpack_row<IQ4XS>};
constexpr PanelFormat kQ3KFormat{kx_pack<Q3K>, kx_unpack_row<Q3K>};
constexpr PanelFormat kQ2KFormat{kx_pack<Q2K>, kx_unpack_row<Q2K>};

} // namespace

const PanelFormat* kx_panel_format(DType t) {
    switch (t) {
    case DType::IQ4_XS:
        return &kIQ4XSFormat;
    case DType::Q3_K:
        return &kQ3KFormat;
    case DType::Q2_K:
        return &kQ2KFormat;
    default:
        return nullptr;
    }
}

const PanelKernel* kx_panel_kernel(DType t, SimdLevel level) {
    switch (level) {
    case SimdLevel::Avx512:
        return avx512_kx_panel_kernel(t);
    case SimdLevel::Avx2:
        return avx2_kx_panel_kernel(t);
    case SimdLevel::Scalar:
        break;
    }
    return nullptr;
}

} // namespace llmwb::kernels::detail
