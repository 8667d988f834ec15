// environment.json's probe and SHA-256: FIPS 180-2's test vectors (bytes and a file of
// 1,000,000 'a'), files hashed across the 1 MiB read chunks, a model file and a model folder
// (its *.safetensors in name order), and the machine's facts.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "app/report/environment.h"
#include "support/mini_test.h"

using namespace llmwb;

namespace {

constexpr const char* kEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* kAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr const char* k448 = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
constexpr const char* kMillionA =
    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

std::string pattern(size_t n) {
    std::string s(n, '\0');
    uint32_t x = 12345;
    for (char& c : s) {
        x = x * 1103515245u + 12345u;
        c = static_cast<char>(x >> 24);
    }
    return s;
}

} // namespace

MT_TEST(sha256_standard_vectors) {
    MT_COMPARE(sha256_hex(""), std::string(kEmpty));
    MT_COMPARE(sha256_hex("abc"), std::string(kAbc));
    MT_COMPARE(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
               std::string(k448));
    MT_COMPARE(sha256_hex(std::string(1000000, 'a')), std::string(kMillionA));
    // The padding edge cases: 55, 56 and 64 bytes differ from each other and from a byte less.
    MT_CHECK(sha256_hex(std::string(55, 'x')) != sha256_hex(std::string(56, 'x')));
    MT_CHECK(sha256_hex(std::string(63, 'x')) != sha256_hex(std::string(64, 'x')));
}

MT_TEST(file_sha256_reads_in_chunks) {
    mini_test::TempDir dir;
    const std::string a = dir.path() + "/million-a.bin";
    MT_REQUIRE(mini_test::write_file(a, std::string(1000000, 'a')));
    auto h = file_sha256(a);
    MT_REQUIRE(h.ok());
    MT_COMPARE(*h, std::string(kMillionA));
    // Larger than the 1 MiB chunks, ending mid-block: the same as hashing the bytes at once.
    const std::string bytes = pattern((3u << 20) + 17);
    const std::string b = dir.path() + "/pattern.bin";
    MT_REQUIRE(mini_test::write_file(b, bytes));
    auto hb = file_sha256(b);
    MT_REQUIRE(hb.ok());
    MT_COMPARE(*hb, sha256_hex(bytes));
    const std::string empty = dir.path() + "/empty.bin";
    MT_REQUIRE(mini_test::write_file(empty, ""));
    MT_COMPARE(file_sha256(empty).value(), std::string(kEmpty));
    // A missing file: an error naming it.
    auto missing = file_sha256(dir.path() + "/nope.gguf");
    MT_REQUIRE(!missing.ok());
    MT_REQUIRE(missing.message().find("nope.gguf") != std::string::npos);
}

