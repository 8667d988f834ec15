// libFuzzer target: safetensors parsing of an in-memory buffer and every tensor's bytes.
#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/model/safetensors_file.h"

static volatile uint64_t g_sink;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto f = llmwb::SafetensorsFile::parse(std::span<const uint8_t>(data, size), "fuzz");
    if (!f)
        return 0;
    uint64_t sink = 0;
    for (const auto& t : f->tensors) {
        if (t.bytes > 0)
            sink += t.data[0] + t.data[t.bytes - 1];
        sink += uint64_t(t.rows() + t.cols()) + t.shape.size();
        if (f->find(t.name) == nullptr)
            __builtin_trap();
    }
    g_sink = sink;
    return 0;
}
