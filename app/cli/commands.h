// The llmwb subcommands. Each takes its arguments (after the subcommand name) and returns the
// process exit code; errors are printed to stderr as one line "llmwb <cmd>: <message>".
#pragma once

#include <string>
#include <vector>

namespace llmwb::cli {

using Args = std::vector<std::string>;

int cmd_info(const Args& args);
int cmd_tokenize(const Args& args);
int cmd_detokenize(const Args& args);
int cmd_render_chat(const Args& args);
int cmd_generate(const Args& args);
int cmd_perplexity(const Args& args);
int cmd_kld(const Args& args); // KL divergence of a model from a base model
int cmd_make_model(const Args& args);
int cmd_quantize(const Args& args); // float model -> quantized GGUF
int cmd_bench(const Args& args);
int cmd_report(const Args& args); // show | compare benchmark reports
int cmd_serve(const Args& args);  // the OpenAI-compatible server
int cmd_think(const Args& args);  // accuracy against tokens on generated reasoning tasks
int cmd_models(const Args& args); // models found on this machine (headers only), fit at a context
int cmd_fit(const Args& args);    // whether a model fits this machine, and what to set

// generate --prompts FILE.jsonl: many prompts at once through the serving engine.
bool generate_routes_to_batch(const Args& args);
int cmd_generate_batch(const Args& args);

// Prints "llmwb <command>: <message>" to stderr and returns 1.
int fail(const std::string& command, const std::string& message);

} // namespace llmwb::cli
