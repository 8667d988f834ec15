// Model headers for discovery: GGUF metadata + tensor infos, or config.json + safetensors
// headers, through the engine's bounded readers (engine/model/gguf_file.h, safetensors_file.h).
#include "app/discovery/model_header.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "engine/model/gguf_file.h"
#include "engine/model/model_loaders.h"
#include "engine/model/safetensors_file.h"

namespace llmwb {

namespace {

namespace fs = std::filesystem;

struct HeaderTypeTally {
    std::map<std::string, HeaderTypeCount> by_type;
    void add(const char* type, int64_t bytes) {
        HeaderTypeCount& c = by_type[type];
        c.type = type;
        c.tensors += 1;
        c.bytes += bytes;
    }
    std::vector<HeaderTypeCount> sorted() const {
        std::vector<HeaderTypeCount> out;
        for (const auto& [name, c] : by_type)
            out.push_back(c);
        std::stable_sort(
            out.begin(), out.end(),
            [](const HeaderTypeCount& a, const HeaderTypeCount& b) { return a.bytes > b.bytes; });
        return out;
    }
};

} // namespace

std::string ModelHeader::types_text() const {
    std::string s;
    for (const HeaderTypeCount& t : types) {
        if (!s.empty())
            s += ", ";
        s += t.type + " " + std::to_string(t.tensors);
    }
    return s;
}

ModelHeader read_gguf_header(const std::string& path) {
    ModelHeader h;
    h.path = path;
    h.format = "gguf";
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
        h.error = path + ": not a regular file";
        return h;
    }
    h.file_bytes = static_cast<int64_t>(fs::file_size(path, ec));
    if (ec) {
        h.error = path + ": " + ec.message();
        return h;
    }
    auto gf = GgufFile::open(path);
    if (!gf) {
        h.error = gf.message();
        return h;
    }
    const GgufFile& f = gf.value();
    if (const GgufValue* a = f.find("general.architecture"); a && a->type == GgufType::String)
        h.architecture = std::string(a->str);
    HeaderTypeTally tally;
    for (const GgufTensorInfo& t : f.tensors) {
        tally.add(dtype_name(t.type), t.bytes);
        h.weight_bytes += t.bytes;
        h.parameters += t.n_elements;
    }
    h.types = tally.sorted();
    if (!h.architecture.empty()) {
        if (const GgufValue* v = f.find(h.architecture + ".context_length"))
            h.context_length = v->as_int().value_or(0);
    }
    auto config = gguf_model_config(f, path);
    if (!config) {
        h.error = config.message();
        return h;
    }
    h.config = std::move(config.value());
    h.context_length = h.config->max_position;
    return h;
}

ModelHeader read_hf_header(const std::string& dir) {
    ModelHeader h;
    h.path = dir;
    h.format = "safetensors";
    std::error_code ec;
    const std::string config_path = (fs::path(dir) / "config.json").string();
    const auto config_size = fs::file_size(config_path, ec);
    if (ec) {
        h.error = config_path + ": " + ec.message();
        return h;
    }
    if (config_size > uint64_t(kMaxConfigJsonBytes)) {
        h.error = config_path + ": larger than " + std::to_string(kMaxConfigJsonBytes) + " bytes";
        return h;
    }
    auto set = SafetensorsSet::open_folder(dir);
    if (!set) {
        h.error = set.message();
        return h;
    }
    HeaderTypeTally tally;
    for (const SafetensorsTensor* t : set->all()) {
        tally.add(dtype_name(t->type), t->bytes);
        h.weight_bytes += t->bytes;
        h.parameters += t->n_elements;
    }
    h.types = tally.sorted();
    for (const auto& m : set->mappings())
        if (m)
            h.file_bytes += static_cast<int64_t>(m->bytes().size());
    auto config = hf_model_config(config_path);
    if (!config) {
        h.error = config.message();
        return h;
    }
    h.config = std::move(config.value());
    h.architecture = h.config->arch_name;
    h.context_length = h.config->max_position;
    return h;
}

ModelHeader read_model_header(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec))
        return read_hf_header(path);
    return read_gguf_header(path);
}

} // namespace llmwb
