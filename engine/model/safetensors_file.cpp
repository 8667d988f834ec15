#include "engine/model/safetensors_file.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/model/byte_reader.h"
#include "engine/util/json_depth.h"

namespace llmwb {

namespace {

constexpr uint64_t kMaxHeaderBytes = uint64_t(100) << 20; // 100 MiB of JSON
constexpr size_t kMaxSafetensorsDims = 8;

std::optional<DType> dtype_from_safetensors(const std::string& s) {
    if (s == "F32")
        return DType::F32;
    if (s == "F16")
        return DType::F16;
    if (s == "BF16")
        return DType::BF16;
    return std::nullopt;
}

std::optional<int64_t> json_nonneg_int(const nlohmann::json& j) {
    if (j.is_number_unsigned()) {
        uint64_t v = j.get<uint64_t>();
        if (v > uint64_t(INT64_MAX))
            return std::nullopt;
        return int64_t(v);
    }
    if (j.is_number_integer()) {
        int64_t v = j.get<int64_t>();
        if (v < 0)
            return std::nullopt;
        return v;
    }
    return std::nullopt;
}

std::string one_line(std::string s) {
    for (char& c : s) {
        if (c == '\n' || c == '\r')
            c = ' ';
    }
    return s;
}

} // namespace

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
    auto it = index_.find(std::string(name));
    return it == index_.end() ? nullptr : &tensors[it->second];
}

Result<SafetensorsFile> SafetensorsFile::parse(std::span<const uint8_t> bytes,
                                               const std::string& name) {
    auto err = [&](const std::string& m) { return make_error(name + ": " + m); };
    ByteReader r(bytes);
    uint64_t header_len = r.read<uint64_t>("safetensors header length");
    if (!r.ok())
        return err(r.error());
    if (header_len > r.remaining()) {
        return err("header length " + std::to_string(header_len) + " is beyond the file (" +
                   std::to_string(r.remaining()) + " bytes follow)");
    }
    if (header_len > kMaxHeaderBytes) {
        return err("header length " + std::to_string(header_len) + " is too large");
    }
    std::string_view header = r.read_bytes(header_len, "header");
    const uint8_t* data = bytes.data() + r.offset();
    const int64_t data_size = int64_t(r.remaining());

    if (Status st = check_json_depth(header, kMaxJsonDepth, "JSON header"); !st)
        return err(st.message());
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(header.begin(), header.end());
    } catch (const nlohmann::json::exception& e) {
        return err("bad JSON header: " + one_line(e.what()));
    }
    if (!j.is_object())
        return err("bad JSON header: not an object");

    SafetensorsFile f;
    f.tensors.reserve(j.size());
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& tname = it.key();
        if (tname == "__metadata__")
            continue;
        std::string tn = "tensor '" + printable(tname) + "'";
        const auto& e = it.value();
        if (!e.is_object())
            return err(tn + ": entry is not an object");
        auto dt = e.find("dtype");
        auto sh = e.find("shape");
        auto off = e.find("data_offsets");
        if (dt == e.end() || !dt->is_string())
            return err(tn + ": missing dtype");
        if (sh == e.end() || !sh->is_array())
            return err(tn + ": missing shape");
        if (off == e.end() || !off->is_array() || off->size() != 2) {
            return err(tn + ": missing data_offsets [begin, end]");
        }
        SafetensorsTensor t;
        t.name = tname;
        t.file = name;
        std::string dts = dt->get<std::string>();
        auto type = dtype_from_safetensors(dts);
        if (!type)
            return err(tn + ": unsupported dtype '" + printable(dts) + "'");
        t.type = *type;
        if (sh->size() > kMaxSafetensorsDims)
            return err(tn + ": too many dimensions");
        int64_t n = 1;
        for (const auto& d : *sh) {
            auto v = json_nonneg_int(d);
            if (!v || *v == 0)
                return err(tn + ": bad shape dimension (zero dim or not a count)");
            t.shape.push_back(*v);
            auto m = checked_mul(n, *v);
            if (!m)
                return err(tn + ": shape overflows (dimension overflow)");
            n = *m;
        }
        t.n_elements = n;
        auto b = json_nonneg_int((*off)[0]);
        auto en = json_nonneg_int((*off)[1]);
        if (!b || !en || *en < *b)
            return err(tn + ": bad data_offsets");
        if (*en > data_size) {
            return err(tn + ": data_offsets [" + std::to_string(*b) + ", " + std::to_string(*en) +
                       ") outside the data section (" + std::to_string(data_size) + " bytes)");
        }
        auto want = checked_mul(n, dtype_block_bytes(t.type));
        if (!want)
            return err(tn + ": byte size overflows (dimension overflow)");
        if (*en - *b != *want) {
            return err(tn + ": size mismatch: data_offsets span " + std::to_string(*en - *b) +
                       " bytes, shape and dtype need " + std::to_string(*want));
        }
        t.bytes = *want;
        t.data = data + *b;
        f.index_.emplace(t.name, f.tensors.size());
        f.tensors.push_back(std::move(t));
    }
    std::vector<const SafetensorsTensor*> order;
    for (auto& t : f.tensors)
        order.push_back(&t);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->data < b->data; });
    for (size_t i = 1; i < order.size(); ++i) {
        if (order[i]->data < order[i - 1]->data + order[i - 1]->bytes) {
            return err("tensors '" + printable(order[i - 1]->name) + "' and '" +
                       printable(order[i]->name) + "' overlap");
        }
    }
    return f;
}

