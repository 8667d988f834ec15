// llmwb quantize IN OUT --type T: a float model (GGUF or Hugging Face folder) to a quantized
// GGUF file (engine/model/quantize.h). Ctrl+C sets the cancel flag: the run stops between row
// chunks and leaves neither OUT nor its temporary file.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "app/cli/cli_args.h"
#include "app/cli/cli_output.h"
#include "app/cli/commands.h"
#include "app/cli/progress_line.h"
#include "engine/model/quantize.h"

namespace llmwb::cli {

namespace {

std::atomic<bool> g_cancel{false};

extern "C" void on_sigint(int) {
    g_cancel.store(true);
}

const std::set<std::string> kValueOptions = {"type",        "imatrix", "calibration",
                                             "imatrix-out", "threads", "calibration-tokens"};
const std::set<std::string> kFlags = {"json", "quiet", "help"};

void print_help() {
    std::string targets;
    for (const auto& t : quantize_targets()) {
        char line[160];
        std::snprintf(line, sizeof line, "    %-8s %s%s\n", t.name.c_str(), t.description.c_str(),
                      t.pure ? "" : "  [preset]");
        targets += line;
    }
    std::printf(
        "llmwb quantize IN OUT --type T [--imatrix FILE | --calibration TEXT]\n"
        "               [--calibration-tokens N] [--imatrix-out FILE] [--threads N]\n"
        "               [--json] [--quiet]\n"
        "  Converts a float model (a GGUF file in F32/F16/BF16, or a Hugging Face folder) into a\n"
        "  GGUF file OUT of type T. Every metadata key of a GGUF input is carried over\n"
        "  (tokenizer, chat template); general.file_type is set to the common quantizer's value.\n"
        "  Which tensor gets which type follows the recipes of\n"
        "    %s\n"
        "  with its fallbacks for row lengths a type cannot hold (listed at the end).\n"
        "  --imatrix FILE       importance matrix (GGUF imatrix format, or legacy .dat)\n"
        "  --calibration TEXT   gather importances by running IN over this text file (CPU; at\n"
        "                       most --calibration-tokens tokens, default %d, chunks of %d)\n"
        "  --imatrix-out FILE   with --calibration: also write the importances (GGUF imatrix)\n"
        "  Without either: round to nearest with the usual scale search.\n"
        "  OUT is written under a temporary name and renamed when complete; Ctrl+C or an error\n"
        "  leaves no OUT. OUT must differ from IN.\n"
        "  Out of scope for now: IQ1_*, IQ2_*, IQ3_*, TQ1_0, TQ2_0, MXFP4.\n"
        "  T:\n%s",
        quantize_recipe_version(), kDefaultCalibrationTokens, kCalibrationChunk, targets.c_str());
}

std::string mb_per_s(int64_t bytes, double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f MB/s", s > 0 ? double(bytes) / 1e6 / s : 0.0);
    return buf;
}

} // namespace

int cmd_quantize(const Args& argv) {
    const char* cmd = "quantize";
    // IN and OUT are the positional arguments; the rest are options.
    std::vector<std::string> positional, options;
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a.rfind("--", 0) == 0) {
            options.push_back(a);
            if (a.find('=') == std::string::npos && kValueOptions.count(a.substr(2)) &&
                i + 1 < argv.size()) {
                options.push_back(argv[++i]);
            }
        } else {
            positional.push_back(a);
        }
    }
    auto args = CliArgs::parse(options, kValueOptions, kFlags);
    if (!args)
        return fail(cmd, args.message());
    if (args->has("help")) {
        print_help();
        return 0;
    }
    if (positional.size() != 2)
        return fail(cmd, "give IN and OUT: llmwb quantize IN OUT --type T (see --help)");
    auto type = args->get("type");
    if (!type)
        return fail(cmd, "give --type T (see --help for the types and presets)");
    QuantizeOptions o;
    o.input = positional[0];
    o.output = positional[1];
    o.target = *type;
    o.imatrix_path = args->get_or("imatrix", "");
    o.calibration_path = args->get_or("calibration", "");
    o.imatrix_out_path = args->get_or("imatrix-out", "");
    if (!o.imatrix_out_path.empty() && o.calibration_path.empty())
        return fail(cmd, "--imatrix-out needs --calibration");
    auto threads = args->get_int("threads", 1, 1024);
    if (!threads)
        return fail(cmd, threads.message());
    o.threads = int(threads->value_or(0));
    auto ctoks = args->get_int("calibration-tokens", 2, 1 << 20);
    if (!ctoks)
        return fail(cmd, ctoks.message());
    o.calibration_max_tokens = int(ctoks->value_or(0));

    g_cancel.store(false);
    auto previous = std::signal(SIGINT, on_sigint);
    ProgressLine line(!args->has("quiet"));
    auto rep = quantize_model(
        o,
        [&](const QuantizeProgress& p) {
            char buf[256];
            if (p.stage == "calibrating") {
                std::snprintf(buf, sizeof buf, "[calibrating] %d/%d tokens, %.1f s", p.tensors_done,
                              p.tensors_total, p.seconds);
            } else {
                std::snprintf(buf, sizeof buf, "[%s] %d/%d tensors, %s, %.1f s  %s",
                              p.stage.c_str(), p.tensors_done, p.tensors_total,
                              mb_per_s(p.bytes_done, p.seconds).c_str(), p.seconds,
                              p.current_tensor.c_str());
            }
            line.update(buf);
        },
        &g_cancel);
    line.finish();
    std::signal(SIGINT, previous);
    if (!rep)
        return fail(cmd, rep.message());

    std::map<std::string, int> histogram;
    for (const auto& t : rep->tensors)
        ++histogram[dtype_name(t.type)];
    if (args->has("json")) {
        nlohmann::ordered_json j;
        j["input"] = o.input;
        j["output"] = o.output;
        j["type"] = parse_quant_target(o.target)->name;
        j["recipe_version"] = quantize_recipe_version();
        j["tensors"] = rep->tensors.size();
        j["types"] = histogram;
        j["fallback_tensors"] = rep->fallback_tensors;
        j["bytes_in"] = rep->bytes_in;
        j["bytes_out"] = rep->bytes_out;
        j["bits_per_weight"] = rep->bits_per_weight;
        j["seconds"] = rep->seconds;
        j["mb_per_s"] = rep->seconds > 0 ? double(rep->bytes_in) / 1e6 / rep->seconds : 0.0;
        j["notes"] = rep->notes;
        nlohmann::ordered_json ts = nlohmann::ordered_json::array();
        for (const auto& t : rep->tensors) {
            ts.push_back({{"name", t.name},
                          {"type", dtype_name(t.type)},
                          {"wanted", dtype_name(t.wanted)},
                          {"rows", t.rows},
                          {"cols", t.cols}});
        }
        j["tensor_types"] = ts;
        std::cout << dump_json(j) << "\n";
        return 0;
    }
    std::string hist;
    for (const auto& [name, n] : histogram)
        hist += (hist.empty() ? "" : ", ") + name + " x" + std::to_string(n);
    std::printf("wrote %s: %s, %zu tensors (%s)\n", o.output.c_str(),
                parse_quant_target(o.target)->name.c_str(), rep->tensors.size(), hist.c_str());
    std::printf("  %.2f bits per weight over the matrices; %.1f MB -> %.1f MB in %.2f s (%s)\n",
                rep->bits_per_weight, double(rep->bytes_in) / 1e6, double(rep->bytes_out) / 1e6,
                rep->seconds, mb_per_s(rep->bytes_in, rep->seconds).c_str());
    std::printf("  fallbacks: %d tensors\n", rep->fallback_tensors);
    for (const auto& n : rep->notes)
        std::printf("  %s\n", n.c_str());
    return 0;
}

} // namespace llmwb::cli
