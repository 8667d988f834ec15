#include "engine/model/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace llmwb {

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
    }
    ::close(fd);
    return f;
}

MappedFile::~MappedFile() {
    if (mapped_)
        ::munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(size_));
}

} // namespace llmwb
