// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_BENCH_BARE_SOCKET_HPP
#define REDLOCK_BENCH_BARE_SOCKET_HPP

// Blocking loopback sockets for the floor benchmarks, which measure what the machine allows
// without our library: nothing here may come from it.

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace bare {

/// The program's name, for messages; set it first thing in main().
inline const char* program = "bench";

[[noreturn]] inline void die(const std::string& what) {
    std::fprintf(stderr, "%s: %s: %s\n", program, what.c_str(), std::strerror(errno));
    std::exit(1);
}

/// A TCP_NODELAY connection to 127.0.0.1:port.
inline int connect_to(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) die("socket");
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
        die("connect to port " + std::to_string(port));
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

inline void send_all(int fd, const std::string& bytes) {
    if (::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) die("write");
}

/// "P1,P2,..." as ports (a malformed entry becomes 0, for the caller's range check).
inline std::vector<int> parse_ports(const std::string& list) {
    std::vector<int> ports;
    for (std::size_t pos = 0; pos <= list.size();) {
        auto comma = list.find(',', pos);
        if (comma == std::string::npos) comma = list.size();
        ports.push_back(std::atoi(list.substr(pos, comma - pos).c_str()));
        pos = comma + 1;
    }
    return ports;
}

}  // namespace bare

#endif
