// Writes a GGUF v3 file in one pass: metadata and tensor infos first, then the tensor data
// appended in the order the tensors were declared (each padded to the alignment).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "engine/util/result.h"
#include "kernels/cpu/dtype.h"

namespace llmwb {

class GgufWriter {
  public:
    void add_u32(const std::string& key, uint32_t v);
    void add_i32(const std::string& key, int32_t v);
    void add_f32(const std::string& key, float v);
    void add_bool(const std::string& key, bool v);
    void add_string(const std::string& key, const std::string& v);
    void add_string_array(const std::string& key, const std::vector<std::string>& v);
    void add_f32_array(const std::string& key, const std::vector<float>& v);
    void add_i32_array(const std::string& key, const std::vector<int32_t>& v);

    void add_u64(const std::string& key, uint64_t v);
    // A value copied from another GGUF file: its type id and its encoded bytes (after the type
    // id, as GgufValue::encoded holds them).
    void add_raw(const std::string& key, uint32_t type, const void* encoded, size_t bytes);

    // A tensor of rows x cols (a 1-D tensor of cols elements when one_dim).
    void add_tensor(const std::string& name, DType type, int64_t rows, int64_t cols,
                    bool one_dim = false);
    // A tensor of any rank: ne[0] is the row length (GGUF order); ne[0] must be a multiple of
    // the type's block.
    void add_tensor_dims(const std::string& name, DType type, const std::vector<uint64_t>& ne);

    Status begin(const std::string& path);         // header, metadata, tensor infos
    Status append(const void* data, size_t bytes); // data of the declared tensors, in order
    Status finish();                               // checks every tensor was written
    void abandon();                                // closes the file after an error (no checks)

    static constexpr uint32_t kAlignment = 32;

  private:
    struct Tensor {
        std::string name;
        DType type;
        std::vector<uint64_t> ne;
        uint64_t bytes;
        uint64_t offset;
    };
    void put_string(std::string& out, const std::string& s);
    template <class T> void put(std::string& out, T v);
    void begin_kv(const std::string& key, uint32_t type);
    Status pad(uint64_t to_multiple);

    std::string kv_;
    uint64_t n_kv_ = 0;
    std::vector<Tensor> tensors_;
    std::ofstream out_;
    std::string path_;
    size_t cur_ = 0;
    uint64_t cur_written_ = 0;
    uint64_t pos_ = 0;
};

} // namespace llmwb
