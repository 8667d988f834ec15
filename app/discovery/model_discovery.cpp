// Model discovery: the scanners of each source and the bounded directory walk they share.
#include "app/discovery/model_discovery.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "engine/util/json_depth.h"

namespace llmwb {

namespace {

namespace fs = std::filesystem;

// State shared by one discovery: directories visited (device, inode), entries looked at, paths
// already listed, the output and the notes.
struct DiscoveryWalk {
    std::set<std::pair<uint64_t, uint64_t>> visited;
    std::set<std::string> listed;
    int entries = 0;
    bool entries_noted = false, models_noted = false;
    std::vector<DiscoveredModel> models;
    std::vector<std::string>* notes = nullptr;

    void note(const std::string& s) {
        if (notes)
            notes->push_back(s);
    }
    // False once the entry cap is reached (noted once).
    bool count_entry() {
        if (++entries <= kMaxDiscoveryEntries)
            return true;
        if (!entries_noted)
            note("stopped after " + std::to_string(kMaxDiscoveryEntries) + " directory entries");
        entries_noted = true;
        return false;
    }
    // True the first time a directory (followed through symlinks) is seen.
    bool first_visit(const fs::path& dir) {
        struct stat st {};
        if (::stat(dir.c_str(), &st) != 0)
            return false;
        return visited.insert({uint64_t(st.st_dev), uint64_t(st.st_ino)}).second;
    }
    void add(std::string name, const char* source, const std::string& path, bool folder) {
        if (int(models.size()) >= kMaxDiscoveredModels) {
            if (!models_noted)
                note("listed the first " + std::to_string(kMaxDiscoveredModels) + " models");
            models_noted = true;
            return;
        }
        std::error_code ec;
        fs::path canon = fs::weakly_canonical(path, ec);
        const std::string key = ec ? path : canon.string();
        if (!listed.insert(key).second)
            return;
        DiscoveredModel m;
        m.name = std::move(name);
        m.source = source;
        m.path = path;
        m.header = folder ? read_hf_header(path) : read_gguf_header(path);
        models.push_back(std::move(m));
    }
};

bool discovery_is_gguf(const fs::path& p) {
    std::string ext = p.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // Vision projectors (mmproj-*.gguf) sit beside LM Studio's models; they are not models.
    return ext == ".gguf" && p.filename().string().rfind("mmproj", 0) != 0;
}

// A Hugging Face model folder: config.json and at least one *.safetensors directly in it.
bool discovery_is_hf_folder(const fs::path& dir, DiscoveryWalk& w) {
    std::error_code ec;
    if (!fs::is_regular_file(dir / "config.json", ec))
        return false;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (!w.count_entry())
            return false;
        if (it->path().extension() == ".safetensors")
            return true;
    }
    return false;
}

// GGUF files and Hugging Face folders below `root`, at most kMaxDiscoveryDepth levels down.
// Names are paths relative to the root.
void discovery_walk_folder(const fs::path& root, const char* source, DiscoveryWalk& w,
                           bool note_missing) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
        if (note_missing)
            w.note(root.string() + ": not a folder");
        return;
    }
    std::vector<std::pair<fs::path, int>> stack{{root, 0}};
    while (!stack.empty()) {
        auto [dir, depth] = std::move(stack.back());
        stack.pop_back();
        if (!w.first_visit(dir))
            continue; // a symlink loop or a folder reached twice
        const std::string rel =
            dir == root ? dir.filename().string() : fs::relative(dir, root, ec).string();
        if (discovery_is_hf_folder(dir, w)) {
            w.add(rel, source, dir.string(), true);
            continue;
        }
        std::vector<fs::path> files, dirs;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            if (!w.count_entry())
                return;
            std::error_code e2;
            if (it->is_directory(e2)) // follows symlinks; first_visit() ends loops
                dirs.push_back(it->path());
            else if (discovery_is_gguf(it->path()))
                files.push_back(it->path());
        }
        if (ec)
            w.note(dir.string() + ": " + ec.message());
        std::sort(files.begin(), files.end());
        std::sort(dirs.begin(), dirs.end(), std::greater<>()); // popped in name order
        for (const fs::path& f : files)
            w.add(fs::relative(f, root, ec).string(), source, f.string(), false);
        if (depth + 1 <= kMaxDiscoveryDepth)
            for (const fs::path& d : dirs)
                stack.push_back({d, depth + 1});
    }
}

