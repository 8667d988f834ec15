#include "engine/runtime/panel_weights.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "engine/model/loaded_model.h"
#include "engine/model/mapped_file.h"
#include "engine/runtime/host_memory.h"
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

} // namespace

PanelWeights::PanelWeights(const LoadedModel& model, kernels::ThreadPool& pool)
    : views_(model.weights) {
    if (!kernels::panel_layout_enabled()) {
        reason_ = "weight layout rows (LLMWB_WEIGHT_LAYOUT=rows or --weight-layout rows)";
        return;
    }
    // Distinct source matrices to pack (tied views share one packed copy).
    std::vector<TensorView*> views = packable_views(views_);
    std::unordered_map<const void*, size_t> offset_of;
    size_t total = 0;
    for (TensorView* t : views) {
        if (!t->present() || t->layout != kernels::WeightLayout::Rows ||
            !kernels::panel_layout_applies(t->type, t->rows, t->cols) || offset_of.count(t->data))
            continue;
        offset_of[t->data] = total;
        total += (matrix_bytes(*t) + 63) / 64 * 64;
    }
    if (total == 0) {
        reason_ = "no weight matrix of this model has a panel layout";
        return;
    }
    arena_bytes_ = (total + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
    // The copy is anonymous memory: a model that runs from the page cache (larger than what is
    // free) would be killed for memory instead. Keep the rows unless the copy fits what is
    // available now (MemAvailable counts the reclaimable file pages the copy releases).
    const int64_t available = available_memory_bytes();
    if (available > 0 && static_cast<int64_t>(arena_bytes_) > available - (int64_t{512} << 20)) {
        reason_ = "the panel layout's " + std::to_string(arena_bytes_ >> 20) +
                  " MiB copy does not fit the " + std::to_string(available >> 20) +
                  " MiB of memory available";
        arena_bytes_ = 0;
        return;
    }
    // Over-map by one alignment unit so that the arena can start on a 2 MiB boundary.
    void* raw = mmap(nullptr, arena_bytes_ + kArenaAlign, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) {
        reason_ = std::string("could not map ") + std::to_string(arena_bytes_ >> 20) +
                  " MiB for the panel layout: " + std::strerror(errno);
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
            kernels::pack_matrix_panels(t->type, src, t->rows, t->cols, dst, &pool);
            release_source_pages(model, src, matrix_bytes(*t));
            packed_bytes_ += static_cast<int64_t>(matrix_bytes(*t));
            ++packed_matrices_;
            done = packed_of.emplace(src, dst).first;
        }
        t->data = done->second;
        t->layout = kernels::WeightLayout::Panels;
    }
}

PanelWeights::~PanelWeights() {
    if (arena_)
        munmap(arena_, arena_bytes_);
}

} // namespace llmwb
