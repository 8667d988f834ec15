#include "app/cli/cli_engine.h"

#include "app/cli/cli_model.h"

#include <cstdio>

#include <algorithm>

namespace llmwb::cli {

const char* kEngineOptionsHelp =
    "  --block-size N            KV block size: 8, 16 or 32 (default 16)\n"
    "  --max-num-seqs N          requests running at once (default 64)\n"
    "  --max-num-batched-tokens N  token budget of one step (default 512)\n"
    "  --kv-budget-mb MB         KV cache size; default: gpu-memory-utilization x RAM\n"
    "                            - weights - workspace\n"
    "  --gpu-memory-utilization F  fraction of device memory (RAM on the CPU) the engine may\n"
    "                            use (default 0.9)\n"
    "  --no-prefix-caching       disable prefix caching\n"
    "  --no-device-greedy        CUDA: copy logits back for greedy requests too (default: argmax\n"
    "                            on the device when every request of a step is greedy)\n";

const std::set<std::string>& engine_value_options() {
    static const std::set<std::string> s = {"block-size", "max-num-seqs", "max-num-batched-tokens",
                                            "kv-budget-mb", "gpu-memory-utilization"};
    return s;
}

const std::set<std::string>& engine_flag_options() {
    static const std::set<std::string> s = {"no-prefix-caching", "no-device-greedy"};
    return s;
}

Status engine_config_from_args(const CliArgs& a, EngineConfig& c) {
    auto bs = a.get_int("block-size", 8, 32);
    if (!bs)
        return bs.error();
    if (*bs) {
        if (**bs != 8 && **bs != 16 && **bs != 32)
            return make_error("--block-size must be 8, 16 or 32");
        c.block_size = static_cast<int32_t>(**bs);
    }
    auto seqs = a.get_int("max-num-seqs", 1, 1 << 16);
    if (!seqs)
        return seqs.error();
    if (*seqs)
        c.max_num_seqs = static_cast<int32_t>(**seqs);
    auto toks = a.get_int("max-num-batched-tokens", 1, 1 << 20);
    if (!toks)
        return toks.error();
    if (*toks)
        c.max_num_batched_tokens = static_cast<int32_t>(**toks);
    auto kv = a.get_double("kv-budget-mb", 0.001, 1 << 24);
    if (!kv)
        return kv.error();
    if (*kv)
        c.memory.kv_bytes = static_cast<int64_t>(**kv * 1024.0 * 1024.0);
    auto util = a.get_double("gpu-memory-utilization", 0.0001, 1.0);
    if (!util)
        return util.error();
    if (*util)
        c.memory.utilization = **util;
    if (a.has("no-prefix-caching"))
        c.enable_prefix_caching = false;
    if (a.has("no-device-greedy"))
        c.device_greedy = false;
    return ok_status();
}

void default_kv_to_need(const CliArgs& args, EngineConfig& config, int64_t need_tokens,
                        int64_t num_requests) {
    if (args.has("kv-budget-mb") || args.has("gpu-memory-utilization"))
        return;
    const int64_t bs = config.block_size;
    const int64_t blocks = (need_tokens + bs - 1) / bs + num_requests + 1;
    config.num_blocks = static_cast<int32_t>(std::min<int64_t>(blocks, 1 << 24));
}

Result<CliArgs> parse_engine_command_args(const std::vector<std::string>& argv,
                                          std::set<std::string> values,
                                          std::set<std::string> flags) {
    values.insert(engine_value_options().begin(), engine_value_options().end());
    flags.insert(engine_flag_options().begin(), engine_flag_options().end());
    values.insert(device_value_options().begin(), device_value_options().end());
    flags.insert(device_flag_options().begin(), device_flag_options().end());
    return CliArgs::parse(argv, values, flags);
}

void print_engine_command_help(const char* help_text) {
    std::fputs(help_text, stdout);
    std::fputs(kEngineOptionsHelp, stdout);
    std::fputs(kDeviceOptionsHelp, stdout);
}

} // namespace llmwb::cli
