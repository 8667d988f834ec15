// Models the user already has, found without loading them: LM Studio's and GPT4All's model
// folders, Ollama's blob store (manifests -> the GGUF blob, shown as "model:tag"), the Hugging
// Face cache (models--org--name/snapshots/<rev>/, refs/main naming the current snapshot) and
// folders the user added. Each found model's header is read (app/discovery/model_header.h);
// a hostile or broken file gives a row with its error, never a crash.
//
// Walks are iterative (no recursion), depth-bounded (kMaxDiscoveryDepth below a root), capped in
// entries and models, and visit each directory once by device and inode, so symlink loops end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/discovery/model_header.h"

namespace llmwb {

inline constexpr int kMaxDiscoveryDepth = 6;
inline constexpr int kMaxDiscoveryEntries = 100000; // directory entries looked at, in all
inline constexpr int kMaxDiscoveredModels = 2000;
inline constexpr int64_t kMaxOllamaManifestBytes = 1 << 20;

// Where to look. Empty strings are skipped.
struct DiscoveryRoots {
    std::string home;                // $HOME: ~/.lmstudio/models, ~/.cache/lm-studio/models, ...
    std::string hf_hub;              // $HF_HUB_CACHE, or $HF_HOME/hub, or ~/.cache/huggingface/hub
    std::vector<std::string> ollama; // $OLLAMA_MODELS, ~/.ollama/models, the service's store
    std::vector<std::string> user_folders;
};
// The roots from the environment ($HOME, $HF_HOME, $HF_HUB_CACHE, $OLLAMA_MODELS) plus
// /usr/share/ollama/.ollama/models (Ollama's service install) and `user_folders`.
DiscoveryRoots discovery_roots_from_environment(const std::vector<std::string>& user_folders);

struct DiscoveredModel {
    std::string name;   // "Qwen/Qwen2.5-0.5B-Instruct", "llama3.2:3b", "model-Q4_K_M.gguf"
    std::string source; // "LM Studio", "GPT4All", "Ollama", "Hugging Face", "Folder"
    std::string path;   // the file (GGUF, Ollama's blob) or the folder (Hugging Face) to load
    ModelHeader header;
};

// Every model under the roots, in source order (LM Studio, GPT4All, Ollama, Hugging Face,
// folders), each path once. `notes` (optional) gets one line per root that could not be read
// or limit that was reached.
std::vector<DiscoveredModel> discover_models(const DiscoveryRoots& roots,
                                             std::vector<std::string>* notes = nullptr);

// The Ollama name of a manifest path below manifests/: registry.ollama.ai/library/llama3/8b ->
// "llama3:8b"; registry.ollama.ai/user/m/t -> "user/m:t"; other hosts keep theirs.
std::string ollama_model_name(const std::string& host, const std::string& ns,
                              const std::string& model, const std::string& tag);

} // namespace llmwb
