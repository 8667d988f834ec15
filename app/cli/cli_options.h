// The typed options shared by the llmwb commands, each parsed once from CliArgs:
//   DeviceOptions   --device auto|cpu|cuda  --kv-cache-dtype T (alias --kv-dtype)  --dtype D
//                   --calculate-kv-scales  --no-cuda-graphs  --threads N
//   EngineOptions   --block-size 8|16|32  --max-num-seqs N  --max-num-batched-tokens N
//                   --kv-budget-mb MB | --gpu-memory-utilization F  --no-prefix-caching
//                   --no-device-greedy
//   sampling        --temperature ... --logprobs (the SamplingParams field table), --stop S
//                   (repeatable), --ignore-eos
// A command collects the names it accepts in an OptionNames, parses with CliArgs once, then reads
// each group into its struct.
#pragma once

#include <set>
#include <string>

#include "app/cli/cli_args.h"
#include "engine/backend/cuda_executor.h"
#include "engine/backend/device_select.h"
#include "engine/runtime/sampling_params.h"
#include "engine/serving/engine.h"

namespace llmwb::cli {

// The value options and flags a command accepts (for CliArgs::parse).
struct OptionNames {
    std::set<std::string> values, flags;
    OptionNames& add(const OptionNames& other);
    Result<CliArgs> parse(const std::vector<std::string>& argv) const;
};

// Measurement-only int8 KV variants (hidden option --kv-int8-experiment, see
// kv_int8_experiment.h): simulated on an f32 pool.
enum class KvInt8Experiment { Off, TokenHead, Token, KeyChannel };

struct DeviceOptions {
    DevicePreference device = DevicePreference::Auto;
    // --kv-cache-dtype (vLLM's name; --kv-dtype is an alias). nullopt: auto, the backend's
    // default (f16 on the CPU, kCpuAutoKvDtype, and on CUDA).
    std::optional<KvDtype> kv_dtype;
    bool calculate_kv_scales = false; // fp8: calibrate the per-layer scales (else 1.0, as vLLM)
    KvInt8Experiment int8_experiment = KvInt8Experiment::Off;
    bool cuda_graphs = true;
    int threads = 0;                              // CPU threads; 0: all cores
    WeightDtype weight_dtype = WeightDtype::Auto; // --dtype
};
const OptionNames& device_option_names();
extern const char* kDeviceOptionsHelp;
Result<DeviceOptions> parse_device_options(const CliArgs& args);
// "auto" or the KvDtype's name (for JSON and reports: what was asked for).
std::string kv_dtype_option_name(const std::optional<KvDtype>& t);

struct EngineOptions {
    EngineConfig config;
    bool memory_given = false; // --kv-budget-mb or --gpu-memory-utilization

    // Without a memory option: need-based sizing on top of the utilization plan — no more
    // blocks than `seqs` sequences of `tokens` token slots in all can use — instead of 0.9 x RAM.
    void size_to_need(int64_t tokens, int64_t seqs);
};
const OptionNames& engine_option_names();
extern const char* kEngineOptionsHelp;
Result<EngineOptions> parse_engine_options(const CliArgs& args);

// Speculative decoding: --speculative-method ngram|off, --num-speculative-tokens K (0..16),
// --prompt-lookup-min N, --prompt-lookup-max N (part of the engine options).
const OptionNames& speculative_option_names();
extern const char* kSpeculativeOptionsHelp;
Result<SpeculativeConfig> parse_speculative_options(const CliArgs& args);

// The device and engine options of a serving command into o.device and o.engine.
template <class Options> Status parse_serving_options(const CliArgs& args, Options& o) {
    auto device = parse_device_options(args);
    if (!device)
        return device.error();
    o.device = *device;
    auto engine = parse_engine_options(args);
    if (!engine)
        return engine.error();
    o.engine = *engine;
    return ok_status();
}

// Every SamplingParams field as a flag: --temperature T ... ; --stop S repeatable; --ignore-eos.
const OptionNames& sampling_option_names();
// "  --temperature T  ..." lines from the field table.
std::string sampling_options_help();
// `defaults` overridden by the flags given. Errors: "--top-p: top_p must be in (0, 1], got 2".
Result<SamplingParams> parse_sampling_options(const CliArgs& args, SamplingParams defaults);

} // namespace llmwb::cli