MT_TEST(probe_describes_machine_and_model_file) {
    mini_test::TempDir dir;
    const std::string model = dir.path() + "/tiny-model.gguf";
    MT_REQUIRE(mini_test::write_file(model, "abc"));
    EnvironmentInputs in;
    in.model_path = model;
    in.model_name = "tiny-model";
    in.weight_dtype = "Q8_0";
    in.kv_dtype = "f32";
    in.device = "CPU (AVX2, 2 threads)";
    in.threads = 2;
    in.engine_settings = {{"max_num_seqs", 8}, {"block_size", 16}};
    const nlohmann::ordered_json j = probe_environment(in);
    MT_COMPARE(j.value("model_file", ""), std::string("tiny-model.gguf")); // not the path
    MT_REQUIRE(j.dump().find(dir.path()) == std::string::npos);
    MT_COMPARE(j.value("model_size_bytes", int64_t(-1)), int64_t(3));
    MT_COMPARE(j.value("model_sha256", ""), std::string(kAbc));
    MT_COMPARE(j.value("model_name", ""), std::string("tiny-model"));
    MT_COMPARE(j.value("weight_dtype", ""), std::string("Q8_0"));
    MT_COMPARE(j.value("kv_dtype", ""), std::string("f32"));
    MT_COMPARE(j.value("device", ""), std::string("CPU (AVX2, 2 threads)"));
    MT_COMPARE(j.value("threads", 0), 2);
    MT_REQUIRE(j.contains("engine") && j["engine"].value("max_num_seqs", 0) == 8);
    // The machine.
    const std::string simd = j.value("simd_level", "");
    MT_REQUIRE_MSG(simd == "scalar" || simd == "avx2" || simd == "avx512", "%s", simd.c_str());
    MT_REQUIRE(!j.value("cpu_model", "").empty());
    MT_REQUIRE(j.value("logical_cores", int64_t(0)) >= 1);
    MT_REQUIRE(j.value("physical_cores", int64_t(0)) >= 1);
    MT_REQUIRE(j.value("physical_cores", int64_t(0)) <= j.value("logical_cores", int64_t(0)));
    MT_REQUIRE(j.value("ram_bytes", int64_t(0)) > (int64_t(64) << 20));
    MT_REQUIRE(j.value("ram_available_bytes", int64_t(0)) > 0);
    MT_REQUIRE(j.value("ram_available_bytes", int64_t(0)) <= j.value("ram_bytes", int64_t(0)));
    MT_REQUIRE(!j.value("os", "").empty());
    MT_REQUIRE(j.value("kernel", "").rfind("Linux ", 0) == 0);
    MT_REQUIRE(!j.value("app_version", "").empty());
    const std::string commit = j.value("app_commit", "");
    MT_REQUIRE_MSG(commit == "unknown" || commit.size() >= 12, "commit %s", commit.c_str());
    MT_REQUIRE(!j.contains("gpu_name")); // no GPU given
    // The CPU model is /proc/cpuinfo's first "model name" where there is one.
    if (auto info = mini_test::read_file("/proc/cpuinfo");
        info && info->find("model name") != std::string::npos)
        MT_REQUIRE(info->find(j.value("cpu_model", "")) != std::string::npos);

    // Without hashing: no SHA-256, the size still.
    const nlohmann::ordered_json nh = probe_environment(in, false);
    MT_REQUIRE(!nh.contains("model_sha256"));
    MT_COMPARE(nh.value("model_size_bytes", int64_t(-1)), int64_t(3));
    // GPU facts when given.
    in.gpu_name = "NVIDIA H200";
    in.gpu_driver = "560.35";
    in.gpu_compute_capability = "9.0";
    in.gpu_memory_bytes = int64_t(141) << 30;
    const nlohmann::ordered_json g = probe_environment(in, false);
    MT_COMPARE(g.value("gpu_name", ""), std::string("NVIDIA H200"));
    MT_COMPARE(g.value("gpu_compute_capability", ""), std::string("9.0"));
    MT_COMPARE(g.value("gpu_memory_bytes", int64_t(0)), int64_t(141) << 30);
    // A model that is not there: an error in the environment, no hash.
    in.model_path = dir.path() + "/gone.gguf";
    const nlohmann::ordered_json m = probe_environment(in);
    MT_REQUIRE(!m.contains("model_sha256"));
    MT_REQUIRE(m.value("model_error", "").find("gone.gguf") != std::string::npos);
}

MT_TEST(probe_hashes_a_folder_weight_files_in_name_order) {
    mini_test::TempDir dir;
    namespace fs = std::filesystem;
    const std::string folder = dir.path() + "/my-model";
    fs::create_directories(folder + "/sub");
    const std::string a = pattern(1500000), b = "second file";
    // Written out of name order; other files and a sub-folder are not weights.
    MT_REQUIRE(mini_test::write_file(folder + "/model-00002-of-00002.safetensors", b));
    MT_REQUIRE(mini_test::write_file(folder + "/model-00001-of-00002.safetensors", a));
    MT_REQUIRE(mini_test::write_file(folder + "/config.json", "{}"));
    MT_REQUIRE(mini_test::write_file(folder + "/sub/x.safetensors", "not hashed"));
    EnvironmentInputs in;
    in.model_path = folder + "/"; // a trailing slash still names the folder
    const nlohmann::ordered_json j = probe_environment(in);
    MT_COMPARE(j.value("model_file", ""), std::string("my-model"));
    MT_COMPARE(j.value("model_size_bytes", int64_t(0)), static_cast<int64_t>(a.size() + b.size()));
    MT_COMPARE(j.value("model_sha256", ""), sha256_hex(a + b));
    MT_REQUIRE(j.contains("model_sha256_of"));
    MT_COMPARE(j["model_sha256_of"].size(), size_t(2));
    MT_COMPARE(j["model_sha256_of"][0].get<std::string>(),
               std::string("model-00001-of-00002.safetensors"));
    // A folder without weights: an error, no hash.
    const std::string empty = dir.path() + "/no-weights";
    fs::create_directories(empty);
    in.model_path = empty;
    const nlohmann::ordered_json e = probe_environment(in);
    MT_REQUIRE(!e.contains("model_sha256"));
    MT_REQUIRE(e.value("model_error", "").find("safetensors") != std::string::npos);
}

MINI_TEST_MAIN()
