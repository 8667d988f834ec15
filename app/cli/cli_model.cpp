#include "app/cli/cli_model.h"

#include <algorithm>
#include <cstdlib>

#include "engine/model/demo_model.h"

namespace llmwb::cli {

std::string default_model_dir() {
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
        return std::string(xdg) + "/llmwb/llm-workbench";
    const char* home = std::getenv("HOME");
    return std::string(home && *home ? home : ".") + "/.local/share/llmwb/llm-workbench";
}

Status CliModel::prepare_runtime(int64_t tokens, int threads) {
    const ModelConfig& c = model->config;
    int64_t want = std::max<int64_t>(1, std::min<int64_t>(tokens, c.max_position));
    int32_t bs = KvCacheStorage::kDefaultBlockSize;
    int64_t blocks = (want + bs - 1) / bs;
    auto kv_or = KvCacheStorage::create(c, static_cast<int32_t>(blocks), bs);
    if (!kv_or) return kv_or.error();
    kv = std::move(kv_or.value());
    pool = std::make_unique<kernels::ThreadPool>(threads);
    transformer = std::make_unique<Transformer>(*model, *pool);
    return ok_status();
}

Result<std::unique_ptr<CliModel>> open_cli_model(const CliArgs& args) {
    std::string path;
    if (auto m = args.get("model")) {
        path = *m;
    } else {
        auto demo = ensure_demo_model(default_model_dir());
        if (!demo) return demo.error();
        path = demo.value();
    }
    auto loaded = load_model(path);
    if (!loaded) return loaded.error();
    auto out = std::make_unique<CliModel>();
    out->model = std::move(loaded.value());
    auto tok = Tokenizer::create(out->model->tokenizer);
    if (!tok) return make_error(path + ": tokenizer: " + tok.message());
    out->tokenizer = std::move(tok.value());
    return out;
}

}  // namespace llmwb::cli
