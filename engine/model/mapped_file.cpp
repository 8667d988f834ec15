#include "engine/model/mapped_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace llmwb {

namespace {

// One registered mapping. begin == 0: a free slot. The handler reads begin/end and sets
// faults; open() claims slots (under a mutex: end, then begin) and ~MappedFile() releases
// them (end, then begin), so the handler never matches a half-written range and a claim never
// sees a slot whose end is still being cleared.
struct GuardSlot {
    std::atomic<uintptr_t> begin{0};
    std::atomic<uintptr_t> end{0};
    std::atomic<uint32_t> faults{0};
};

GuardSlot g_slots[MappedFile::kMaxGuarded];
struct sigaction g_previous {};
uintptr_t g_page_size = 4096; // set before the handler is installed (sysconf is not signal-safe)

static_assert(std::atomic<uintptr_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

void on_sigbus(int sig, siginfo_t* info, void* context) {
    const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
    for (GuardSlot& s : g_slots) {
        const uintptr_t begin = s.begin.load(std::memory_order_acquire);
        if (begin == 0 || addr < begin)
            continue;
        const uintptr_t end = s.end.load(std::memory_order_acquire);
        if (addr >= end)
            continue;
        const uintptr_t from = addr & ~(g_page_size - 1);
        // Zero pages over the rest of the mapping: the read is retried and sees zeros; so do
        // later reads past the new end, without another fault each.
        void* p = mmap(reinterpret_cast<void*>(from), end - from, PROT_READ,
                       MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            break; // cannot repair: take the previous or default action
        s.faults.fetch_add(1, std::memory_order_release);
        return;
    }
    // Not ours: the handler installed before ours, or the default action (the fault is
    // re-executed on return and kills the process with SIGBUS).
    if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
        g_previous.sa_sigaction(sig, info, context);
        return;
    }
    if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN &&
        g_previous.sa_handler != nullptr) {
        g_previous.sa_handler(sig);
        return;
    }
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGBUS, &dfl, nullptr);
}

void install_handler() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (const long page = sysconf(_SC_PAGESIZE); page > 0)
            g_page_size = static_cast<uintptr_t>(page);
        struct sigaction sa {};
        sa.sa_sigaction = &on_sigbus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, &g_previous);
    });
}

int claim_slot(const uint8_t* data, int64_t size) {
    static std::mutex claim_mutex; // claims and releases are not on the signal path
    std::lock_guard<std::mutex> lock(claim_mutex);
    for (int i = 0; i < MappedFile::kMaxGuarded; ++i) {
        GuardSlot& s = g_slots[i];
        if (s.begin.load(std::memory_order_acquire) != 0)
            continue;
        s.faults.store(0, std::memory_order_relaxed);
        s.end.store(reinterpret_cast<uintptr_t>(data) + static_cast<uintptr_t>(size),
                    std::memory_order_release);
        s.begin.store(reinterpret_cast<uintptr_t>(data), std::memory_order_release);
        return i;
    }
    return -1;
}

} // namespace

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return make_error(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        std::string reason = std::strerror(errno);
        ::close(fd);
        return make_error(path + ": cannot stat: " + reason);
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return make_error(path + ": not a regular file");
    }
    std::shared_ptr<MappedFile> f(new MappedFile());
    f->path_ = path;
    f->size_ = static_cast<int64_t>(st.st_size);
    if (f->size_ > 0) {
        void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            std::string reason = std::strerror(errno);
            ::close(fd);
            return make_error(path + ": cannot map: " + reason);
        }
        f->data_ = static_cast<const uint8_t*>(p);
        f->mapped_ = true;
        install_handler();
        f->guard_slot_ = claim_slot(f->data_, f->size_);
    }
    ::close(fd);
    return f;
}

bool MappedFile::changed() const {
    return guard_slot_ >= 0 && g_slots[guard_slot_].faults.load(std::memory_order_acquire) > 0;
}

Status MappedFile::check_unchanged() const {
    if (changed())
        return make_error("model file changed or was truncated while in use: " + path_);
    return ok_status();
}

MappedFile::~MappedFile() {
    if (guard_slot_ >= 0) {
        GuardSlot& s = g_slots[guard_slot_];
        s.end.store(0, std::memory_order_release);   // the handler stops matching
        s.begin.store(0, std::memory_order_release); // the slot is free
    }
    if (mapped_)
        ::munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(size_));
}

} // namespace llmwb
