// Weight layouts: how a matrix's rows are arranged in memory.
//
//   Rows     as stored in the model file: row r at data + r * dtype_row_bytes(type, cols).
//   Panels   rows grouped in panels of kPanelRows (16) consecutive rows. Panel p (rows 16p ..
//            16p + 15) occupies exactly the bytes those 16 rows occupy in Rows order, arranged
//            as the type's PanelFormat says (interleaved so that one vector holds the same
//            columns of 16 rows); a last partial panel (rows % 16 rows) stays in Rows order.
//            Same total size as Rows: converting costs no extra weight memory once the source
//            is released.
//
// The panel layout is chosen when a CPU runtime loads a model (CpuTransformer) and is read by
// the matrix-vector and matrix-matrix kernels alike, so no kernel repacks weights per call and a
// (row, token) result is computed the same way whatever number of tokens shares the call.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/dtype.h"

namespace llmwb::kernels {

class ThreadPool;
struct WeightMatrix;

enum class WeightLayout : uint8_t { Rows = 0, Panels = 1 };
constexpr int kPanelRows = 16;

// One type's panel arrangement. `rows16`: 16 rows as stored, row_bytes apart;
// `panel`: 16 * row_bytes bytes. pack and unpack_row are exact inverses (bytes, not values).
struct PanelFormat {
    void (*pack)(const uint8_t* rows16, int64_t cols, uint8_t* panel);
    void (*unpack_row)(const uint8_t* panel, int64_t cols, int row, uint8_t* dst);
};

// nullptr: the type has no panel layout (matrices of it stay in Rows order).
const PanelFormat* panel_format(DType t);

// Process-wide switch read when a runtime loads a model: false keeps every matrix in Rows order
// (benchmarks compare both; LLMWB_WEIGHT_LAYOUT=rows in the environment sets it at start-up).
bool panel_layout_enabled();
void set_panel_layout_enabled(bool on);
const char* weight_layout_name(WeightLayout l); // "rows" / "panels"

// Whether a matrix of this type and shape is worth converting (a format exists, >= 1 panel).
bool panel_layout_applies(DType t, int64_t rows, int64_t cols);

// Packs a [rows][cols] matrix stored in Rows order into dst (the same byte count; src and dst
// must not overlap). Full panels are packed, the rows % 16 tail is copied. Parallel when a pool
// is given.
void pack_matrix_panels(DType t, const void* src, int64_t rows, int64_t cols, void* dst,
                        ThreadPool* pool);

// Row r of a matrix in either layout, as stored (dtype_row_bytes bytes) or as fp32.
void copy_weight_row(const WeightMatrix& w, int64_t r, uint8_t* dst);
void dequantize_weight_row(const WeightMatrix& w, int64_t r, float* dst);

} // namespace llmwb::kernels
