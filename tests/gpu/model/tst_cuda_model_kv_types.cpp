// The CUDA backend's KV cache in every KvDtype, whole model, against the CPU backend with the
// same KV type (both store the same bytes for the same K/V: kernels/cpu/kv_format.h):
// - logits of prefill, mixed and decode steps (decode through CUDA graphs), fp8 with calibrated
//   per-layer scales, then copy-on-write and a re-plan that keeps blocks (values and int8
//   scales move together);
// - the fp8 calibration ranges (kv_absmax) equal the CPU's, and leave the pool intact;
// - the serving engine's greedy tokens per type, and a switch of the type while requests run
//   (Engine::set_kv_dtype through CudaExecutor::set_kv_dtype), equal the CPU's. Without a CUDA
//   device: SKIPPED.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "engine/runtime/cpu_executor.h"
#include "engine/runtime/kv_calibration.h"
#include "engine/serving/engine.h"
#include "engine/tokenizer/tokenizer.h"
#include "gpu_model_util.h"
#include "kernels/cpu/thread_pool.h"

using namespace llmwb;
using namespace llmwb::gputest;

namespace {

// Bounds on the logits' relative error, CUDA vs CPU with the same KV type (F32 weights). The
// stored values are the same bytes unless a K/V element sits on a rounding boundary (the two
// backends' matmuls differ in the last bits); fp8 and int8 steps are coarse, so such a flip moves
// a value further.
double tolerance(KvDtype t) {
    switch (t) {
    case KvDtype::F32:
        return 2e-3;
    case KvDtype::F16:
    case KvDtype::BF16:
        return 2e-3;
    default:
        return 1e-2;
    }
}

std::vector<int32_t> calibration_tokens(int32_t vocab) {
    std::vector<int32_t> t;
    for (int i = 0; i < 50; ++i)
        t.push_back((29 * i + 3) % vocab);
    return t;
}

struct Pair {
    explicit Pair(const char* name, bool graphs = true)
        : plugin(plugin_or_skip()),
          model(write_and_load(tiny_spec(Architecture::Qwen2, WeightType::F32), name)), pool(2),
          transformer(*model, pool), cpu(transformer) {
        auto t = Tokenizer::create(model->tokenizer);
        MT_REQUIRE(t);
        tok = std::move(t.value());
        CudaExecutorOptions o; // the default F16 KV cache: every test switches
        o.use_graphs = graphs;
        o.max_tokens = 64;
        o.max_seqs = 8;
        auto g = CudaExecutor::create(plugin, *model, o);
        MT_REQUIRE_MSG(g, "%s", g ? "" : g.message().c_str());
        gpu = std::move(g.value());
        vocab = cpu.vocab_size();
    }
    // Both executors to type t (fp8: scales calibrated on the CPU, the same for both).
    KvScales set(KvDtype t) {
        KvScales s;
        if (kv_dtype_is_fp8(t)) {
            auto c = calibrate_kv_scales(cpu, calibration_tokens(vocab), t);
            MT_REQUIRE_MSG(c, "%s", c ? "" : c.message().c_str());
            s = *c;
        }
        MT_REQUIRE(cpu.set_kv_dtype(t, s));
        Status st = gpu->set_kv_dtype(t, s);
        MT_REQUIRE_MSG(st, "%s", st ? "" : st.message().c_str());
        MT_CHECK(gpu->kv_dtype() == t);
        return s;
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

MT_TEST(logits_per_kv_type_with_block_copies) {
    Pair p("kv_logits");
    const int32_t vocab = p.vocab;
    std::vector<float> lc(2 * static_cast<size_t>(vocab)), lg(lc.size());
    for (KvDtype t : kAllKvDtypes) {
        MT_CHECK(p.gpu->supports_kv_dtype(t));
        p.set(t);
        MT_REQUIRE(p.cpu.resize_kv(8, 16, {}));
        MT_REQUIRE(p.gpu->resize_kv(8, 16, {}));
        const double tol = tolerance(t);
        double worst = 0;
        for (const Step& s : kSteps) {
            ForwardBatch b = make_batch(s, vocab);
            MT_REQUIRE(p.cpu.forward(b, lc.data()));
            std::fill(lg.begin(), lg.end(), NAN);
            Status st = p.gpu->forward(b, lg.data());
            MT_REQUIRE_MSG(st, "%s: %s", kv_dtype_name(t), st ? "" : st.message().c_str());
            for (int r = 0; r < 2; ++r)
                worst =
                    std::max(worst, rel_err(lg.data() + r * vocab, lc.data() + r * vocab, vocab));
        }
        // Copy-on-write and a re-plan keeping blocks: A's blocks 0..2 to 5..7, B's block 4 to 1.
        for (ModelExecutor* e :
             {static_cast<ModelExecutor*>(&p.cpu), static_cast<ModelExecutor*>(p.gpu.get())}) {
            e->copy_block(4, 3);
            const BlockCopy keep[] = {{0, 5}, {1, 6}, {2, 7}, {3, 1}};
            MT_REQUIRE(e->resize_kv(12, 16, keep));
        }
        ForwardBatch b;
        const int32_t a_tok[] = {9}, b_tok[] = {10};
        const int32_t a_blocks[] = {5, 6, 7, 8}, b_blocks[] = {1};
        b.add_sequence(a_tok, 41, a_blocks, 16, ForwardBatch::Logits::Last);
        b.add_sequence(b_tok, 11, b_blocks, 16, ForwardBatch::Logits::Last);
        MT_REQUIRE(b.validate(16, 12));
        MT_REQUIRE(p.cpu.forward(b, lc.data()));
        MT_REQUIRE(p.gpu->forward(b, lg.data()));
        for (int r = 0; r < 2; ++r)
            worst = std::max(worst, rel_err(lg.data() + r * vocab, lc.data() + r * vocab, vocab));
        std::printf("kv %s: largest logits rel err CUDA vs CPU %.3g (bound %.3g)\n",
                    kv_dtype_name(t), worst, tol);
        MT_CHECK_MSG(worst <= tol, "kv %s: rel err %.3g > %.3g", kv_dtype_name(t), worst, tol);
    }
    int64_t graph_steps = 0, eager_steps = 0;
    p.gpu->graph_stats(graph_steps, eager_steps);
    MT_CHECK_MSG(graph_steps >= 6, "graph steps %lld", static_cast<long long>(graph_steps));
}

MT_TEST(kv_absmax_matches_cpu_and_keeps_the_pool) {
    Pair p("kv_absmax");
    const auto tokens = calibration_tokens(p.vocab);
    auto want = p.cpu.kv_absmax(tokens);
    MT_REQUIRE(want);
    p.set(KvDtype::Int8);
    MT_REQUIRE(p.cpu.resize_kv(8, 16, {}));
    MT_REQUIRE(p.gpu->resize_kv(8, 16, {}));
    std::vector<float> lc(2 * static_cast<size_t>(p.vocab)), lg(lc.size()), lg2(lc.size());
    MT_REQUIRE(p.gpu->forward(make_batch(kSteps[0], p.vocab), lg.data()));
    auto got = p.gpu->kv_absmax(tokens); // between steps, as the calibration runs
    MT_REQUIRE_MSG(got, "%s", got ? "" : got.message().c_str());
    const size_t layers = static_cast<size_t>(p.cpu.config().num_layers);
    MT_REQUIRE(got->k.size() == layers && got->v.size() == layers);
    for (size_t l = 0; l < layers; ++l) {
        MT_CHECK_MSG(std::fabs(got->k[l] - want->k[l]) <= 1e-3 * want->k[l] && want->k[l] > 0,
                     "layer %zu |K| max %g vs CPU %g", l, got->k[l], want->k[l]);
        MT_CHECK_MSG(std::fabs(got->v[l] - want->v[l]) <= 1e-3 * want->v[l] && want->v[l] > 0,
                     "layer %zu |V| max %g vs CPU %g", l, got->v[l], want->v[l]);
    }
    // The int8 pool (and its type) came back intact: the next step continues as without it.
    MT_CHECK(p.gpu->kv_dtype() == KvDtype::Int8 && p.gpu->num_blocks() == 8);
    MT_REQUIRE(p.cpu.forward(make_batch(kSteps[0], p.vocab), lc.data()));
    MT_REQUIRE(p.cpu.forward(make_batch(kSteps[1], p.vocab), lc.data()));
    MT_REQUIRE(p.gpu->forward(make_batch(kSteps[1], p.vocab), lg2.data()));
    for (int r = 0; r < 2; ++r)
        MT_CHECK(rel_err(lg2.data() + r * p.vocab, lc.data() + r * p.vocab, p.vocab) <= 2e-2);
    MT_CHECK(!p.gpu->kv_absmax({}));
    const int32_t bad[] = {p.vocab};
    MT_CHECK(!p.gpu->kv_absmax(bad));
}

MT_TEST(failed_switch_keeps_the_old_type_and_pool) {
    // The engine's recovery when the pool of the new type cannot be allocated: it switches the
    // executor back and keeps the old pool size without another resize.
    Pair p("kv_fail");
    p.set(KvDtype::F16);
    MT_REQUIRE(p.cpu.resize_kv(8, 16, {}));
    MT_REQUIRE(p.gpu->resize_kv(8, 16, {}));
    std::vector<float> lc(2 * static_cast<size_t>(p.vocab)), lg(lc.size());
    MT_REQUIRE(p.gpu->forward(make_batch(kSteps[0], p.vocab), lg.data()));
    MT_REQUIRE(p.gpu->set_kv_dtype(KvDtype::Int8, {}));
    const Status st = p.gpu->resize_kv(1 << 26, 16, {}); // hundreds of GB
    MT_CHECK(!st);
    MT_REQUIRE(p.gpu->set_kv_dtype(KvDtype::F16, {}));
    MT_CHECK(p.gpu->num_blocks() == 8);
    // The old pool (F16, 8 blocks) serves the recomputed requests.
    for (const Step& s : kSteps) {
        ForwardBatch b = make_batch(s, p.vocab);
        MT_REQUIRE(p.cpu.forward(b, lc.data()));
        const Status fs = p.gpu->forward(b, lg.data());
        MT_REQUIRE_MSG(fs, "%s", fs ? "" : fs.message().c_str());
        for (int r = 0; r < 2; ++r)
            MT_CHECK(rel_err(lg.data() + r * p.vocab, lc.data() + r * p.vocab, p.vocab) <= 2e-3);
    }
}

namespace {

using Tokens = std::map<RequestId, std::vector<int32_t>>;

// A small concurrent workload (shared prefixes, chunked prefill, a pool small enough to
// preempt); switch_to: Engine::set_kv_dtype after 6 steps.
Tokens run_engine(ModelExecutor& exec, const Tokenizer& tok, int32_t vocab,
                  std::optional<std::pair<KvDtype, KvScales>> switch_to, std::string& error) {
    EngineConfig c;
    c.block_size = 16;
    c.max_num_seqs = 4;
    c.max_num_batched_tokens = 48;
    c.memory.num_blocks = 10;
    Tokens out;
    auto engine = Engine::create(exec, tok, c);
    if (!engine) {
        error = engine.message();
        return out;
    }
    std::vector<int32_t> shared;
    for (int i = 0; i < 33; ++i)
        shared.push_back((13 * i + 1) % vocab);
    for (int r = 0; r < 4; ++r) {
        std::vector<int32_t> prompt = r % 2 == 0 ? shared : std::vector<int32_t>{};
        for (int i = 0; i < 9 + 5 * r; ++i)
            prompt.push_back((31 * r + 17 * i + 5) % vocab);
        SamplingParams sp;
        sp.temperature = 0;
        sp.max_tokens = 10;
        sp.ignore_eos = true;
        if (auto id = (*engine)->add_request(prompt, sp); !id) {
            error = id.message();
            return out;
        }
    }
    StepOutputs so;
    for (int step = 0; (*engine)->has_unfinished() && step < 5000; ++step) {
        if (switch_to && step == 6)
            if (Status st = (*engine)->set_kv_dtype(switch_to->first, switch_to->second); !st) {
                error = st.message();
                return out;
            }
        (*engine)->step(so);
        for (const RequestOutput& o : so.outputs)
            out[o.id].insert(out[o.id].end(), o.new_token_ids.begin(), o.new_token_ids.end());
        if (!(*engine)->last_error().empty()) {
            error = (*engine)->last_error();
            return out;
        }
    }
    return out;
}

int differing(const Tokens& a, const Tokens& b) {
    int n = 0;
    for (const auto& [id, toks] : a) {
        auto it = b.find(id);
        n += it == b.end() || it->second != toks ? 1 : 0;
    }
    return n + static_cast<int>(b.size() > a.size() ? b.size() - a.size() : 0);
}

} // namespace

MT_TEST(engine_greedy_per_kv_type_and_live_switch) {
    Pair p("kv_engine");
    for (KvDtype t : kAllKvDtypes) {
        if (t == KvDtype::F32)
            continue; // tst_cuda_engine_greedy
        p.set(t);
        std::string ec, eg;
        const Tokens a = run_engine(p.cpu, *p.tok, p.vocab, std::nullopt, ec);
        const Tokens b = run_engine(*p.gpu, *p.tok, p.vocab, std::nullopt, eg);
        MT_REQUIRE_MSG(ec.empty() && eg.empty(), "%s: cpu '%s' cuda '%s'", kv_dtype_name(t),
                       ec.c_str(), eg.c_str());
        MT_CHECK(a.size() == 4);
        for (const auto& [id, toks] : b)
            MT_CHECK(toks.size() == 10);
        const int diff = differing(a, b);
        std::printf("kv %s: %d of 4 requests differ from the CPU backend\n", kv_dtype_name(t),
                    diff);
        MT_CHECK_MSG(diff == 0, "kv %s: %d of 4 requests differ", kv_dtype_name(t), diff);
    }
    // Live switch int8 -> fp8_e4m3 (calibrated) while requests run: every request finishes with
    // its full output, the same as the CPU backend's through the same switch.
    p.set(KvDtype::Int8);
    auto scales = calibrate_kv_scales(p.cpu, calibration_tokens(p.vocab), KvDtype::Fp8E4M3);
    MT_REQUIRE(scales);
    std::string ec, eg;
    const auto sw = std::make_optional(std::make_pair(KvDtype::Fp8E4M3, *scales));
    const Tokens a = run_engine(p.cpu, *p.tok, p.vocab, sw, ec);
    const Tokens b = run_engine(*p.gpu, *p.tok, p.vocab, sw, eg);
    MT_REQUIRE_MSG(ec.empty() && eg.empty(), "switch: cpu '%s' cuda '%s'", ec.c_str(), eg.c_str());
    MT_CHECK(p.gpu->kv_dtype() == KvDtype::Fp8E4M3);
    MT_REQUIRE(b.size() == 4);
    for (const auto& [id, toks] : b)
        MT_CHECK(toks.size() == 10);
    const int diff = differing(a, b);
    std::printf("switch int8 -> fp8_e4m3 mid-run: %d of 4 requests differ from the CPU\n", diff);
    MT_CHECK_MSG(diff == 0, "switch: %d of 4 requests differ", diff);
}

MINI_TEST_MAIN()
