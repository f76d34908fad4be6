// SPDX-License-Identifier: BSL-1.0
// The fastest a Redlock acquire can be on this machine, measured without our library: a client
// that does nothing but send `SET key token NX PX ttl GET` over blocking sockets and wait for the
// replies. It times, at concurrency 1:
//   - one node (the N = 1 acquire),
//   - N nodes at once, until a quorum replied (the concurrent fan-out Redlock asks for),
//   - N nodes one after the other, until a quorum replied (a fan-out that is not concurrent),
// so that bench/run_lock_bench can show how much of the N = 5 / N = 1 latency ratio the machine
// itself imposes (N redis-servers and the client sharing few cores) and how much is ours.
//
//   fanout_floor --ports P1,P2,... [--iterations K]      prints one JSON line

#include "bare_socket.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <poll.h>
#include <unistd.h>

namespace {

using bare::die;
using bare::send_all;
using clock_type = std::chrono::steady_clock;

std::string bulk(const std::string& s) {
    return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

std::string set_command(const std::string& key) {
    return "*7\r\n" + bulk("SET") + bulk(key) + bulk("0123456789abcdef0123456789abcdef") + bulk("NX") +
           bulk("PX") + bulk("10000") + bulk("GET");
}

// Every reply here is one short line ("$-1" or a short bulk string): one read takes it whole.
void read_reply(int fd) {
    char buf[512];
    if (::read(fd, buf, sizeof buf) <= 0) die("read");
}

// Sends to every node at once, returns when a quorum replied; the other replies are read after.
double concurrent(const std::vector<int>& fds, const std::string& cmd) {
    const std::size_t quorum = fds.size() / 2 + 1;
    auto t0 = clock_type::now();
    for (int fd : fds)
        send_all(fd, cmd);
    std::vector<bool> done(fds.size(), false);
    std::size_t got = 0;
    double latency = 0;
    while (got < fds.size()) {
        std::vector<pollfd> p(fds.size());
        for (std::size_t i = 0; i < fds.size(); ++i)
            p[i] = {fds[i], static_cast<short>(done[i] ? 0 : POLLIN), 0};
        if (::poll(p.data(), p.size(), 5000) <= 0) die("poll");
        for (std::size_t i = 0; i < fds.size(); ++i) {
            if (!(p[i].revents & POLLIN)) continue;
            read_reply(fds[i]);
            done[i] = true;
            if (++got == quorum)
                latency = std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
        }
    }
    return latency;
}

// One node after the other until a quorum replied.
double sequential(const std::vector<int>& fds, const std::string& cmd) {
    const std::size_t quorum = fds.size() / 2 + 1;
    auto t0 = clock_type::now();
    for (std::size_t i = 0; i < quorum; ++i) {
        send_all(fds[i], cmd);
        read_reply(fds[i]);
    }
    return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
}

double p(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    auto rank = static_cast<std::size_t>(q * static_cast<double>(v.size()));
    return v[std::min(rank, v.size() - 1)];
}

template <class F>
std::vector<double> run(int iterations, const char* tag, F f) {
    std::vector<double> out;
    for (int i = 0; i < iterations + iterations / 10; ++i) {
        double us = f(set_command(std::string("floor:") + tag + ":" + std::to_string(i)));
        if (i >= iterations / 10) out.push_back(us);  // the first tenth warms up
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    bare::program = "fanout_floor";
    std::vector<int> ports;
    int iterations = 20000;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--ports" && i + 1 < argc) {
            ports = bare::parse_ports(argv[++i]);
        } else if (a == "--iterations" && i + 1 < argc) {
            iterations = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: fanout_floor --ports P1,P2,... [--iterations K]\n");
            return 2;
        }
    }
    if (ports.size() < 2 || iterations < 10) {
        std::fprintf(stderr, "fanout_floor: give at least 2 ports and 10 iterations\n");
        return 2;
    }
    std::vector<int> all;
    for (int port : ports)
        all.push_back(bare::connect_to(port));
    const std::vector<int> one{all.front()};

    auto single = run(iterations, "one", [&](const std::string& c) { return concurrent(one, c); });
    auto fan = run(iterations, "fan", [&](const std::string& c) { return concurrent(all, c); });
    auto seq = run(iterations, "seq", [&](const std::string& c) { return sequential(all, c); });
    std::printf(
        "{\"nodes\": %zu, \"iterations\": %d, \"one_p50_us\": %.1f, \"one_p99_us\": %.1f, "
        "\"concurrent_p50_us\": %.1f, \"concurrent_p99_us\": %.1f, \"sequential_p50_us\": %.1f, "
        "\"sequential_p99_us\": %.1f}\n",
        all.size(), iterations, p(single, 0.5), p(single, 0.99), p(fan, 0.5), p(fan, 0.99), p(seq, 0.5),
        p(seq, 0.99));
    for (int fd : all)
        ::close(fd);
    return 0;
}
