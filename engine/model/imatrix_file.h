// Importance matrices: per weight matrix, the sum over calibration tokens of x^2 for every input
// column, and the number of tokens. Read from and written to the GGUF imatrix format of recent
// llama.cpp (general.type "imatrix"; per weight two F32 tensors "<weight>.in_sum2" [cols, 1] and
// "<weight>.counts" [1, 1]; imatrix.datasets / chunk_count / chunk_size), and read from the
// legacy binary .dat format. Files are hostile input: bounded reads, finite non-negative
// values, one entry per name.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/util/result.h"

namespace llmwb {

struct ImportanceEntry {
    std::vector<float> sum2; // per input column: sum of x^2 over the tokens seen
    float count = 0;         // tokens seen (0: none; importance is then uniform)
};

struct ImportanceMatrix {
    std::map<std::string, ImportanceEntry> entries; // by GGUF weight name
    std::vector<std::string> datasets;
    int chunk_count = 0;
    int chunk_size = 0;

    // importance[c] = sum2[c] / count (all 1 when count is 0), the weights the quantizers'
    // scale searches use. Empty when there is no entry for `name`.
    std::vector<float> importance(const std::string& name) const;
};

// Reads a GGUF imatrix file, or a legacy .dat file (detected by the missing GGUF magic).
Result<ImportanceMatrix> read_imatrix(const std::string& path);
// Writes the GGUF imatrix format (written to `path` directly; callers choose the name).
Status write_imatrix(const ImportanceMatrix& m, const std::string& path);

} // namespace llmwb
