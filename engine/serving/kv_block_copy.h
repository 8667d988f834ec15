// Copies one KV block (every layer, K and V) between two storages of the same model and block
// size, or inside one storage: copy-on-write and re-planning use it.
#pragma once

#include <cstdint>

#include "engine/runtime/kv_cache_storage.h"

namespace llmwb {

// Preconditions (asserted): same layers, kv heads, head_dim and block size; ids in range;
// not the same block of the same storage.
void copy_kv_block(const KvCacheStorage& src, int32_t src_block, KvCacheStorage& dst,
                   int32_t dst_block);

} // namespace llmwb
