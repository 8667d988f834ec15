// A read-only memory mapping of a whole file. Tensor views point into it; keep it alive
// (LoadedModel::mappings) as long as they are used.
//
// A file that shrinks while it is mapped (truncated, rewritten in place) would kill the process
// with SIGBUS on the next read past its new end. Every mapping is registered in a fixed,
// lock-free table read by one process-wide SIGBUS handler (installed once, by the first open):
// a fault inside a registered mapping maps anonymous zero pages over the rest of it (mmap with
// MAP_FIXED is an async-signal-safe syscall), marks the mapping changed() and returns, so the
// computation in progress finishes with garbage instead of dying; the executor checks
// changed() after each forward and fails the requests (CpuExecutor::check_weights). A fault
// outside every registered mapping goes to the handler installed before ours, or takes the
// default action (the process dies with SIGBUS as before).
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

    // True once a read faulted past the file's end (the file shrank under the mapping; the
    // bytes read from there on were zeros). Unguarded mappings (the table was full) never say so.
    bool changed() const;
    // "model file changed or was truncated while in use: PATH" when changed(), else Ok.
    Status check_unchanged() const;

    // The table's capacity: mappings beyond it work but are not guarded.
    static constexpr int kMaxGuarded = 256;

  private:
    MappedFile() = default;
    std::string path_;
    const uint8_t* data_ = nullptr;
    int64_t size_ = 0;
    bool mapped_ = false;
    int guard_slot_ = -1; // index in the SIGBUS table, -1: not guarded
};

} // namespace llmwb
