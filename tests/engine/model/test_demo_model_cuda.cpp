// The demo model on the CUDA backend (the real plugin, or its emulator in the _sim twin): the
// serving engine's greedy tokens equal the bigram table's most likely continuation, with the
// argmax taken on the device and with the logits copied back, F16 and F32 KV caches. Without a
// CUDA device (and no emulator): SKIPPED.
#include <filesystem>

#include "engine/backend/cuda_executor.h"
#include "engine/backend/cuda_plugin.h"
#include "engine/model/demo_model.h"
#include "engine/model/demo_ngram.h"
#include "engine/model/loaded_model.h"
#include "engine/serving/engine.h"
#include "engine/serving/generation.h"
#include "engine/tokenizer/tokenizer.h"
#include "support/mini_test.h"

using namespace llmwb;

MT_TEST(greedyOnCudaEqualsTheTable) {
    auto plugin = CudaPlugin::load();
    if (!plugin)
        MT_SKIP("no CUDA plugin (" + plugin.message() + ")");
    auto devices = (*plugin)->devices();
    if (!devices || devices->empty())
        MT_SKIP("no CUDA device");
    mini_test::TempDir dir;
    auto path = ensure_demo_model(dir.path());
    MT_REQUIRE_MSG(path.ok(), "%s", path.ok() ? "" : path.message().c_str());
    auto model = load_model(path.value());
    MT_REQUIRE(model.ok());
    auto tok = Tokenizer::create(model.value()->tokenizer);
    MT_REQUIRE(tok.ok());
    const DemoBigramModel& lm = DemoBigramModel::instance();
    const std::vector<std::string> prompts = {
        "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n", "The scheduler",
        "zzzz qqqq 12345 ~~~", "The engine reads"};
    for (KvDtype kv : {KvDtype::F16, KvDtype::F32}) {
        CudaExecutorOptions o;
        o.kv_dtype = kv;
        o.max_tokens = 256;
        o.max_seqs = 8;
        o.max_context = 1024;
        auto gpu = CudaExecutor::create(*plugin, *model.value(), o);
        MT_REQUIRE_MSG(gpu.ok(), "%s", gpu.ok() ? "" : gpu.message().c_str());
        for (bool device_greedy : {true, false}) {
            EngineConfig c;
            c.device_greedy = device_greedy;
            c.max_num_batched_tokens = 256;
            c.max_num_seqs = 8;
            auto e = Engine::create(**gpu, **tok, c);
            MT_REQUIRE_MSG(e.ok(), "%s", e.ok() ? "" : e.message().c_str());
            for (const std::string& text : prompts) {
                MT_SCOPE("%s, kv %d, device greedy %d", text.c_str(), int(kv), int(device_greedy));
                const auto ids = (*tok)->encode(text, false);
                SamplingParams p;
                p.temperature = 0;
                p.max_tokens = 64;
                p.ignore_eos = true;
                auto r = generate(**e, ids, p);
                MT_REQUIRE_MSG(r.ok(), "%s", r.ok() ? "" : r.message().c_str());
                MT_COMPARE(r->ids, lm.greedy(ids.back(), 64));
            }
        }
    }
}

MINI_TEST_MAIN()
