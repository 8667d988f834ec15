// The KV block size rule, in one place: a block holds 8, 16 or 32 token slots (16 by default, as
// vLLM's). The CPU storage, the CUDA kernels, the block pool, the engine, the CLI's --block-size
// and the app's Tuning panel all read it from here.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "engine/util/result.h"

namespace llmwb {

inline constexpr std::array<int32_t, 3> kKvBlockSizes{8, 16, 32};
inline constexpr int32_t kDefaultKvBlockSize = 16;

constexpr bool is_kv_block_size(int64_t b) {
    for (int32_t s : kKvBlockSizes)
        if (b == s)
            return true;
    return false;
}

// "<what> must be 8, 16 or 32, got N" when b is not a block size.
inline Status check_kv_block_size(int64_t b, std::string_view what = "block size") {
    if (is_kv_block_size(b))
        return ok_status();
    // Appended in place: GCC 12 reports a false -Warray-bounds on `std::string(what) + "..."`
    // once this is inlined into a large (unity) translation unit.
    std::string message(what);
    message.append(" must be 8, 16 or 32, got ").append(std::to_string(b));
    return make_error(std::move(message));
}

} // namespace llmwb
