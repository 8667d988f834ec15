// Model discovery (app/discovery/model_discovery.h) on fixture trees made here: LM Studio's and
// GPT4All's folders, an Ollama store (manifests + blobs), a Hugging Face cache (snapshots as
// symlinks into blobs/, refs/main), a user folder with a symlink loop and hostile GGUF files.
// The GGUF and safetensors models are real small ones written by the project's model writer.
// Also the machine probe (app/report/machine_probe.h).
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "app/discovery/model_discovery.h"
#include "app/report/machine_probe.h"
#include "engine/model/model_writer.h"
#include "support/mini_test.h"

using namespace llmwb;
namespace fs = std::filesystem;

namespace {

ModelWriterSpec discovery_spec(ModelFileFormat format) {
    ModelWriterSpec s;
    s.arch = Architecture::Qwen2;
    s.format = format;
    s.weight_type = WeightType::F32;
    s.hidden_size = 64;
    s.intermediate_size = 128;
    s.num_layers = 2;
    s.num_heads = 4;
    s.num_kv_heads = 2;
    s.max_position = 1024;
    return s;
}

bool write_gguf(const fs::path& p) {
    fs::create_directories(p.parent_path());
    Status st = write_model(discovery_spec(ModelFileFormat::Gguf), p.string());
    if (!st)
        std::fprintf(stderr, "%s\n", st.message().c_str());
    return bool(st);
}

void write_text(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

const DiscoveredModel* find_model(const std::vector<DiscoveredModel>& ms, const std::string& name) {
    for (const DiscoveredModel& m : ms)
        if (m.name == name)
            return &m;
    return nullptr;
}

// A good small model's header: qwen2, 1024 context, F32 tensors, file size as on disk.
void check_good(const DiscoveredModel& m) {
    MT_SCOPE("%s", m.name.c_str());
    MT_CHECK_MSG(m.header.ok(), "%s", m.header.error.c_str());
    MT_COMPARE(m.header.architecture, std::string("qwen2"));
    MT_COMPARE(m.header.context_length, int64_t(1024));
    MT_COMPARE(m.header.main_type(), std::string("F32"));
    MT_CHECK(m.header.parameters > 0);
    MT_CHECK(m.header.weight_bytes == 4 * m.header.parameters); // all F32
    MT_CHECK(m.header.config.has_value() && m.header.config->num_layers == 2);
}

} // namespace

MT_TEST(lm_studio_gpt4all_and_user_folders) {
    mini_test::TempDir dir;
    const fs::path home = dir.path();
    const fs::path lms = home / ".lmstudio/models/acme/tiny-GGUF/tiny-F32.gguf";
    MT_REQUIRE(write_gguf(lms));
    fs::copy_file(lms, lms.parent_path() / "mmproj-tiny.gguf"); // a projector: not listed
    MT_REQUIRE(write_gguf(home / ".cache/lm-studio/models/other/m/other.gguf"));
    MT_REQUIRE(write_gguf(home / ".local/share/nomic.ai/GPT4All/gpt.gguf"));
    // A user folder: a model, a symlink loop (loop -> the folder itself, deep -> its parent), a
    // truncated GGUF and a GGUF whose header claims 2^40 tensors, and a Hugging Face folder.
    const fs::path user = home / "models";
    MT_REQUIRE(write_gguf(user / "a/mine.gguf"));
    fs::create_directory_symlink(user, user / "loop");
    fs::create_directory_symlink("..", user / "a/deep");
    {
        std::ifstream in(lms, std::ios::binary);
        std::string head(200, '\0');
        in.read(head.data(), 200);
        write_text(user / "broken.gguf", head);
        std::string hostile("GGUF\x03\x00\x00\x00", 8);
        hostile += std::string("\x00\x00\x00\x00\x00\x01\x00\x00", 8); // tensors 2^40
        hostile += std::string(8, '\0');                               // metadata 0
        write_text(user / "hostile.gguf", hostile);
    }
    MT_REQUIRE(bool(
        write_model(discovery_spec(ModelFileFormat::Safetensors), (user / "hf-model").string())));

    DiscoveryRoots roots;
    roots.home = home.string();
    roots.user_folders = {user.string(), (home / "missing").string()};
    std::vector<std::string> notes;
    const auto ms = discover_models(roots, &notes);
    std::map<std::string, std::string> by_name;
    for (const auto& m : ms)
        by_name[m.name] = m.source;
    MT_COMPARE(by_name.size(), ms.size()); // each once, despite the loops
    MT_COMPARE(by_name["acme/tiny-GGUF/tiny-F32.gguf"], std::string("LM Studio"));
    MT_COMPARE(by_name["other/m/other.gguf"], std::string("LM Studio"));
    MT_COMPARE(by_name["gpt.gguf"], std::string("GPT4All"));
    MT_COMPARE(by_name["a/mine.gguf"], std::string("Folder"));
    MT_COMPARE(by_name["hf-model"], std::string("Folder"));
    MT_CHECK(!by_name.count("acme/tiny-GGUF/mmproj-tiny.gguf"));
    MT_COMPARE(ms.size(), size_t(7));
    for (const char* good : {"acme/tiny-GGUF/tiny-F32.gguf", "gpt.gguf", "a/mine.gguf"}) {
        const DiscoveredModel* m = find_model(ms, good);
        MT_REQUIRE(m);
        check_good(*m);
        MT_COMPARE(m->header.file_bytes, int64_t(fs::file_size(m->path)));
        MT_COMPARE(m->header.format, std::string("gguf"));
    }
    const DiscoveredModel* hf = find_model(ms, "hf-model");
    MT_REQUIRE(hf);
    check_good(*hf);
    MT_COMPARE(hf->header.format, std::string("safetensors"));
    for (const char* bad : {"broken.gguf", "hostile.gguf"}) {
        const DiscoveredModel* m = find_model(ms, bad);
        MT_REQUIRE(m);
        MT_CHECK(!m->header.ok());
        MT_CHECK_MSG(m->header.error.find(bad) != std::string::npos, "%s", m->header.error.c_str());
    }
    // The missing user folder is noted.
    bool noted = false;
    for (const auto& n : notes)
        noted = noted || n.find("missing") != std::string::npos;
    MT_CHECK(noted);
}

MT_TEST(ollama_manifests_name_their_blobs) {
    mini_test::TempDir dir;
    const fs::path store = fs::path(dir.path()) / "ollama";
    const std::string hex(64, 'a'), cfg(64, 'b'), hex2(64, 'c');
    MT_REQUIRE(write_gguf(store / "blobs" / ("sha256-" + hex)));
    fs::copy_file(store / "blobs" / ("sha256-" + hex), store / "blobs" / ("sha256-" + hex2));
    auto manifest = [&](const std::string& model_digest) {
        return std::string(
                   R"({"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",)") +
               R"("config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:)" +
               cfg +
               R"(","size":10},"layers":[{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:)" +
               cfg + R"(","size":5},{"mediaType":"application/vnd.ollama.image.model","digest":")" +
               model_digest + R"(","size":100}]})";
    };
    const fs::path m = store / "manifests/registry.ollama.ai";
    write_text(m / "library/tiny/latest", manifest("sha256:" + hex));
    write_text(m / "someone/tiny/q8", manifest("sha256:" + hex2));
    write_text(m / "library/evil/latest", manifest("sha256:../../../../etc/passwd"));
    write_text(m / "library/gone/latest", manifest("sha256:" + std::string(64, 'd')));
    write_text(m / "library/junk/latest", "{not json");

    DiscoveryRoots roots;
    roots.ollama = {store.string()};
    const auto ms = discover_models(roots);
    MT_COMPARE(ms.size(), size_t(5));
    const DiscoveredModel* tiny = find_model(ms, "tiny:latest");
    MT_REQUIRE(tiny);
    MT_COMPARE(tiny->source, std::string("Ollama"));
    MT_COMPARE(tiny->path, (store / "blobs" / ("sha256-" + hex)).string());
    check_good(*tiny);
    const DiscoveredModel* ns = find_model(ms, "someone/tiny:q8");
    MT_REQUIRE(ns);
    check_good(*ns);
    for (const char* bad : {"evil:latest", "gone:latest", "junk:latest"}) {
        const DiscoveredModel* b = find_model(ms, bad);
        MT_REQUIRE_MSG(b, "%s", bad);
        MT_CHECK_MSG(!b->header.ok(), "%s", bad);
    }
    MT_CHECK(find_model(ms, "evil:latest")->header.error.find("bad digest") != std::string::npos);
    MT_COMPARE(ollama_model_name("example.com", "ns", "m", "t"), std::string("example.com/ns/m:t"));
}

