// The fastest a hand-off by pub/sub can be on this machine, measured without our library, over
// blocking sockets to one node: a holder releases by a token-checked script that publishes on the
// resource's channel; a waiter, subscribed on a third socket, sends its SET NX as soon as the
// message arrives. Latency: from just before the release is sent to the waiter's grant. Also the
// PING round trip, both
//   - hot: each step right after the previous one (machine and server busy), and
//   - after 2 ms of idleness before the release (or the PING): what a hand-off pays when the
//     lock was quiet, since idle CPUs fall asleep and each wake-up costs time.
// bench/run_lock_bench compares our hand-off with these.
//
//   handoff_floor --port P [--iterations K]      prints one JSON line

#include "bare_socket.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <poll.h>
#include <unistd.h>

namespace {

using bare::die;
using bare::send_all;
using clock_type = std::chrono::steady_clock;

std::string command(const std::vector<std::string>& args) {
    std::string out = "*" + std::to_string(args.size()) + "\r\n";
    for (const auto& a : args)
        out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
    return out;
}

// One request is outstanding per socket and every reply is short: one read takes it whole.
std::string read_reply(int fd) {
    char buf[1024];
    const auto n = ::read(fd, buf, sizeof buf);
    if (n <= 0) die("read");
    return std::string(buf, static_cast<std::size_t>(n));
}

const char* release_script =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) "
    "redis.call('PUBLISH', KEYS[2], ARGV[1]) return 1 end return 0";

struct sockets {
    int holder, waiter, subscriber;
};

// One hand-off; returns its latency in microseconds.
double handoff(const sockets& s, const std::string& sha, int i, clock_type::duration idle) {
    const std::string key = "floor:handoff", channel = "floor:released";
    const std::string holder_token = "h" + std::to_string(i), waiter_token = "w" + std::to_string(i);
    send_all(s.holder, command({"SET", key, holder_token, "NX", "PX", "10000"}));
    read_reply(s.holder);
    send_all(s.waiter, command({"SET", key, waiter_token, "NX", "PX", "10000", "GET"}));
    read_reply(s.waiter);  // refused: the waiter waits for the message
    if (idle > clock_type::duration::zero()) std::this_thread::sleep_for(idle);

    const auto t0 = clock_type::now();
    send_all(s.holder, command({"EVALSHA", sha, "2", key, channel, holder_token}));
    bool released = false, granted = false;
    double latency = 0;
    while (!released || !granted) {
        pollfd p[2] = {{s.holder, static_cast<short>(released ? 0 : POLLIN), 0}, {s.subscriber, POLLIN, 0}};
        if (::poll(p, 2, 5000) <= 0) die("poll");
        if (p[0].revents & POLLIN) {
            read_reply(s.holder);
            released = true;
        }
        if (p[1].revents & POLLIN) {
            read_reply(s.subscriber);
            send_all(s.waiter, command({"SET", key, waiter_token, "NX", "PX", "10000", "GET"}));
            read_reply(s.waiter);
            latency = std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
            granted = true;
        }
    }
    send_all(s.waiter, command({"DEL", key}));
    read_reply(s.waiter);
    return latency;
}

double ping(int fd, clock_type::duration idle) {
    if (idle > clock_type::duration::zero()) std::this_thread::sleep_for(idle);
    const auto t0 = clock_type::now();
    send_all(fd, command({"PING"}));
    read_reply(fd);
    return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
}

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    auto rank = static_cast<std::size_t>(q * static_cast<double>(v.size()));
    return v[std::min(rank, v.size() - 1)];
}

template <class F>
std::vector<double> run(int iterations, F f) {
    std::vector<double> out;
    for (int i = 0; i < iterations + iterations / 10; ++i) {
        double us = f(i);
        if (i >= iterations / 10) out.push_back(us);  // the first tenth warms up
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    bare::program = "handoff_floor";
    int port = 0;
    int iterations = 2000;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--port" && i + 1 < argc) {
            port = std::atoi(argv[++i]);
        } else if (a == "--iterations" && i + 1 < argc) {
            iterations = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: handoff_floor --port P [--iterations K]\n");
            return 2;
        }
    }
    if (port <= 0 || port > 65535 || iterations < 10 || iterations > 1000000) {
        std::fprintf(stderr, "handoff_floor: give a port and 10 to 1000000 iterations\n");
        return 2;
    }
    const sockets s{bare::connect_to(port), bare::connect_to(port), bare::connect_to(port)};
    send_all(s.holder, command({"SCRIPT", "LOAD", release_script}));
    const auto loaded = read_reply(s.holder);  // "$40\r\n<sha>\r\n"
    const auto start = loaded.find("\r\n");
    if (loaded.empty() || loaded[0] != '$' || start == std::string::npos || loaded.size() < start + 42) {
        std::fprintf(stderr, "handoff_floor: SCRIPT LOAD answered %s\n", loaded.c_str());
        return 1;
    }
    const std::string sha = loaded.substr(start + 2, 40);
    send_all(s.subscriber, command({"SUBSCRIBE", "floor:released"}));
    read_reply(s.subscriber);

    constexpr auto idle = std::chrono::milliseconds(2);
    const auto idle_runs = std::max(10, iterations / 4);  // 2 ms each
    auto hot = run(iterations, [&](int i) { return handoff(s, sha, i, {}); });
    auto cold = run(idle_runs, [&](int i) { return handoff(s, sha, i, idle); });
    auto ping_hot = run(iterations, [&](int) { return ping(s.holder, {}); });
    auto ping_cold = run(idle_runs, [&](int) { return ping(s.holder, idle); });
    std::printf(
        "{\"iterations\": %d, \"handoff_hot_p50_us\": %.1f, \"handoff_hot_p99_us\": %.1f, "
        "\"handoff_idle_p50_us\": %.1f, \"handoff_idle_p99_us\": %.1f, \"ping_hot_p50_us\": %.1f, "
        "\"ping_idle_p50_us\": %.1f}\n",
        iterations, quantile(hot, 0.5), quantile(hot, 0.99), quantile(cold, 0.5), quantile(cold, 0.99),
        quantile(ping_hot, 0.5), quantile(ping_cold, 0.5));
    ::close(s.holder);
    ::close(s.waiter);
    ::close(s.subscriber);
    return 0;
}