Result<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
    auto m = MappedFile::open(path);
    if (!m)
        return m.error();
    auto f = parse(m.value()->bytes(), path);
    if (!f)
        return f.error();
    f->mapping = std::move(m.value());
    return f;
}

Result<SafetensorsSet> SafetensorsSet::open_folder(const std::string& dir) {
    namespace fs = std::filesystem;
    SafetensorsSet set;
    const fs::path single = fs::path(dir) / "model.safetensors";
    const fs::path index = fs::path(dir) / "model.safetensors.index.json";
    std::error_code ec;
    if (fs::is_regular_file(single, ec)) {
        auto f = SafetensorsFile::open(single.string());
        if (!f)
            return f.error();
        set.files_.push_back(std::move(f.value()));
        for (size_t i = 0; i < set.files_[0].tensors.size(); ++i) {
            set.index_.emplace(set.files_[0].tensors[i].name, std::make_pair(size_t(0), i));
        }
        return set;
    }
    if (!fs::is_regular_file(index, ec)) {
        return make_error(dir + ": no model.safetensors or model.safetensors.index.json");
    }
    const std::string iname = index.string();
    auto m = MappedFile::open(iname);
    if (!m)
        return m.error();
    auto bytes = m.value()->bytes();
    if (Status st = check_json_depth(
            std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
            kMaxJsonDepth, iname);
        !st)
        return st.error();
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(bytes.begin(), bytes.end());
    } catch (const nlohmann::json::exception& e) {
        return make_error(iname + ": bad index JSON: " + one_line(e.what()));
    }
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object()) {
        return make_error(iname + ": bad index: no weight_map object");
    }
    std::unordered_map<std::string, size_t> shard_index;
    for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
        if (!it.value().is_string()) {
            return make_error(iname + ": bad index: weight_map['" + printable(it.key()) +
                              "'] is not a file name");
        }
        std::string shard = it.value().get<std::string>();
        if (shard.empty() || shard.find('/') != std::string::npos ||
            shard.find('\\') != std::string::npos || shard == "." || shard == "..") {
            return make_error(iname + ": bad index: shard name '" + printable(shard) +
                              "' is not a plain file name");
        }
        auto sit = shard_index.find(shard);
        if (sit == shard_index.end()) {
            auto f = SafetensorsFile::open((fs::path(dir) / shard).string());
            if (!f)
                return f.error();
            sit = shard_index.emplace(shard, set.files_.size()).first;
            set.files_.push_back(std::move(f.value()));
        }
        const SafetensorsFile& sf = set.files_[sit->second];
        auto tit = sf.index_.find(it.key());
        if (tit == sf.index_.end()) {
            return make_error(iname + ": bad index: tensor '" + printable(it.key()) +
                              "' is not in " + printable(shard));
        }
        set.index_.emplace(it.key(), std::make_pair(sit->second, tit->second));
    }
    if (set.files_.empty())
        return make_error(iname + ": bad index: empty weight_map");
    return set;
}

const SafetensorsTensor* SafetensorsSet::find(std::string_view name) const {
    auto it = index_.find(std::string(name));
    if (it == index_.end())
        return nullptr;
    return &files_[it->second.first].tensors[it->second.second];
}

std::vector<const SafetensorsTensor*> SafetensorsSet::all() const {
    std::vector<const SafetensorsTensor*> out;
    for (const auto& f : files_) {
        for (const auto& t : f.tensors)
            out.push_back(&t);
    }
    return out;
}

std::vector<std::shared_ptr<MappedFile>> SafetensorsSet::mappings() const {
    std::vector<std::shared_ptr<MappedFile>> out;
    for (const auto& f : files_) {
        if (f.mapping)
            out.push_back(f.mapping);
    }
    return out;
}

} // namespace llmwb