// models--org--name/{blobs,refs/main,snapshots/<rev>/} with the snapshot's files symlinks into
// blobs/, as huggingface_hub lays them out; an older snapshot refs/main does not name is skipped.
MT_TEST(hugging_face_cache_snapshots) {
    mini_test::TempDir dir;
    const fs::path hub = fs::path(dir.path()) / "hub";
    const fs::path repo = hub / "models--acme--Tiny-Chat";
    const fs::path written = fs::path(dir.path()) / "written";
    MT_REQUIRE(bool(write_model(discovery_spec(ModelFileFormat::Safetensors), written.string())));
    fs::create_directories(repo / "blobs");
    for (const char* rev : {"0000old", "1234abcd"}) {
        const fs::path snap = repo / "snapshots" / rev;
        fs::create_directories(snap);
        for (const auto& e : fs::directory_iterator(written)) {
            const std::string blob = std::string(rev) + "-" + e.path().filename().string();
            fs::copy_file(e.path(), repo / "blobs" / blob);
            fs::create_symlink(fs::path("../../blobs") / blob, snap / e.path().filename());
        }
    }
    write_text(repo / "refs/main", "1234abcd\n");
    // A GGUF repository without refs/main, and a dataset (not a model).
    MT_REQUIRE(write_gguf(hub / "models--acme--Tiny-GGUF/snapshots/r1/tiny-Q8_0.gguf"));
    MT_REQUIRE(write_gguf(hub / "datasets--acme--data/snapshots/r1/x.gguf"));

    DiscoveryRoots roots;
    roots.hf_hub = hub.string();
    const auto ms = discover_models(roots);
    MT_COMPARE(ms.size(), size_t(2));
    const DiscoveredModel* chat = find_model(ms, "acme/Tiny-Chat");
    MT_REQUIRE(chat);
    MT_COMPARE(chat->source, std::string("Hugging Face"));
    MT_COMPARE(chat->path, (repo / "snapshots/1234abcd").string());
    check_good(*chat);
    int64_t st_bytes = 0;
    for (const auto& e : fs::directory_iterator(written))
        if (e.path().extension() == ".safetensors")
            st_bytes += int64_t(fs::file_size(e.path()));
    MT_COMPARE(chat->header.file_bytes, st_bytes);
    const DiscoveredModel* gguf = find_model(ms, "acme/Tiny-GGUF/tiny-Q8_0.gguf");
    MT_REQUIRE(gguf);
    check_good(*gguf);
}

MT_TEST(machine_probe_reads_this_machine) {
    const MachineFacts m = probe_machine(nullptr);
    MT_CHECK(!m.cpu_model.empty());
    MT_CHECK(m.logical_cores >= 1);
    MT_CHECK(m.physical_cores >= 1 && m.physical_cores <= m.logical_cores);
    MT_CHECK(m.ram_bytes > (int64_t(64) << 20));
    MT_CHECK(m.ram_available_bytes > 0 && m.ram_available_bytes <= m.ram_bytes);
    MT_CHECK(m.simd_level == "scalar" || m.simd_level == "avx2" || m.simd_level == "avx512");
    MT_CHECK(m.gpus.empty() && !m.gpu_note.empty());
    // Two sockets of two cores with two threads each: 4 physical cores among 8 processors.
    std::string info;
    for (int p = 0; p < 8; ++p)
        info += "processor\t: " + std::to_string(p) + "\nphysical id\t: " + std::to_string(p / 4) +
                "\ncore id\t\t: " + std::to_string((p / 2) % 2) + "\n\n";
    MT_COMPARE(physical_cores_in_cpuinfo(info), 4);
    MT_COMPARE(physical_cores_in_cpuinfo("processor : 0\n"), 0);
}

MINI_TEST_MAIN()
