// llmwb — the headless CLI over the LLM Workbench engine.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "app/cli/commands.h"

namespace {

const char* kUsage =
    "usage: llmwb <command> [options]\n"
    "\n"
    "commands:\n"
    "  info         architecture, parameters, tensor types, context, KV bytes per token, memory\n"
    "  tokenize     text -> token ids              (--model M (--text T | --file F) [--json])\n"
    "  detokenize   token ids -> text              (--model M --ids 1,2,3)\n"
    "  render-chat  chat template -> prompt text   (--model M --messages FILE.json\n"
    "                                               [--add-generation-prompt] [--enable-thinking "
    "B])\n"
    "  generate     generate text                  (--model M (--prompt T | --ids L | --chat F) "
    "...)\n"
    "               many prompts at once           (--model M --prompts FILE.jsonl)\n"
    "  perplexity   log-probabilities of a text    (--model M (--text T | --file F | --ids L))\n"
    "  kld          KL divergence, top-1 agreement, PPL ratio of M vs a base model\n"
    "               (--base B --model M (--file TEXT | --ids L | --text T))\n"
    "  bench        serving benchmark: throughput, TTFT/TPOT/ITL/E2EL, KV usage, prefix cache\n"
    "               (--report OUT.zip: the report to send or to compare)\n"
    "  report       benchmark reports: show REPORT | compare REPORT [REPORT ...]\n"
    "  serve        an OpenAI-compatible server    (--model M [--host H] [--port N] [--api-key "
    "K])\n"
    "  think        accuracy against tokens spent  (--tasks arith:2 --ladder n=1,2,4,8)\n"
    "  models       models found on this machine (LM Studio, GPT4All, Ollama, Hugging Face cache)\n"
    "  fit          whether a model fits this machine (MODEL [--context N] [--seqs M])\n"
    "  make-model   write a small deterministic model with random weights (GGUF or safetensors)\n"
    "  quantize     float model -> quantized GGUF  (IN OUT --type Q4_K_M|Q8_0|... [--imatrix F |\n"
    "                                               --calibration TEXT])\n"
    "\n"
    "M is a .gguf file or a Hugging Face folder; without --model the demo model (a bigram model "
    "of\n"
    "the project's own sentences, not a trained model) is used. Run 'llmwb <command> --help' for\n"
    "the options of a command.\n";

} // namespace

int main(int argc, char** argv) {
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
        !std::strcmp(argv[1], "help")) {
        std::fputs(kUsage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    std::string command = argv[1];
    std::vector<std::string> args(argv + 2, argv + argc);
    using namespace llmwb::cli;
    if (command == "info")
        return cmd_info(args);
    if (command == "tokenize")
        return cmd_tokenize(args);
    if (command == "detokenize")
        return cmd_detokenize(args);
    if (command == "render-chat")
        return cmd_render_chat(args);
    if (command == "generate")
        return cmd_generate(args);
    if (command == "perplexity")
        return cmd_perplexity(args);
    if (command == "kld")
        return cmd_kld(args);
    if (command == "make-model")
        return cmd_make_model(args);
    if (command == "quantize")
        return cmd_quantize(args);
    if (command == "bench")
        return cmd_bench(args);
    if (command == "report")
        return cmd_report(args);
    if (command == "serve")
        return cmd_serve(args);
    if (command == "think")
        return cmd_think(args);
    if (command == "models")
        return cmd_models(args);
    if (command == "fit")
        return cmd_fit(args);
    std::fprintf(stderr, "llmwb: unknown command '%s'\n\n%s", command.c_str(), kUsage);
    return 2;
}
