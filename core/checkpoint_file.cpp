// SPDX-License-Identifier: Apache-2.0
#include "checkpoint_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "checkpoint.h"
#include "counted.h"
#include "error.h"
#include "state_codec.h"

namespace rngtrk {

namespace {

[[noreturn]] void io_error(const std::string &what, const std::string &path, int err) {
    fail(Status::io, what + " " + path + ": " + std::strerror(err));
}

// Closes a descriptor when it goes out of scope.
struct Fd {
    int fd;
    explicit Fd(int f) : fd(f) {}
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
};

void write_all(int fd, const uint8_t *p, size_t n, const std::string &path) {
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            io_error("cannot write", path, errno);
        }
        p += w, n -= static_cast<size_t>(w);
    }
}

std::string folder_of(const std::string &path) {
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

void write_file_atomically(const std::string &path, const std::vector<uint8_t> &bytes) {
    const std::string tmp = path + ".rngtrk-tmp";
    {
        Fd f(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
        if (f.fd < 0) io_error("cannot create", tmp, errno);
        try {
            write_all(f.fd, bytes.data(), bytes.size(), tmp);
            if (::fsync(f.fd) != 0) io_error("cannot flush", tmp, errno);
        } catch (...) {
            ::unlink(tmp.c_str());
            throw;
        }
        const int fd = f.fd;
        f.fd = -1;
        if (::close(fd) != 0) {
            const int err = errno;
            ::unlink(tmp.c_str());
            io_error("cannot close", tmp, err);
        }
    }
    // rename is atomic: `path` names the old file until this line, the new after.
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        io_error("cannot rename " + tmp + " to", path, err);
    }
    // Make the rename itself durable.
    const std::string folder = folder_of(path);
    Fd d(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (d.fd < 0) io_error("cannot open folder", folder, errno);
    if (::fsync(d.fd) != 0 && errno != EINVAL) io_error("cannot flush folder", folder, errno);
}

namespace {

// "PATH: what: reason", the form of every error reading a checkpoint file.
[[noreturn]] void read_error(const std::string &path, const std::string &what, int err) {
    fail(Status::io, path + ": " + what + ": " + std::strerror(err));
}

}  // namespace

std::vector<uint8_t> read_checkpoint_file(const std::string &path) {
    Fd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (f.fd < 0) read_error(path, "cannot open", errno);
    struct stat st;
    if (::fstat(f.fd, &st) != 0) read_error(path, "cannot stat", errno);
    if (S_ISDIR(st.st_mode)) read_error(path, "cannot read", EISDIR);
    if (!S_ISREG(st.st_mode)) fail(Status::io, path + ": not a regular file");
    uint8_t head[kCheckpointHeadBytes];
    size_t got = 0;
    while (got < sizeof head) {
        const ssize_t r = ::read(f.fd, head + got, sizeof head - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) read_error(path, "cannot read", errno);
        if (r == 0) break;
        got += static_cast<size_t>(r);
    }
    // The header decides whether the rest is worth reading: nothing larger
    // than the declared length is ever allocated.
    const uint64_t declared = check_checkpoint_head(head, got, path + ": ").declared;
    if (declared != static_cast<uint64_t>(st.st_size))
        fail(Status::corrupt, path + ": corrupt checkpoint: " + counted(static_cast<uint64_t>(st.st_size), "byte") +
                                   ", but its header says " + std::to_string(declared) +
                                   (declared > static_cast<uint64_t>(st.st_size) ? " (truncated)" : " (trailing bytes)"));
    std::vector<uint8_t> bytes(static_cast<size_t>(declared));
    std::memcpy(bytes.data(), head, sizeof head);
    got = sizeof head;
    while (got < bytes.size()) {
        const ssize_t r = ::read(f.fd, bytes.data() + got, bytes.size() - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) read_error(path, "cannot read", errno);
        if (r == 0) fail(Status::corrupt, path + ": corrupt checkpoint: the file shrank while being read");
        got += static_cast<size_t>(r);
    }
    return bytes;
}

}  // namespace rngtrk