// The first `max` bytes of a file; nullopt when it is larger or unreadable.
std::optional<std::string> discovery_read_small(const fs::path& p, int64_t max) {
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    if (ec || size > uint64_t(max))
        return std::nullopt;
    std::ifstream f(p, std::ios::binary);
    if (!f)
        return std::nullopt;
    std::string s(size, '\0');
    f.read(s.data(), static_cast<std::streamsize>(size));
    s.resize(static_cast<size_t>(std::max<std::streamsize>(0, f.gcount())));
    return s;
}

std::vector<fs::path> discovery_subdirs(const fs::path& dir, DiscoveryWalk& w) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (!w.count_entry())
            break;
        std::error_code e2;
        if (it->is_directory(e2))
            out.push_back(it->path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// An Ollama manifest -> the model layer's blob path, or an error.
Result<fs::path> discovery_ollama_blob(const fs::path& store, const fs::path& manifest) {
    auto text = discovery_read_small(manifest, kMaxOllamaManifestBytes);
    if (!text)
        return make_error(manifest.string() + ": unreadable or larger than " +
                          std::to_string(kMaxOllamaManifestBytes) + " bytes");
    if (Status st = check_json_depth(*text, kMaxJsonDepth, manifest.string()); !st)
        return st.error();
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(*text);
    } catch (const nlohmann::json::exception&) {
        return make_error(manifest.string() + ": not JSON");
    }
    auto layers = j.is_object() ? j.find("layers") : j.end();
    if (!j.is_object() || layers == j.end() || !layers->is_array())
        return make_error(manifest.string() + ": no 'layers' array");
    for (const auto& l : *layers) {
        if (!l.is_object())
            continue;
        auto mt = l.find("mediaType");
        if (mt == l.end() || !mt->is_string() ||
            mt->get<std::string>() != "application/vnd.ollama.image.model")
            continue;
        auto dg = l.find("digest");
        if (dg == l.end() || !dg->is_string())
            return make_error(manifest.string() + ": the model layer has no digest");
        const std::string d = dg->get<std::string>();
        // "sha256:<64 hex>" -> blobs/sha256-<64 hex>; nothing else may name a path.
        const bool hex = d.size() == 71 && d.rfind("sha256:", 0) == 0 &&
                         std::all_of(d.begin() + 7, d.end(), [](char c) {
                             return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                         });
        if (!hex)
            return make_error(manifest.string() + ": bad digest (want sha256:<64 hex digits>)");
        return store / "blobs" / ("sha256-" + d.substr(7));
    }
    return make_error(manifest.string() + ": no layer of type application/vnd.ollama.image.model");
}

void discovery_scan_ollama(const fs::path& store, DiscoveryWalk& w) {
    const fs::path manifests = store / "manifests";
    std::error_code ec;
    if (!fs::is_directory(manifests, ec))
        return;
    // manifests/<host>/<namespace>/<model>/<tag>: four fixed levels.
    for (const fs::path& host : discovery_subdirs(manifests, w))
        for (const fs::path& ns : discovery_subdirs(host, w))
            for (const fs::path& model : discovery_subdirs(ns, w)) {
                std::vector<fs::path> tags;
                for (fs::directory_iterator it(model, ec), end; !ec && it != end;
                     it.increment(ec)) {
                    if (!w.count_entry())
                        return;
                    std::error_code e2;
                    if (it->is_regular_file(e2))
                        tags.push_back(it->path());
                }
                std::sort(tags.begin(), tags.end());
                for (const fs::path& tag : tags) {
                    const std::string name =
                        ollama_model_name(host.filename().string(), ns.filename().string(),
                                          model.filename().string(), tag.filename().string());
                    auto blob = discovery_ollama_blob(store, tag);
                    if (!blob) {
                        DiscoveredModel m;
                        m.name = name;
                        m.source = "Ollama";
                        m.path = tag.string();
                        m.header.path = tag.string();
                        m.header.format = "gguf";
                        m.header.error = blob.message();
                        if (int(w.models.size()) < kMaxDiscoveredModels)
                            w.models.push_back(std::move(m));
                        continue;
                    }
                    w.add(name, "Ollama", blob->string(), false);
                }
            }
}

// refs/main's revision when it names an existing snapshot ("" otherwise).
std::string discovery_hf_ref(const fs::path& repo) {
    auto text = discovery_read_small(repo / "refs" / "main", 256);
    if (!text)
        return {};
    std::string rev = *text;
    while (!rev.empty() && (rev.back() == '\n' || rev.back() == '\r' || rev.back() == ' '))
        rev.pop_back();
    const bool safe =
        !rev.empty() && rev != "." && rev != ".." &&
        std::all_of(rev.begin(), rev.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
        });
    std::error_code ec;
    if (!safe || !fs::is_directory(repo / "snapshots" / rev, ec))
        return {};
    return rev;
}

