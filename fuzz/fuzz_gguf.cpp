// libFuzzer target: GGUF parsing of an in-memory buffer, then everything the loader reads
// from the metadata (numbers, strings, arrays, the tokenizer) and every tensor's bytes.
#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/model/gguf_file.h"
#include "engine/model/model_loaders.h"

static volatile uint64_t g_sink;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto f = llmwb::GgufFile::parse(std::span<const uint8_t>(data, size), "fuzz");
    if (!f)
        return 0;
    uint64_t sink = 0;
    for (const auto& [key, v] : f->metadata) {
        sink += key.size();
        if (auto n = v.as_int())
            sink += uint64_t(*n);
        if (auto x = v.as_number())
            sink += uint64_t(*x != 0);
        if (auto s = v.as_string())
            sink += s->size();
        if (v.type == llmwb::GgufType::Array && v.elem_type != llmwb::GgufType::String) {
            for (uint64_t i = 0; i < v.count && i < 64; ++i)
                sink += uint64_t(v.array_int(i));
        }
        for (auto s : v.strings)
            sink += s.size();
    }
    for (const auto& t : f->tensors) {
        // The whole range must be readable (ASan checks it lies inside the buffer).
        if (t.bytes > 0)
            sink += t.data[0] + t.data[t.bytes - 1];
        sink += uint64_t(t.rows() + t.cols());
    }
    auto tok = llmwb::tokenizer_from_gguf(f.value(), "fuzz");
    if (tok)
        sink += tok->tokens.size() + tok->merges.size() + tok->added_tokens.size();
    g_sink = sink;
    return 0;
}
