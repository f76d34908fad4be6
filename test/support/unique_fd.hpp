// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_UNIQUE_FD_HPP
#define REDLOCK_TEST_SUPPORT_UNIQUE_FD_HPP

// File descriptors of the fixtures' child processes (redis-server, redis-cli).

#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

namespace redlock::test {

/// Owns a file descriptor: closed when it goes.
class unique_fd {
public:
    explicit unique_fd(int fd = -1) noexcept : fd_(fd) {}
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;
    ~unique_fd() { reset(); }
    [[nodiscard]] int get() const noexcept { return fd_; }
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_;
};

/// `fd` moved above 0, 1 and 2 (close-on-exec): a child dup2()s onto those, so a descriptor it
/// still needs must not be one of them (possible when the test process runs with stdin or
/// stdout closed).
inline int above_stdio(int fd) {
    if (fd < 0 || fd > 2) return fd;
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    const int err = errno;
    ::close(fd);
    errno = err;
    return moved;
}

}  // namespace redlock::test

#endif
