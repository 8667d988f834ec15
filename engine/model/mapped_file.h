// A read-only memory mapping of a whole file. Tensor views point into it; keep it alive
// (LoadedModel::mappings) as long as they are used.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "engine/util/result.h"

namespace llmwb {

class MappedFile {
  public:
    // Maps `path` read-only. Errors name the file and the reason (missing, a directory,
    // empty files map to an empty span).
    static Result<std::shared_ptr<MappedFile>> open(const std::string& path);

    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const std::string& path() const { return path_; }
    const uint8_t* data() const { return data_; }
    int64_t size() const { return size_; }
    std::span<const uint8_t> bytes() const { return {data_, static_cast<size_t>(size_)}; }

  private:
    MappedFile() = default;
    std::string path_;
    const uint8_t* data_ = nullptr;
    int64_t size_ = 0;
    bool mapped_ = false;
};

} // namespace llmwb
