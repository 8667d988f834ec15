#include "engine/serving/kv_block_copy.h"

#include <cassert>
#include <cstring>

namespace llmwb {

void copy_kv_block(const KvCacheStorage& src, int32_t src_block, KvCacheStorage& dst,
                   int32_t dst_block) {
    assert(src.num_layers() == dst.num_layers() && src.block_size() == dst.block_size() &&
           src.slot_stride() == dst.slot_stride());
    assert(src_block >= 0 && src_block < src.num_blocks());
    assert(dst_block >= 0 && dst_block < dst.num_blocks());
    assert(&src != &dst || src_block != dst_block);
    const int64_t first_src = static_cast<int64_t>(src_block) * src.block_size();
    const int64_t first_dst = static_cast<int64_t>(dst_block) * dst.block_size();
    const size_t bytes = static_cast<size_t>(src.block_size() * src.slot_stride()) * sizeof(float);
    for (int32_t l = 0; l < src.num_layers(); ++l) {
        std::memcpy(dst.k_slot(l, first_dst), src.k_slot(l, first_src), bytes);
        std::memcpy(dst.v_slot(l, first_dst), src.v_slot(l, first_src), bytes);
    }
}

} // namespace llmwb