void discovery_scan_hf_hub(const fs::path& hub, DiscoveryWalk& w) {
    std::error_code ec;
    if (!fs::is_directory(hub, ec))
        return;
    for (const fs::path& repo : discovery_subdirs(hub, w)) {
        const std::string dir = repo.filename().string();
        if (dir.rfind("models--", 0) != 0)
            continue; // datasets--, spaces--, .locks
        std::string name = dir.substr(8);
        if (auto sep = name.find("--"); sep != std::string::npos)
            name.replace(sep, 2, "/");
        std::vector<fs::path> snapshots;
        if (const std::string rev = discovery_hf_ref(repo); !rev.empty())
            snapshots.push_back(repo / "snapshots" / rev);
        else
            snapshots = discovery_subdirs(repo / "snapshots", w);
        for (const fs::path& snap : snapshots) {
            if (!w.first_visit(snap))
                continue;
            if (discovery_is_hf_folder(snap, w)) {
                w.add(snapshots.size() > 1 ? name + "@" + snap.filename().string() : name,
                      "Hugging Face", snap.string(), true);
                continue;
            }
            // GGUF repositories: the files of the snapshot (and its subfolders).
            std::vector<std::pair<fs::path, int>> stack{{snap, 0}};
            while (!stack.empty()) {
                auto [d, depth] = std::move(stack.back());
                stack.pop_back();
                std::vector<fs::path> files;
                for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
                    if (!w.count_entry())
                        return;
                    std::error_code e2;
                    if (it->is_directory(e2)) {
                        if (depth + 1 <= 2 && w.first_visit(it->path()))
                            stack.push_back({it->path(), depth + 1});
                    } else if (discovery_is_gguf(it->path())) {
                        files.push_back(it->path());
                    }
                }
                std::sort(files.begin(), files.end());
                for (const fs::path& f : files)
                    w.add(name + "/" + fs::relative(f, snap, ec).string(), "Hugging Face",
                          f.string(), false);
            }
        }
    }
}

std::string discovery_env(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

} // namespace

std::string ollama_model_name(const std::string& host, const std::string& ns,
                              const std::string& model, const std::string& tag) {
    std::string name = model + ":" + tag;
    if (host == "registry.ollama.ai")
        return ns == "library" ? name : ns + "/" + name;
    return host + "/" + ns + "/" + name;
}

DiscoveryRoots discovery_roots_from_environment(const std::vector<std::string>& user_folders) {
    DiscoveryRoots r;
    r.home = discovery_env("HOME");
    if (std::string hub = discovery_env("HF_HUB_CACHE"); !hub.empty())
        r.hf_hub = hub;
    else if (std::string hf = discovery_env("HF_HOME"); !hf.empty())
        r.hf_hub = (fs::path(hf) / "hub").string();
    else if (!r.home.empty())
        r.hf_hub = (fs::path(r.home) / ".cache" / "huggingface" / "hub").string();
    if (std::string o = discovery_env("OLLAMA_MODELS"); !o.empty())
        r.ollama.push_back(o);
    if (!r.home.empty())
        r.ollama.push_back((fs::path(r.home) / ".ollama" / "models").string());
    r.ollama.push_back("/usr/share/ollama/.ollama/models");
    r.user_folders = user_folders;
    return r;
}

std::vector<DiscoveredModel> discover_models(const DiscoveryRoots& roots,
                                             std::vector<std::string>* notes) {
    DiscoveryWalk w;
    w.notes = notes;
    if (!roots.home.empty()) {
        const fs::path home(roots.home);
        for (const fs::path& p :
             {home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"})
            discovery_walk_folder(p, "LM Studio", w, false);
        discovery_walk_folder(home / ".local" / "share" / "nomic.ai" / "GPT4All", "GPT4All", w,
                              false);
    }
    for (const std::string& o : roots.ollama)
        if (!o.empty())
            discovery_scan_ollama(o, w);
    if (!roots.hf_hub.empty())
        discovery_scan_hf_hub(roots.hf_hub, w);
    for (const std::string& f : roots.user_folders)
        if (!f.empty())
            discovery_walk_folder(f, "Folder", w, true);
    return std::move(w.models);
}

} // namespace llmwb
