// An editable image of a GGUF file for the broken-file tests: parsed from a valid file,
// changed field by field, serialized again (with optional raw overrides of the counts).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/gguf_file.h"

struct GgufImage {
    struct Kv {
        std::string key;
        uint32_t type = 0;
        std::string encoded; // value bytes after the type id
    };
    struct Tensor {
        std::string name;
        std::vector<uint64_t> ne;
        uint32_t type = 0;
        uint64_t offset = 0;
    };
    uint32_t version = 3;
    std::optional<uint64_t> n_tensors_override, n_kv_override;
    std::vector<Kv> kvs;
    std::vector<Tensor> tensors;
    std::string data; // the data section
    uint32_t alignment = 32;

    static GgufImage from(const llmwb::GgufFile& f, std::span<const uint8_t> bytes);
    std::string serialize() const;

    Kv* kv(const std::string& key);
    Tensor* tensor(const std::string& name);
    void remove_kv(const std::string& key);
    void remove_tensor(const std::string& name);

    static std::string u32(uint32_t v);
    static std::string u64(uint64_t v);
    static std::string str(const std::string& s); // u64 length + bytes
};
