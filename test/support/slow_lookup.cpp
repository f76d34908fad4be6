// SPDX-License-Identifier: BSL-1.0
#include "slow_lookup.hpp"

#include <atomic>
#include <cstring>
#include <thread>

#include <dlfcn.h>
#include <netdb.h>

namespace redlock::test::slow_lookup {

namespace {
std::atomic<long long> delay_ms{0};
std::atomic<std::size_t> lookups_started{0};
std::atomic<std::size_t> lookups_finished{0};
}  // namespace

void set_delay(std::chrono::milliseconds d) {
    delay_ms = d.count();
}

std::size_t started() {
    return lookups_started;
}

std::size_t finished() {
    return lookups_finished;
}

}  // namespace redlock::test::slow_lookup

// The executable's definition comes first in symbol lookup: Asio's resolver thread calls it.
extern "C" int getaddrinfo(const char* __restrict name, const char* __restrict service,
                           const struct addrinfo* __restrict hints, struct addrinfo** __restrict result) {
    using lookup_fn = int (*)(const char*, const char*, const struct addrinfo*, struct addrinfo**);
    static const auto next = reinterpret_cast<lookup_fn>(dlsym(RTLD_NEXT, "getaddrinfo"));
    namespace slow = redlock::test::slow_lookup;
    if (name == nullptr || std::strcmp(name, slow::host) != 0) return next(name, service, hints, result);
    ++slow::lookups_started;
    std::this_thread::sleep_for(std::chrono::milliseconds(slow::delay_ms.load()));
    const int status = next("127.0.0.1", service, hints, result);
    ++slow::lookups_finished;
    return status;
}
