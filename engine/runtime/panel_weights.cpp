#include "engine/runtime/panel_weights.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "engine/model/loaded_model.h"
#include "engine/model/mapped_file.h"
#include "engine/runtime/host_memory.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/weight_layout.h"

namespace llmwb {

namespace {

constexpr size_t kArenaAlign = size_t{2} << 20;

size_t matrix_bytes(const TensorView& t) {
    return static_cast<size_t>(t.rows) * static_cast<size_t>(t.row_bytes());
}

// The matrices the products read, in a fixed order; the tied lm_head is the embedding's view.
// Experts of a stacked GGUF tensor are separate views (row ranges): each is packed on its own.
std::vector<TensorView*> packable_views(ModelWeights& w) {
    std::vector<TensorView*> out{&w.tok_embd, &w.output};
    for (LayerWeights& l : w.layers) {
        for (TensorView* t :
             {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.wo, &l.w_gate, &l.w_up, &l.w_gate_up, &l.w_down})
            out.push_back(t);
        for (ExpertWeights& e : l.experts)
            for (TensorView* t : {&e.w_gate, &e.w_up, &e.w_down})
                out.push_back(t);
        for (TensorView* t :
             {&l.shared_expert.w_gate, &l.shared_expert.w_up, &l.shared_expert.w_down})
            out.push_back(t);
    }
    return out;
}

// Drops the whole pages inside [p, p + n) from this process when they lie in one of the model's
// read-only file mappings (anything else, e.g. buffers made at load, is left alone: dropping
// anonymous pages would zero them).
void release_source_pages(const LoadedModel& model, const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bool in_mapping = false;
    for (const auto& m : model.mappings)
        if (m && m->data() && b >= m->data() && b + n <= m->data() + m->size())
            in_mapping = true;
    if (!in_mapping)
        return;
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
    const auto end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
    if (end > begin)
        madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// The float types a cast applies to.
bool castable(DType from, std::optional<DType> to) {
    return to && *to == DType::BF16 && (from == DType::F32 || from == DType::F16);
}

// The type matrix t is packed as when the cast is `to`: `to` for a castable type whose shape has
// a panel layout in it, else nullopt (packed as stored, if at all).
std::optional<DType> cast_target(const TensorView& t, std::optional<DType> to) {
    if (castable(t.type, to) && kernels::panel_layout_applies(*to, t.rows, t.cols))
        return to;
    return std::nullopt;
}

// Rows [0, rows) of an F32 / F16 matrix cast to BF16 and packed into dst (the panel layout of a
// BF16 matrix), through a bounded buffer: chunks of whole panels (the last may end in the rows %
// 16 tail, which pack_matrix_panels copies as rows).
void cast_and_pack(const TensorView& t, void* dst, kernels::ThreadPool& pool) {
    constexpr size_t kChunkBytes = size_t{8} << 20;
    const int64_t cols = t.cols;
    const size_t out_row = static_cast<size_t>(dtype_row_bytes(DType::BF16, cols));
    const int64_t chunk_rows =
        std::max<int64_t>(16, static_cast<int64_t>(kChunkBytes / out_row) / 16 * 16);
    std::vector<uint16_t> buf(static_cast<size_t>(std::min(chunk_rows, t.rows) * cols));
    for (int64_t r0 = 0; r0 < t.rows; r0 += chunk_rows) {
        const int64_t n = std::min(chunk_rows, t.rows - r0);
        pool.parallel_for(n, 1, [&](int64_t a, int64_t b) {
            for (int64_t r = a; r < b; ++r) {
                uint16_t* out = buf.data() + r * cols;
                const uint8_t* in = t.row(r0 + r);
                if (t.type == DType::F16) {
                    for (int64_t c = 0; c < cols; ++c) {
                        uint16_t h;
                        std::memcpy(&h, in + 2 * c, 2);
                        out[c] = kernels::fp32_to_bf16(kernels::fp16_to_fp32(h));
                    }
                } else {
                    for (int64_t c = 0; c < cols; ++c) {
                        float f;
                        std::memcpy(&f, in + 4 * c, 4);
                        out[c] = kernels::fp32_to_bf16(f);
                    }
                }
            }
        });
        kernels::pack_matrix_panels(DType::BF16, buf.data(), n, cols,
                                    static_cast<uint8_t*>(dst) + static_cast<size_t>(r0) * out_row,
                                    &pool);
    }
}

} // namespace

PanelWeights::PanelWeights(const LoadedModel& model, kernels::ThreadPool& pool,
                           std::optional<DType> cast_floats)
    : views_(model.weights) {
    std::vector<TensorView*> views = packable_views(views_);
    // Whatever keeps the layout off keeps a cast asked for from happening too: say so when the
    // model has matrices it would have cast.
    const bool wants_cast = std::any_of(views.begin(), views.end(), [&](const TensorView* t) {
        return t->present() && castable(t->type, cast_floats);
    });
    auto give_up = [&](std::string why) {
        if (wants_cast)
            not_cast_reason_ = why;
        reason_ = std::move(why);
    };
    if (!kernels::panel_layout_enabled()) {
        give_up("weight layout rows (LLMWB_WEIGHT_LAYOUT=rows or --weight-layout rows)");
        return;
    }
    // Distinct source matrices to pack (tied views share one packed copy).
    std::unordered_map<const void*, size_t> offset_of;
    size_t total = 0;
    for (TensorView* t : views) {
        if (!t->present() || t->layout != kernels::WeightLayout::Rows || offset_of.count(t->data))
            continue;
        const std::optional<DType> cast = cast_target(*t, cast_floats);
        if (castable(t->type, cast_floats) && !cast && uncast_.find(t->name) == std::string::npos)
            uncast_ += (uncast_.empty() ? "" : ", ") + t->name;
        if (!cast && !kernels::panel_layout_applies(t->type, t->rows, t->cols))
            continue;
        offset_of[t->data] = total;
        total += (static_cast<size_t>(t->rows) *
                      static_cast<size_t>(dtype_row_bytes(cast.value_or(t->type), t->cols)) +
                  63) /
                 64 * 64;
    }
    if (total == 0) {
        give_up("no weight matrix of this model has a panel layout");
        return;
    }
    arena_bytes_ = (total + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
    // The copy is anonymous memory: a model that runs from the page cache (larger than what is
    // free) would be killed for memory instead. Keep the rows unless the copy fits what is
    // available now (MemAvailable counts the reclaimable file pages the copy releases).
    const int64_t available = available_memory_bytes();
    if (available > 0 && static_cast<int64_t>(arena_bytes_) > available - (int64_t{512} << 20)) {
        give_up("the panel layout's " + std::to_string(arena_bytes_ >> 20) +
                " MiB copy does not fit the " + std::to_string(available >> 20) +
                " MiB of memory available");
        arena_bytes_ = 0;
        return;
    }
    // Over-map by one alignment unit so that the arena can start on a 2 MiB boundary.
    void* raw = mmap(nullptr, arena_bytes_ + kArenaAlign, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) {
        give_up(std::string("could not map ") + std::to_string(arena_bytes_ >> 20) +
                " MiB for the panel layout: " + std::strerror(errno));
        arena_bytes_ = 0;
        return;
    }
    const auto base = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (base + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
    if (aligned > base)
        munmap(raw, aligned - base);
    const uintptr_t end = aligned + arena_bytes_;
    if (base + arena_bytes_ + kArenaAlign > end)
        munmap(reinterpret_cast<void*>(end), base + arena_bytes_ + kArenaAlign - end);
    arena_ = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
    madvise(arena_, arena_bytes_, MADV_HUGEPAGE);
#endif

    std::unordered_map<const void*, const void*> packed_of;
    for (TensorView* t : views) {
        auto it = offset_of.find(t->data);
        if (!t->present() || it == offset_of.end())
            continue;
        const void* src = t->data;
        auto done = packed_of.find(src);
        if (done == packed_of.end()) {
            void* dst = static_cast<uint8_t*>(arena_) + it->second;
            const std::optional<DType> cast = cast_target(*t, cast_floats);
            if (cast) {
                cast_and_pack(*t, dst, pool);
                ++cast_matrices_;
                cast_source_bytes_ += static_cast<int64_t>(matrix_bytes(*t));
                cast_bytes_ += t->rows * dtype_row_bytes(*cast, t->cols);
            } else {
                kernels::pack_matrix_panels(t->type, src, t->rows, t->cols, dst, &pool);
            }
            release_source_pages(model, src, matrix_bytes(*t));
            ++packed_matrices_;
            done = packed_of.emplace(src, dst).first;
            packed_bytes_ += t->rows * dtype_row_bytes(cast.value_or(t->type), t->cols);
        }
        t->type = cast_target(*t, cast_floats).value_or(t->type);
        t->data = done->second;
        t->layout = kernels::WeightLayout::Panels;
    }
}

PanelWeights::~PanelWeights() {
    if (arena_)
        munmap(arena_, arena_bytes_);
}

} // namespace llmwb
