// Serving-engine options shared by `llmwb generate --prompts` and `llmwb bench`:
//   --block-size 8|16|32  --max-num-seqs N  --max-num-batched-tokens N
//   --kv-budget-mb MB | --gpu-memory-utilization F  --no-prefix-caching
#pragma once

#include <set>
#include <string>

#include "app/cli/cli_args.h"
#include "engine/serving/engine.h"

namespace llmwb::cli {

// Option names (values and flags) the engine options use, for CliArgs::parse.
const std::set<std::string>& engine_value_options();
const std::set<std::string>& engine_flag_options();

// Reads the options into `config` (its fields are the defaults).
Status engine_config_from_args(const CliArgs& args, EngineConfig& config);

// Without --kv-budget-mb / --gpu-memory-utilization: a pool just large enough for
// `need_tokens` token slots over `num_requests` requests (each may waste part of a block),
// instead of 0.9 x RAM.
void default_kv_to_need(const CliArgs& args, EngineConfig& config, int64_t need_tokens,
                        int64_t num_requests);

extern const char* kEngineOptionsHelp;

// Parses a serving command's arguments: its own value options and flags plus the engine options
// above. `--help` is handled by the caller (help_text is printed with kEngineOptionsHelp).
Result<CliArgs> parse_engine_command_args(const std::vector<std::string>& argv,
                                          std::set<std::string> values,
                                          std::set<std::string> flags);
void print_engine_command_help(const char* help_text);

} // namespace llmwb::cli
