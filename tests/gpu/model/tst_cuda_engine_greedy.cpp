// Engine-level: the serving engine on the CUDA backend (F32 KV cache) produces exactly the CPU
// backend's greedy tokens for a concurrent workload with chunked prefill, preemption (a small
// KV pool) and prefix-cache hits (shared prompt prefixes); and for a sliding-window model
// (mistral) whose leading blocks the engine releases as requests advance, so that the CUDA kernels
// see block tables whose first entries are fillers. Without a CUDA device: SKIPPED.
#include <algorithm>
#include <map>
#include <vector>

#include "engine/runtime/cpu_executor.h"
#include "engine/serving/engine.h"
#include "engine/tokenizer/tokenizer.h"
#include "gpu_model_util.h"
#include "kernels/cpu/thread_pool.h"

using namespace llmwb;
using namespace llmwb::gputest;

namespace {

struct RunStats {
    std::map<RequestId, std::vector<int32_t>> tokens;
    int64_t preemptions = 0;
    int64_t prefix_hits = 0;
    int64_t accepted = 0;     // speculative draft tokens accepted
    int32_t max_released = 0; // most blocks released by a request's sliding window at once
    std::string error;
};

RunStats run_workload(ModelExecutor& exec, const Tokenizer& tok, int32_t vocab,
                      bool device_greedy = true, int32_t speculative_tokens = 0) {
    EngineConfig c;
    if (speculative_tokens > 0) {
        c.speculative.method = SpeculativeMethod::Ngram;
        c.speculative.num_speculative_tokens = speculative_tokens;
        c.speculative.prompt_lookup_min = 1;
    }
    c.device_greedy = device_greedy;
    c.block_size = 16;
    c.max_num_seqs = 8;
    c.max_num_batched_tokens = 64;
    c.memory.num_blocks = 24; // far less than the workload needs at once: preemption
    RunStats out;
    auto engine = Engine::create(exec, tok, c);
    if (!engine) {
        out.error = engine.message();
        return out;
    }
    std::vector<int32_t> shared;
    for (int i = 0; i < 48; ++i)
        shared.push_back((13 * i + 1) % vocab);
    for (int r = 0; r < 10; ++r) {
        std::vector<int32_t> prompt = r % 2 == 0 ? shared : std::vector<int32_t>{};
        const int extra = 12 + 7 * r;
        for (int i = 0; i < extra; ++i)
            prompt.push_back((31 * r + 17 * i + 5) % vocab);
        SamplingParams p;
        p.temperature = 0;
        p.max_tokens = 24;
        p.ignore_eos = true;
        auto id = (*engine)->add_request(prompt, p);
        if (!id) {
            out.error = id.message();
            return out;
        }
    }
    StepOutputs so;
    int guard = 0;
    while ((*engine)->has_unfinished() && ++guard < 10000) {
        (*engine)->step(so);
        out.preemptions += static_cast<int64_t>(so.preempted.size());
        for (const auto& [id, toks] : out.tokens)
            if ((*engine)->kv_manager().has_table(id))
                out.max_released =
                    std::max(out.max_released, (*engine)->kv_manager().num_released(id));
        for (const RequestOutput& o : so.outputs)
            out.tokens[o.id].insert(out.tokens[o.id].end(), o.new_token_ids.begin(),
                                    o.new_token_ids.end());
        if (!(*engine)->last_error().empty()) {
            out.error = (*engine)->last_error();
            return out;
        }
    }
    out.prefix_hits = (*engine)->kv_manager().prefix_hits();
    out.accepted = (*engine)->speculative_stats().num_accepted_tokens;
    return out;
}

// The tiny qwen2 F32 model (or `spec`) on the CPU backend and on CUDA (F32 KV). Skips without a
// device.
struct Backends {
    explicit Backends(const char* name,
                      const ModelWriterSpec& spec = tiny_spec(Architecture::Qwen2, WeightType::F32))
        : plugin(plugin_or_skip()), model(write_and_load(spec, name)), pool(2),
          transformer(*model, pool), cpu(transformer) {
        auto t = Tokenizer::create(model->tokenizer);
        MT_REQUIRE(t);
        tok = std::move(t.value());
        CudaExecutorOptions o;
        o.kv_dtype = KvDtype::F32;
        o.max_tokens = 64;
        o.max_seqs = 8;
        auto g = CudaExecutor::create(plugin, *model, o);
        MT_REQUIRE_MSG(g, "%s", g ? "" : g.message().c_str());
        gpu = std::move(g.value());
        vocab = cpu.vocab_size();
    }
    std::shared_ptr<CudaPlugin> plugin;
    std::unique_ptr<LoadedModel> model;
    kernels::ThreadPool pool;
    CpuTransformer transformer;
    CpuExecutor cpu;
    std::unique_ptr<Tokenizer> tok;
    std::unique_ptr<CudaExecutor> gpu;
    int32_t vocab = 0;
};

} // namespace

