#include "bench/engine/shape_model.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "engine/model/model_shapes.h"
#include "engine/model/model_writer.h"

namespace llmwb::bench {

Result<std::string> ensure_shape_model(const std::string& shape, const std::string& type_name,
                                       const std::string& cache_dir) {
    namespace fs = std::filesystem;
    auto spec = writer_spec_for_shape(shape);
    if (!spec)
        return spec.error();
    auto type = parse_weight_type(type_name);
    if (!type)
        return type.error();
    std::string dir = cache_dir;
    if (dir.empty()) {
        const char* home = std::getenv("HOME");
        dir = std::string(home ? home : ".") + "/.cache/llmwb/bench-models";
    }
    std::error_code ec;
    fs::create_directories(dir, ec);
    const std::string path = dir + "/" + shape + "-" + weight_type_name(*type) + ".gguf";
    if (fs::exists(path))
        return path;

    ModelWriterSpec s = *spec;
    s.format = ModelFileFormat::Gguf;
    s.weight_type = *type;
    s.seed = 1;
    std::fprintf(stderr, "writing %s ...\n", path.c_str());
    const auto t0 = std::chrono::steady_clock::now();
    const std::string tmp = path + ".tmp";
    if (Status st = write_model(s, tmp); !st)
        return st.error();
    fs::rename(tmp, path, ec);
    if (ec)
        return make_error("cannot rename " + tmp + ": " + ec.message());
    std::fprintf(stderr, "written in %.1f s\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return path;
}

} // namespace llmwb::bench
