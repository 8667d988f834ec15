// Panel layout (weight_layout.h) for Q5_0, Q5_1, Q4_1 and IQ4_NL: the formats (layout in
// panel_q5.h) and the kernel of each SIMD level. The scalar level has no panel kernel (the
// driver unpacks each panel and runs the Rows kernels).
#include "kernels/cpu/panel_q5.h"

#include <cstring>

namespace llmwb::kernels::detail {

namespace {

uint32_t q5_load_u32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
           static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

void q5_store_u64(uint8_t* p, uint64_t v) {
    for (int i = 0; i < 8; ++i)
        p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t q5_load_u64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return v;
}

// The 8 nibbles of v, nibble g in the low half of byte g.
uint64_t q5_spread_nibbles(uint32_t v) {
    uint64_t x = v;
    x = (x | x << 16) & 0x0000FFFF0000FFFFULL;
    x = (x | x << 8) & 0x00FF00FF00FF00FFULL;
    return (x | x << 4) & 0x0F0F0F0F0F0F0F0FULL;
}

// 8x8 byte matrix transpose in place: byte g of m[j] <-> byte j of m[g].
void q5_transpose_bytes(uint64_t* m) {
    for (int j = 0; j < 4; ++j) { // 4x4 blocks
        const uint64_t t = ((m[j] >> 32) ^ m[j + 4]) & 0x00000000FFFFFFFFULL;
        m[j] ^= t << 32;
        m[j + 4] ^= t;
    }
    for (int j : {0, 1, 4, 5}) { // 2x2 blocks of 2 bytes
        const uint64_t t = ((m[j] >> 16) ^ m[j + 2]) & 0x0000FFFF0000FFFFULL;
        m[j] ^= t << 16;
        m[j + 2] ^= t;
    }
    for (int j = 0; j < 8; j += 2) { // bytes
        const uint64_t t = ((m[j] >> 8) ^ m[j + 1]) & 0x00FF00FF00FF00FFULL;
        m[j] ^= t << 8;
        m[j + 1] ^= t;
    }
}

template <class P> void q5_pack(const uint8_t* rows16, int64_t cols, uint8_t* panel) {
    const int64_t nb = cols / 32;
    const size_t row_bytes = static_cast<size_t>(nb) * P::kBlockBytes;
    for (int64_t b = 0; b < nb; ++b) {
        const auto o = P::offsets(nb, b);
        uint64_t masks[8] = {};
        for (int i = 0; i < 16; ++i) {
            const uint8_t* blk = rows16 + i * row_bytes + static_cast<size_t>(b) * P::kBlockBytes;
            std::memcpy(panel + o.d + 2 * i, blk, 2);
            if constexpr (P::kHasM)
                std::memcpy(panel + o.m + 2 * i, blk + P::kMOff, 2);
            if constexpr (P::kHasH) {
                const uint64_t e = q5_spread_nibbles(q5_load_u32(blk + P::kHOff));
                masks[i / 2] |= e << (4 * (i % 2));
            }
            for (int h = 0; h < 4; ++h)
                std::memcpy(panel + o.codes + 64 * h + 4 * i, blk + P::kQsOff + 4 * h, 4);
        }
        if constexpr (P::kHasH) {
            // masks[j] byte g: rows 2j (low nibble) and 2j + 1 of group g; transposed, mask g
            // byte j: bit 4i + k = bit 4g + k of row i's qh.
            q5_transpose_bytes(masks);
            for (int g = 0; g < 8; ++g)
                q5_store_u64(panel + o.qh + 8 * g, masks[g]);
        }
    }
}

template <class P> void q5_unpack_row(const uint8_t* panel, int64_t cols, int row, uint8_t* dst) {
    const int64_t nb = cols / 32;
    for (int64_t b = 0; b < nb; ++b) {
        const auto o = P::offsets(nb, b);
        uint8_t* blk = dst + static_cast<size_t>(b) * P::kBlockBytes;
        std::memcpy(blk, panel + o.d + 2 * row, 2);
        if constexpr (P::kHasM)
            std::memcpy(blk + P::kMOff, panel + o.m + 2 * row, 2);
        if constexpr (P::kHasH) {
            uint32_t qh = 0;
            for (int g = 0; g < 8; ++g)
                qh |= static_cast<uint32_t>((q5_load_u64(panel + o.qh + 8 * g) >> (4 * row)) & 0xF)
                      << (4 * g);
            for (int i = 0; i < 4; ++i)
                blk[P::kHOff + i] = static_cast<uint8_t>(qh >> (8 * i));
        }
        for (int h = 0; h < 4; ++h)
            std::memcpy(blk + P::kQsOff + 4 * h, panel + o.codes + 64 * h + 4 * row, 4);
    }
}

constexpr PanelFormat kQ5_0Format{q5_pack<Q5_0Panel>, q5_unpack_row<Q5_0Panel>};
constexpr PanelFormat kQ5_1Format{q5_pack<Q5_1Panel>, q5_unpack_row<Q5_1Panel>};
constexpr PanelFormat kQ4_1Format{q5_pack<Q4_1Panel>, q5_unpack_row<Q4_1Panel>};
constexpr PanelFormat kIQ4_NLFormat{q5_pack<IQ4_NLPanel>, q5_unpack_row<IQ4_NLPanel>};

} // namespace

// Formats only for the types whose AVX-512 and AVX2 kernels both exist (a type in panels
// without a kernel would run the driver's slower unpack fallback).
const PanelFormat* q5_panel_format(DType t) {
    switch (t) {
    case DType::Q5_0:
        return &kQ5_0Format;
    case DType::Q5_1:
        return &kQ5_1Format;
    case DType::Q4_1:
        return &kQ4_1Format;
    case DType::IQ4_NL:
        return &kIQ4_NLFormat;
    default:
        return nullptr;
    }
}

const PanelKernel* q5_panel_kernel(DType t, SimdLevel level) {
    switch (level) {
    case SimdLevel::Avx512:
        return avx512_q5_panel_kernel(t);
    case SimdLevel::Avx2:
        return avx2_q5_panel_kernel(t);
    case SimdLevel::Scalar:
        break;
    }
    return nullptr;
}

} // namespace llmwb::kernels::detail
