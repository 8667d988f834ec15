// libFuzzer target: the chat messages files of `llmwb render-chat --messages` and `llmwb
// generate --chat` (render_chat_file: depth check, JSON, message shape, then the model's chat
// template over them). The model is $LLMWB_FUZZ_MODEL (scripts/fuzz.sh writes a qwen3 GGUF
// carrying Qwen3's real template: tools, thinking, tool calls) or, without it, the demo model.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "app/cli/cli_model.h"
#include "app/cli/cli_output.h"

namespace {

llmwb::cli::CliModel* model() {
    static std::unique_ptr<llmwb::cli::CliModel> m = [] {
        const char* env = std::getenv("LLMWB_FUZZ_MODEL");
        std::optional<std::string> path;
        if (env && *env)
            path = env;
        auto r = llmwb::cli::open_cli_model(path);
        if (!r) {
            std::fprintf(stderr, "fuzz_chat_messages: %s\n", r.message().c_str());
            std::abort(); // a setup error, not a finding: scripts/fuzz.sh checks the model first
        }
        return std::move(*r);
    }();
    return m.get();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::string path =
        "/tmp/llmwb-fuzz-messages-" + std::to_string(getpid()) + ".json";
    llmwb::cli::CliModel* m = model();
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        return 0;
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    for (bool gen : {false, true}) {
        auto out = llmwb::cli::render_chat_file(*m, path, gen,
                                                gen ? std::optional<bool>(false) : std::nullopt);
        (void)out;
    }
    return 0;
}
