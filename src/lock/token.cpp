#include "lock/token.hpp"

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <system_error>

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

}  // namespace

std::string make_token() {
    std::array<unsigned char, 16> bytes{};
    if (!fill_from_getrandom(bytes.data(), bytes.size()) && !fill_from_urandom(bytes.data(), bytes.size())) {
        throw std::system_error(errno, std::generic_category(), "redlock: no randomness for a lock token");
    }
    static constexpr char hex[] = "0123456789abcdef";
    std::string token(bytes.size() * 2, '0');
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        token[2 * i] = hex[bytes[i] >> 4];
        token[2 * i + 1] = hex[bytes[i] & 0xf];
    }
    return token;
}

}  // namespace redlock::detail
