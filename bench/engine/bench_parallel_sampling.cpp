// llmwb-bench-n: parallel sampling (n > 1) against n separate requests over the same prompt.
// The group prefills the prompt once and forks the samples; separate requests prefill it n
// times (without prefix caching), or share its full blocks through the prefix cache (the
// server's n > 1 before issue 20). Prints wall time, generated tokens/s, prompt tokens computed
// and the KV pool's peak blocks for each, and the ratios against the group. A figure, not a
// test: numbers depend on the machine.
//   llmwb-bench-n [--model PATH | --tiny-llama] [--prompt-tokens 1000] [--n 8]
//                 [--max-tokens 32] [--threads N] [--repeats 3]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "engine/model/demo_model.h"
#include "engine/model/loaded_model.h"
#include "engine/model/model_loaders.h"
#include "engine/model/model_writer.h"
#include "engine/runtime/cpu_transformer.h"
#include "engine/serving/engine.h"
#include "engine/serving/parallel_sampling.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/thread_pool.h"

using namespace llmwb;

namespace {

struct Options {
    std::string model;
    bool tiny_llama = false;
    int prompt_tokens = 1000, n = 8, max_tokens = 32, threads = 0, repeats = 3;
};

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&](int& v) {
            if (i + 1 >= argc)
                return false;
            v = std::atoi(argv[++i]);
            return v > 0;
        };
        if (a == "--model" && i + 1 < argc) {
            o.model = argv[++i];
        } else if (a == "--tiny-llama") {
            o.tiny_llama = true;
        } else if (a == "--prompt-tokens") {
            if (!next(o.prompt_tokens))
                return false;
        } else if (a == "--n") {
            if (!next(o.n))
                return false;
        } else if (a == "--max-tokens") {
            if (!next(o.max_tokens))
                return false;
        } else if (a == "--threads") {
            if (!next(o.threads))
                return false;
        } else if (a == "--repeats") {
            if (!next(o.repeats))
                return false;
        } else {
            return false;
        }
    }
    return true;
}

struct Figures {
    double ms = 0;
    int64_t generated = 0, prompt_computed = 0, peak_blocks = 0;
};

enum class Mode { Group, Separate, SeparateCached };

const char* mode_name(Mode m) {
    switch (m) {
    case Mode::Group:
        return "n=N group (prefill once, fork)";
    case Mode::Separate:
        return "N separate requests";
    case Mode::SeparateCached:
        return "N separate + prefix cache";
    }
    return "";
}

Figures run(CpuTransformer& model, const Tokenizer& tok, const Options& o,
            const std::vector<int32_t>& prompt, Mode mode) {
    EngineConfig c;
    c.max_num_seqs = o.n;
    c.max_num_batched_tokens = 512;
    c.enable_prefix_caching = mode == Mode::SeparateCached;
    const int32_t bs = c.block_size;
    c.memory.num_blocks =
        o.n * ((o.prompt_tokens + o.max_tokens + bs - 1) / bs + 1) + 8; // room for all separate
    auto e = Engine::create(model, tok, c);
    if (!e) {
        std::fprintf(stderr, "error: %s\n", e.message().c_str());
        std::exit(1);
    }
    Engine& engine = **e;
    SamplingParams p;
    p.temperature = 0.8f;
    p.seed = 1;
    p.max_tokens = o.max_tokens;
    p.max_tokens_set = true;
    p.ignore_eos = true;
    const auto choices = parallel_sampling_choices(p, o.n);
    Figures f;
    const auto t0 = std::chrono::steady_clock::now();
    if (mode == Mode::Group) {
        if (!engine.add_request_group(prompt, choices)) {
            std::fprintf(stderr, "error: add_request_group\n");
            std::exit(1);
        }
    } else {
        for (const SamplingParams& s : choices)
            if (!engine.add_request(prompt, s)) {
                std::fprintf(stderr, "error: add_request\n");
                std::exit(1);
            }
    }
    StepOutputs out;
    while (engine.has_unfinished()) {
        engine.step(out);
        f.prompt_computed += out.num_prefill_tokens;
        for (const RequestOutput& r : out.outputs)
            f.generated += static_cast<int64_t>(r.new_token_ids.size());
        f.peak_blocks = std::max<int64_t>(f.peak_blocks, engine.kv_manager().pool().num_used());
    }
    f.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return f;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(stderr, "usage: llmwb-bench-n [--model PATH | --tiny-llama] "
                             "[--prompt-tokens N] [--n N] [--max-tokens N] [--threads N] "
                             "[--repeats N]\n");
        return 2;
    }
    const auto dir = std::filesystem::temp_directory_path() / "llmwb-bench-n";
    std::string path = o.model;
    if (o.tiny_llama) {
        std::filesystem::create_directories(dir);
        ModelWriterSpec s;
        s.arch = Architecture::Llama;
        s.format = ModelFileFormat::Gguf;
        s.weight_type = WeightType::F32;
        s.seed = 7;
        s.hidden_size = 256;
        s.intermediate_size = 688;
        s.num_layers = 4;
        s.num_heads = 8;
        s.num_kv_heads = 4;
        s.max_position = 4096;
        path = (dir / "tiny-llama.gguf").string();
        if (Status st = write_model(s, path); !st) {
            std::fprintf(stderr, "error: %s\n", st.message().c_str());
            return 1;
        }
    } else if (path.empty()) {
        auto demo = ensure_demo_model(dir.string());
        if (!demo) {
            std::fprintf(stderr, "error: %s\n", demo.message().c_str());
            return 1;
        }
        path = *demo;
    }
    auto loaded = load_model(path);
    if (!loaded) {
        std::fprintf(stderr, "error: %s\n", loaded.message().c_str());
        return 1;
    }
    auto tok = Tokenizer::create((*loaded)->tokenizer);
    if (!tok) {
        std::fprintf(stderr, "error: tokenizer: %s\n", tok.message().c_str());
        return 1;
    }
    kernels::ThreadPool pool(o.threads);
    CpuTransformer model(**loaded, pool);
    std::mt19937 rng(3);
    std::vector<int32_t> prompt(static_cast<size_t>(o.prompt_tokens));
    for (int32_t& t : prompt)
        t = static_cast<int32_t>(rng() % static_cast<uint32_t>(model.vocab_size()));
    std::printf("llmwb-bench-n: %s, prompt %d tokens, n %d, %d tokens each, %d threads, best of "
                "%d\n",
                path.c_str(), o.prompt_tokens, o.n, o.max_tokens, pool.size(), o.repeats);
    double group_ms = 0;
    for (Mode m : {Mode::Group, Mode::Separate, Mode::SeparateCached}) {
        Figures best;
        for (int r = 0; r < o.repeats; ++r) {
            Figures f = run(model, **tok, o, prompt, m);
            if (r == 0 || f.ms < best.ms)
                best = f;
        }
        if (m == Mode::Group)
            group_ms = best.ms;
        std::printf("  %-32s %9.1f ms  %8.1f gen tok/s  prompt computed %6lld  peak blocks %5lld"
                    "  time x%.2f\n",
                    mode_name(m), best.ms, best.generated / (best.ms / 1000.0),
                    static_cast<long long>(best.prompt_computed),
                    static_cast<long long>(best.peak_blocks), best.ms / group_ms);
    }
    return 0;
}
