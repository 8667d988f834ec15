// PanelWeights: a CPU runtime's own copy of a model's weight matrices in the panel layout
// (kernels/cpu/weight_layout.h), made once at load.
//
// Every matrix that goes through kernels::matmul (attention and MLP projections, experts, the
// lm_head and the token embeddings it is tied to) and whose type has a panel format is packed
// into one anonymous arena (2 MiB aligned, transparent huge pages requested: a decode step
// streams all of it, and fewer TLB misses matter). As each matrix is packed, the pages of its
// source in the model's read-only file mapping are released (never memory outside
// LoadedModel::mappings) (madvise MADV_DONTNEED: they are clean
// file pages, faulted in again from the file if another reader needs them), so the resident
// weight memory stays one copy. Routers, norms and biases stay as loaded. When the layout is off
// (kernels::panel_layout_enabled()), no type has a format, the copy would not fit the memory
// available now (the rows then run from the page cache), or the arena cannot be mapped, the
// views are the loaded ones and the reason is kept.
//
// Optionally the float matrices (F32, F16) are cast to BF16 as they are packed (`llmwb --dtype
// bfloat16`, vLLM's flag): each value rounded to nearest even, the same bytes as a BF16 file of
// those rounded values, so everything reads BF16 (prefill through vdpbf16ps on CPUs with
// AVX512_BF16); the copy is no larger than the matrices it replaces (F32: half).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/model/model_weights.h"

namespace llmwb {

struct LoadedModel;

namespace kernels {
class ThreadPool;
}

class PanelWeights {
  public:
    // weights(): the views to use for products (the loaded ones where nothing is packed).
    // cast_floats: DType::BF16 casts the F32 / F16 matrices (nullopt: every matrix as stored).
    PanelWeights(const LoadedModel& model, kernels::ThreadPool& pool,
                 std::optional<DType> cast_floats = std::nullopt);
    ~PanelWeights();
    PanelWeights(const PanelWeights&) = delete;
    PanelWeights& operator=(const PanelWeights&) = delete;

    const ModelWeights& weights() const { return views_; }
    int64_t packed_bytes() const { return packed_bytes_; }
    int32_t packed_matrices() const { return packed_matrices_; }
    // Why nothing was packed ("" when something was).
    const std::string& not_packed_reason() const { return reason_; }
    // Matrices cast (cast_floats) and their bytes before the cast; a float matrix that could not
    // be cast (its shape has no panel format) is named in uncast().
    int32_t cast_matrices() const { return cast_matrices_; }
    int64_t cast_source_bytes() const { return cast_source_bytes_; }
    int64_t cast_bytes() const { return cast_bytes_; } // the same matrices after the cast
    const std::string& uncast() const { return uncast_; }
    // A cast asked for that did not happen at all although the model has F32 / F16 matrices:
    // why (the layout off, the copy not fitting, ...); "" otherwise.
    const std::string& not_cast_reason() const { return not_cast_reason_; }

  private:
    ModelWeights views_;
    void* arena_ = nullptr;
    size_t arena_bytes_ = 0;
    int64_t packed_bytes_ = 0;
    int32_t packed_matrices_ = 0;
    int32_t cast_matrices_ = 0;
    int64_t cast_source_bytes_ = 0, cast_bytes_ = 0;
    std::string reason_, uncast_, not_cast_reason_;
};

} // namespace llmwb
