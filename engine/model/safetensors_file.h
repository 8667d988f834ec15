// safetensors files (8-byte header length, JSON header, data section) and Hugging Face
// folders of them (model.safetensors or model.safetensors.index.json + shards). Parsing is
// bounded; the first defect is an Error "<file>: <reason>". Tensor data are views into the
// parsed bytes / mappings.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/model/mapped_file.h"
#include "engine/util/result.h"
#include "kernels/cpu/dtype.h"

namespace llmwb {

struct SafetensorsTensor {
    std::string name;
    DType type = DType::F32;
    std::vector<int64_t> shape;
    int64_t n_elements = 0;
    int64_t bytes = 0;
    const uint8_t* data = nullptr;
    std::string file; // file it lives in (for messages)

    // Row-major 2-D view: cols = last dimension, rows = product of the others.
    int64_t cols() const { return shape.empty() ? 1 : shape.back(); }
    int64_t rows() const { return shape.empty() ? 1 : n_elements / shape.back(); }
};

class SafetensorsFile {
  public:
    static Result<SafetensorsFile> parse(std::span<const uint8_t> bytes, const std::string& name);
    static Result<SafetensorsFile> open(const std::string& path);

    std::vector<SafetensorsTensor> tensors; // in header order
    std::shared_ptr<MappedFile> mapping;    // set by open()
    const SafetensorsTensor* find(std::string_view name) const;

  private:
    friend class SafetensorsSet;
    std::unordered_map<std::string, size_t> index_;
};

// All tensors of a Hugging Face folder: model.safetensors, or the shards named by
// model.safetensors.index.json's weight_map (every listed tensor must be in its shard).
class SafetensorsSet {
  public:
    static Result<SafetensorsSet> open_folder(const std::string& dir);

    const SafetensorsTensor* find(std::string_view name) const;
    std::vector<const SafetensorsTensor*> all() const;
    std::vector<std::shared_ptr<MappedFile>> mappings() const;

  private:
    std::vector<SafetensorsFile> files_;
    std::unordered_map<std::string, std::pair<size_t, size_t>> index_; // name -> (file, tensor)
};

} // namespace llmwb