MT_TEST(greedy_tokens_match_cpu_backend) {
    Backends be("engine");
    RunStats a = run_workload(be.cpu, *be.tok, be.vocab);
    RunStats b = run_workload(*be.gpu, *be.tok, be.vocab);        // argmax on the device
    RunStats c = run_workload(*be.gpu, *be.tok, be.vocab, false); // logits copied back
    MT_REQUIRE_MSG(a.error.empty(), "cpu: %s", a.error.c_str());
    MT_REQUIRE_MSG(b.error.empty(), "cuda: %s", b.error.c_str());
    MT_REQUIRE_MSG(c.error.empty(), "cuda (host sampling): %s", c.error.c_str());
    MT_CHECK(c.tokens == b.tokens);
    MT_CHECK(a.preemptions > 0); // the workload exercises preemption ...
    MT_CHECK(a.prefix_hits > 0); // ... and prefix hits
    MT_REQUIRE(a.tokens.size() == 10 && b.tokens.size() == 10);
    int mismatched = 0;
    for (const auto& [id, toks] : a.tokens) {
        MT_CHECK(toks.size() == 24);
        if (b.tokens[id] != toks) {
            ++mismatched;
            size_t first = 0;
            while (first < toks.size() && first < b.tokens[id].size() &&
                   toks[first] == b.tokens[id][first])
                ++first;
            std::fprintf(stderr, "request %lld: first difference at token %zu\n",
                         static_cast<long long>(id), first);
        }
    }
    MT_CHECK_MSG(mismatched == 0, "%d of 10 requests differ", mismatched);
    int64_t graph_steps = 0, eager_steps = 0;
    be.gpu->graph_stats(graph_steps, eager_steps);
    std::printf("cuda: %lld graph steps, %lld eager steps; preemptions %lld (cpu) %lld (cuda)\n",
                static_cast<long long>(graph_steps), static_cast<long long>(eager_steps),
                static_cast<long long>(a.preemptions), static_cast<long long>(b.preemptions));
}

// Speculative decoding (prompt lookup) on the CUDA backend: the k + 1 verify rows of each
// request come back from the device (argmax on the device, or logits for host sampling) and the
// greedy tokens are the CPU backend's without speculation.
MT_TEST(speculative_greedy_matches_cpu_backend) {
    Backends be("engine_spec");
    RunStats a = run_workload(be.cpu, *be.tok, be.vocab);
    RunStats b = run_workload(*be.gpu, *be.tok, be.vocab, true, 4);
    RunStats c = run_workload(*be.gpu, *be.tok, be.vocab, false, 4);
    MT_REQUIRE_MSG(a.error.empty(), "cpu: %s", a.error.c_str());
    MT_REQUIRE_MSG(b.error.empty(), "cuda: %s", b.error.c_str());
    MT_REQUIRE_MSG(c.error.empty(), "cuda (host sampling): %s", c.error.c_str());
    MT_CHECK(b.accepted > 0);
    MT_CHECK(b.tokens == c.tokens);
    int mismatched = 0;
    for (const auto& [id, toks] : a.tokens)
        mismatched += b.tokens[id] != toks ? 1 : 0;
    MT_CHECK_MSG(mismatched == 0, "%d of 10 requests differ", mismatched);
    std::printf("cuda speculative: %lld draft tokens accepted\n",
                static_cast<long long>(b.accepted));
}

// Mistral with a sliding window (a Hugging Face folder: GGUF files carry no window) through the
// engine: blocks wholly before every future query's window are released while requests run,
// and the CUDA backend's greedy tokens are still the CPU backend's.
MT_TEST(sliding_window_greedy_matches_cpu_backend) {
    ModelWriterSpec spec = tiny_spec(Architecture::Llama, WeightType::F32);
    spec.format = ModelFileFormat::Safetensors;
    spec.sliding_window = 20;
    Backends be("engine_window", spec);
    MT_REQUIRE(be.model->config.sliding_window == 20);
    RunStats a = run_workload(be.cpu, *be.tok, be.vocab);
    RunStats b = run_workload(*be.gpu, *be.tok, be.vocab);
    MT_REQUIRE_MSG(a.error.empty(), "cpu: %s", a.error.c_str());
    MT_REQUIRE_MSG(b.error.empty(), "cuda: %s", b.error.c_str());
    MT_CHECK_MSG(b.max_released > 0, "no block was released by the window");
    MT_REQUIRE(a.tokens.size() == 10 && b.tokens.size() == 10);
    int mismatched = 0;
    for (const auto& [id, toks] : a.tokens)
        mismatched += b.tokens[id] != toks ? 1 : 0;
    MT_CHECK_MSG(mismatched == 0, "%d of 10 requests differ", mismatched);
    std::printf("cuda sliding window: up to %d blocks released per request\n", b.max_released);
}

MINI_TEST_MAIN()
