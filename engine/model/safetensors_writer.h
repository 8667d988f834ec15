// Writes a safetensors file in one pass: the JSON header (offsets computed from the declared
// shapes, padded so the data section starts 32-byte aligned), then the data in order.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "engine/util/result.h"
#include "kernels/cpu/dtype.h"

namespace llmwb {

class SafetensorsWriter {
  public:
    void add_tensor(const std::string& name, DType type, std::vector<int64_t> shape);
    Status begin(const std::string& path, const std::map<std::string, std::string>& metadata);
    Status append(const void* data, size_t bytes);
    Status finish();

  private:
    struct Tensor {
        std::string name;
        DType type;
        std::vector<int64_t> shape;
        uint64_t bytes;
    };
    std::vector<Tensor> tensors_;
    std::ofstream out_;
    std::string path_;
    uint64_t total_ = 0, written_ = 0;
};

} // namespace llmwb
