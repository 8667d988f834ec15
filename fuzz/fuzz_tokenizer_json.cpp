// libFuzzer target: tokenizer.json reading (read_tokenizer_files) and, when it is accepted,
// building a Tokenizer and encoding/decoding a fixed text with it.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/tokenizer_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // The reader takes a path: write the input to a per-process scratch file.
    static const std::string path =
        "/tmp/llmwb-fuzz-tokenizer-" + std::to_string(getpid()) + ".json";
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        return 0;
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    auto files = llmwb::read_tokenizer_files(path, "");
    if (!files)
        return 0;
    auto tok = llmwb::Tokenizer::create(files->data);
    if (!tok)
        return 0;
    auto ids = (*tok)->encode("Hello world, 你好 🙂 <|im_start|>user\n  12345 it's", true);
    auto text = (*tok)->decode(ids, false);
    (void)text;
    return 0;
}
