// `llmwb quantize` and the app's Model > Quantize...: converts a float model (a GGUF file in
// F32/F16/BF16, or a Hugging Face safetensors folder) into a GGUF file of a single weight type
// or of a named preset mix, following the tensor-type recipes of one named version of the common
// GGUF quantizer (see quantize_recipe_version()). Runs on the calling thread (the app calls it
// from a worker); reports progress and honours cancellation between and within tensors. The
// output is written under a temporary name next to OUT and renamed into place only when
// complete, so a cancelled or failed run leaves no OUT behind and never touches IN.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/util/result.h"
#include "kernels/cpu/dtype.h"

namespace llmwb {

// A target: a single type ("Q8_0", "Q4_K", "IQ4_NL", "F16", ...) or a preset mix ("Q4_K_M",
// "Q5_K_S", "Q3_K_M", "Q2_K", "IQ4_XS", ...). Names are matched case-insensitively.
struct QuantTarget {
    std::string name;        // canonical spelling, e.g. "Q4_K_M"
    bool preset = false;     // a mix (several types chosen per tensor) rather than one type
    DType base = DType::F32; // the type most tensors get
    std::string description; // one line for menus and --help, e.g. "4.8 bpw, Q4_K + Q6_K"
    uint32_t file_type = 0;  // llama.cpp's LLAMA_FTYPE value, written as general.file_type
    bool pure = false;       // a single type: every weight matrix gets `base` (then fallbacks)
};

// Every target `quantize` accepts, in the order menus show them.
const std::vector<QuantTarget>& quantize_targets();
// The target of that name; an error naming it (and the accepted names, or "out of scope for now"
// for IQ1/IQ2/IQ3, TQ1_0/TQ2_0 and MXFP4) otherwise.
Result<QuantTarget> parse_quant_target(const std::string& name);
// The quantizer version whose recipes are followed, e.g. "llama.cpp b6xxx (2025-..)".
const char* quantize_recipe_version();

struct QuantizeOptions {
    std::string input;        // GGUF file or Hugging Face folder
    std::string output;       // GGUF file; must differ from input
    std::string target;       // a name parse_quant_target accepts
    std::string imatrix_path; // optional: an importance matrix in the common GGUF imatrix format
    std::string calibration_path;   // optional: a text file to gather importances from
    int threads = 0;                // 0: the machine's default
    std::string imatrix_out_path;   // optional: write the gathered importances (GGUF imatrix)
    int calibration_max_tokens = 0; // 0: kDefaultCalibrationTokens
};

// Calibration reads at most this many tokens of the text (chunks of kCalibrationChunk).
inline constexpr int kDefaultCalibrationTokens = 8192;
inline constexpr int kCalibrationChunk = 512;

// Stage "calibrating": tensors_done / tensors_total count calibration tokens instead.
struct QuantizeProgress {
    int tensors_done = 0;
    int tensors_total = 0;
    int64_t bytes_done = 0; // of input weights read
    int64_t bytes_total = 0;
    double seconds = 0;
    std::string stage;          // "calibrating", "quantizing", "writing"
    std::string current_tensor; // GGUF name of the tensor being converted
};

struct QuantizedTensor {
    std::string name;
    DType type = DType::F32;
    DType wanted = DType::F32; // differs from type when the row length needed a fallback
    int64_t rows = 0, cols = 0;
};

struct QuantizeReport {
    std::vector<QuantizedTensor> tensors;
    int fallback_tensors = 0;
    int64_t bytes_in = 0, bytes_out = 0;
    double bits_per_weight = 0;     // over the quantized matrices
    double seconds = 0;             // all of it (calibration included)
    double calibration_seconds = 0; // of which running the model over the calibration text
    std::vector<std::string> notes; // fallbacks, importance source, anything the user should read
};

using QuantizeProgressFn = std::function<void(const QuantizeProgress&)>;

// Errors name what is wrong: an unknown target, OUT equal to IN, an input that is not a float
// model, a tensor whose row length no type can hold, a write failure; "cancelled" after cancel.
Result<QuantizeReport> quantize_model(const QuantizeOptions& options,
                                      const QuantizeProgressFn& progress = {},
                                      const std::atomic<bool>* cancel = nullptr);

} // namespace llmwb
