#include "app/cli/command_table.h"

#include <array>
#include <cstring>

namespace llmwb::cli {

const char* kCliUsage =
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
    "the options of a command; 'llmwb --version' prints the version, 'llmwb --help-man' this\n"
    "manual as a man page.\n";

namespace {

const std::array kCliCommandTable = {
    CliCommand{"info", cmd_info},
    CliCommand{"tokenize", cmd_tokenize},
    CliCommand{"detokenize", cmd_detokenize},
    CliCommand{"render-chat", cmd_render_chat},
    CliCommand{"generate", cmd_generate},
    CliCommand{"generate", cmd_generate, "--prompts FILE.jsonl"},
    CliCommand{"perplexity", cmd_perplexity},
    CliCommand{"kld", cmd_kld},
    CliCommand{"bench", cmd_bench},
    CliCommand{"report", cmd_report},
    CliCommand{"serve", cmd_serve},
    CliCommand{"think", cmd_think},
    CliCommand{"models", cmd_models},
    CliCommand{"fit", cmd_fit},
    CliCommand{"make-model", cmd_make_model},
    CliCommand{"quantize", cmd_quantize},
};

} // namespace

std::span<const CliCommand> cli_commands() {
    return kCliCommandTable;
}

const CliCommand* find_cli_command(const std::string& name) {
    for (const CliCommand& c : kCliCommandTable)
        if (name == c.name && !*c.help_variant)
            return &c;
    return nullptr;
}

} // namespace llmwb::cli
