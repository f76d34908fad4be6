// SPDX-License-Identifier: BSL-1.0
#include "lock/client/token.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <system_error>

#include <pthread.h>
#include <sys/random.h>

namespace redlock::detail {

namespace {

bool fill_from_getrandom(unsigned char* out, std::size_t len) {
    std::size_t got = 0;
    while (got < len) {
        ssize_t n = ::getrandom(out + got, len - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        got += static_cast<std::size_t>(n);
    }
    return true;
}

bool fill_from_urandom(unsigned char* out, std::size_t len) {
    std::FILE* f = std::fopen("/dev/urandom", "rb");
    if (!f) return false;
    bool ok = std::fread(out, 1, len, f) == len;
    std::fclose(f);
    return ok;
}

// A getrandom(2) per token was one more system call per acquire than the acquire's own write:
// each thread keeps the OS's bytes for 32 tokens. A forked child must never hand out its
// parent's bytes (two processes, one token): a fork moves the generation on, and a pool of an
// older generation is thrown away.
std::atomic<unsigned> fork_generation{0};
std::once_flag fork_handler_installed;

void on_fork_in_child() noexcept {
    fork_generation.fetch_add(1, std::memory_order_relaxed);
}

struct random_pool {
    std::array<unsigned char, 512> bytes{};
    std::size_t taken = bytes.size();
    unsigned generation = 0;
};

void take_random(unsigned char* out, std::size_t len) {
    std::call_once(fork_handler_installed, [] { ::pthread_atfork(nullptr, nullptr, &on_fork_in_child); });
    thread_local random_pool pool;
    const auto generation = fork_generation.load(std::memory_order_relaxed);
    if (pool.generation != generation || pool.bytes.size() - pool.taken < len) {
        if (!fill_from_getrandom(pool.bytes.data(), pool.bytes.size()) &&
            !fill_from_urandom(pool.bytes.data(), pool.bytes.size())) {
            throw std::system_error(errno, std::generic_category(),
                                    "redlock: no randomness for a lock token");
        }
        pool.taken = 0;
        pool.generation = generation;
    }
    std::memcpy(out, pool.bytes.data() + pool.taken, len);
    // Given out once: no later token can be made of the same bytes.
    std::memset(pool.bytes.data() + pool.taken, 0, len);
    pool.taken += len;
}

}  // namespace

std::string make_token(std::string_view identity) {
    auto token = make_token();
    if (identity.empty()) return token;
    static constexpr char hex[] = "0123456789abcdef";
    token.reserve(token.size() + 1 + 2 * identity.size());
    token += 'x';
    for (const unsigned char c : identity) {
        token += hex[c >> 4];
        token += hex[c & 0xf];
    }
    return token;
}

std::string holder_identity_text(std::string_view host, long pid, std::string_view label) {
    std::string out(host.substr(0, 64));
    out += '\n';
    out += std::to_string(pid);
    out += '\n';
    out += label.substr(0, 64);
    return out;
}

std::string make_token() {
    std::array<unsigned char, 16> bytes{};
    take_random(bytes.data(), bytes.size());
    static constexpr char hex[] = "0123456789abcdef";
    std::string token(bytes.size() * 2, '0');
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        token[2 * i] = hex[bytes[i] >> 4];
        token[2 * i + 1] = hex[bytes[i] & 0xf];
    }
    return token;
}

}  // namespace redlock::detail
