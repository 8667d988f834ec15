// Panel layout (weight_layout.h) of the K-quant types Q4_K, Q5_K, Q6_K: the formats (pack and
// unpack_row, arrangement in panel_kq.h), the plain KP activation quantizer and the kernel table
// per SIMD level (AVX2, AVX-512; the scalar level uses the driver's unpack fallback).
#include "kernels/cpu/panel_kq.h"

#include <cmath>
#include <cstring>

#include "kernels/cpu/quant_blocks.h"

namespace llmwb::kernels::detail {

namespace {

constexpr int kRows = kPanelRows;

// ---- the 6-bit scales and mins of Q4_K / Q5_K ------------------------------------------------

// ggml's 12 bytes -> 8 scales and 8 mins (6 bits each).
void unpack_scales(const uint8_t* s, uint8_t* sc, uint8_t* m) {
    for (int j = 0; j < 8; ++j)
        q4k_scale_min(s, j, &sc[j], &m[j]);
}

// 8 scales and 8 mins -> ggml's 12 bytes (the inverse of unpack_scales).
void pack_scales(const uint8_t* sc, const uint8_t* m, uint8_t* s) {
    for (int j = 0; j < 4; ++j) {
        s[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        s[j + 4] = static_cast<uint8_t>((m[j] & 63) | ((m[j + 4] >> 4) << 6));
        s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
    }
}

// Row r's 12 scale bytes into the group's SC / MN / HI vectors (at g + 64) and back.
void put_scales(const uint8_t* s, uint8_t* g, int r) {
    uint8_t sc[8], m[8];
    unpack_scales(s, sc, m);
    for (int k = 0; k < 4; ++k) {
        g[64 + 4 * r + k] = static_cast<uint8_t>((sc[k] & 15) | ((sc[k + 4] & 15) << 4));
        g[128 + 4 * r + k] = static_cast<uint8_t>((m[k] & 15) | ((m[k + 4] & 15) << 4));
        g[192 + 4 * r + k] = static_cast<uint8_t>((sc[k] >> 4) | ((sc[k + 4] >> 4) << 2) |
                                                  ((m[k] >> 4) << 4) | ((m[k + 4] >> 4) << 6));
    }
}

void get_scales(const uint8_t* g, int r, uint8_t* s) {
    uint8_t sc[8], m[8];
    for (int k = 0; k < 4; ++k) {
        const uint8_t lo_s = g[64 + 4 * r + k], lo_m = g[128 + 4 * r + k], hi = g[192 + 4 * r + k];
        sc[k] = static_cast<uint8_t>((lo_s & 15) | ((hi & 3) << 4));
        sc[k + 4] = static_cast<uint8_t>((lo_s >> 4) | (((hi >> 2) & 3) << 4));
        m[k] = static_cast<uint8_t>((lo_m & 15) | (((hi >> 4) & 3) << 4));
        m[k + 4] = static_cast<uint8_t>((lo_m >> 4) | (((hi >> 6) & 3) << 4));
    }
    pack_scales(sc, m, s);
}

// ---- per type: one super-block of one row <-> its place in the group ------------------------

struct Q4K {
    static constexpr size_t kBlock = sizeof(BlockQ4_K), kGroup = kQ4KGroupBytes;
    static void put(const uint8_t* blk, uint8_t* g, int r) {
        const auto* b = reinterpret_cast<const BlockQ4_K*>(blk);
        std::memcpy(g + 2 * r, &b->d, 2);
        std::memcpy(g + 32 + 2 * r, &b->dmin, 2);
        put_scales(b->scales, g, r);
        put_kgroups(b->qs, 128, g + 256, r);
    }
    static void get(const uint8_t* g, int r, uint8_t* blk) {
        auto* b = reinterpret_cast<BlockQ4_K*>(blk);
        std::memcpy(&b->d, g + 2 * r, 2);
        std::memcpy(&b->dmin, g + 32 + 2 * r, 2);
        get_scales(g, r, b->scales);
        get_kgroups(g + 256, 128, r, b->qs);
    }
};

struct Q5K {
    static constexpr size_t kBlock = sizeof(BlockQ5_K), kGroup = kQ5KGroupBytes;
    static void put(const uint8_t* blk, uint8_t* g, int r) {
        const auto* b = reinterpret_cast<const BlockQ5_K*>(blk);
        std::memcpy(g + 2 * r, &b->d, 2);
        std::memcpy(g + 32 + 2 * r, &b->dmin, 2);
        put_scales(b->scales, g, r);
        put_kgroups(b->qh, 32, g + 256, r);
        put_kgroups(b->qs, 128, g + 768, r);
    }
    static void get(const uint8_t* g, int r, uint8_t* blk) {
        auto* b = reinterpret_cast<BlockQ5_K*>(blk);
        std::memcpy(&b->d, g + 2 * r, 2);
        std::memcpy(&b->dmin, g + 32 + 2 * r, 2);
        get_scales(g, r, b->scales);
        get_kgroups(g + 256, 32, r, b->qh);
        get_kgroups(g + 768, 128, r, b->qs);
    }
};

struct Q6K {
    static constexpr size_t kBlock = sizeof(BlockQ6_K), kGroup = kQ6KGroupBytes;
    static void put(const uint8_t* blk, uint8_t* g, int r) {
        const auto* b = reinterpret_cast<const BlockQ6_K*>(blk);
        for (int j = 0; j < 16; ++j)
            g[16 * j + r] = static_cast<uint8_t>(b->scales[j]);
        for (int h = 0; h < 2; ++h)
            for (int k = 0; k < 8; ++k) {
                uint8_t* v = g + 256 + 192 * (8 * h + k);
                std::memcpy(v + 4 * r, b->ql + 64 * h + 4 * k, 4);
                std::memcpy(v + 64 + 4 * r, b->ql + 64 * h + 32 + 4 * k, 4);
                std::memcpy(v + 128 + 4 * r, b->qh + 32 * h + 4 * k, 4);
            }
        std::memcpy(g + 3328 + 2 * r, &b->d, 2);
    }
    static void get(const uint8_t* g, int r, uint8_t* blk) {
        auto* b = reinterpret_cast<BlockQ6_K*>(blk);
        for (int j = 0; j < 16; ++j)
            b->scales[j] = static_cast<int8_t>(g[16 * j + r]);
        for (int h = 0; h < 2; ++h)
            for (int k = 0; k < 8; ++k) {
                const uint8_t* v = g + 256 + 192 * (8 * h + k);
                std::memcpy(b->ql + 64 * h + 4 * k, v + 4 * r, 4);
                std::memcpy(b->ql + 64 * h + 32 + 4 * k, v + 64 + 4 * r, 4);
                std::memcpy(b->qh + 32 * h + 4 * k, v + 128 + 4 * r, 4);
            }
        std::memcpy(&b->d, g + 3328 + 2 * r, 2);
    }
};

static_assert(Q4K::kGroup == 16 * Q4K::kBlock && Q5K::kGroup == 16 * Q5K::kBlock &&
              Q6K::kGroup == 16 * Q6K::kBlock);

template <class T> void kq_pack(const uint8_t* rows16, int64_t cols, uint8_t* panel) {
    const int64_t nb = cols / 256;
    const size_t row_bytes = T::kBlock * static_cast<size_t>(nb);
    for (int64_t b = 0; b < nb; ++b)
        for (int r = 0; r < kRows; ++r)
            T::put(rows16 + static_cast<size_t>(r) * row_bytes + static_cast<size_t>(b) * T::kBlock,
                   panel + static_cast<size_t>(b) * T::kGroup, r);
}

template <class T> void kq_unpack_row(const uint8_t* panel, int64_t cols, int row, uint8_t* dst) {
    for (int64_t b = 0; b < cols / 256; ++b)
        T::get(panel + static_cast<size_t>(b) * T::kGroup, row,
               dst + static_cast<size_t>(b) * T::kBlock);
}

constexpr PanelFormat kQ4KFormat{kq_pack<Q4K>, kq_unpack_row<Q4K>};
constexpr PanelFormat kQ5KFormat{kq_pack<Q5K>, kq_unpack_row<Q5K>};
constexpr PanelFormat kQ6KFormat{kq_pack<Q6K>, kq_unpack_row<Q6K>};

} // namespace

void prepare_act_kp(const float* x, int64_t cols, uint8_t* dst) {
    const KPLayout L(cols);
    auto* q = reinterpret_cast<int8_t*>(dst);
    auto* d = reinterpret_cast<float*>(dst + L.d_off);
    auto* s32 = reinterpret_cast<int16_t*>(dst + L.s32_off);
    auto* n16 = reinterpret_cast<int32_t*>(dst + L.n16_off);
    static constexpr int kPairOrder[8] = {0, 2, 1, 3, 4, 6, 5, 7};
    for (int64_t b = 0; b < cols / 256; ++b) {
        const float* xb = x + 256 * b;
        float amax = 0;
        for (int i = 0; i < 256; ++i)
            amax = std::fmax(amax, std::fabs(xb[i]));
        const float id = amax > 0 ? 127.0f / amax : 0.0f;
        d[b] = amax / 127.0f;
        int sum16[16] = {};
        for (int i = 0; i < 256; ++i) {
            // nearbyint: round half to even, as the SIMD quantizers' default rounding mode.
            const int v = static_cast<int>(std::nearbyint(xb[i] * id));
            q[256 * b + i] = static_cast<int8_t>(v);
            sum16[i / 16] += v;
        }
        for (int j = 0; j < 16; ++j)
            n16[16 * b + j] = -32 * sum16[j];
        for (int k = 0; k < 8; ++k) {
            const int j = kPairOrder[k];
            s32[8 * b + k] = static_cast<int16_t>(sum16[2 * j] + sum16[2 * j + 1]);
        }
    }
}

const PanelFormat* kq_panel_format(DType t) {
    switch (t) {
    case DType::Q4_K:
        return &kQ4KFormat;
    case DType::Q5_K:
        return &kQ5KFormat;
    case DType::Q6_K:
        return &kQ6KFormat;
    default:
        return nullptr;
    }
}

const PanelKernel* kq_panel_kernel(DType t, SimdLevel level) {
    switch (level) {
    case SimdLevel::Avx512:
        return avx512_kq_panel_kernel(t);
    case SimdLevel::Avx2:
        return avx2_kq_panel_kernel(t);
    case SimdLevel::Scalar:
        break;
    }
    return nullptr;
}

} // namespace llmwb::kernels::detail
