// SPDX-License-Identifier: BSL-1.0
// The fastest a hand-off by pub/sub can be on this machine, measured without our library, over
// blocking sockets: a holder releases by a token-checked script that publishes on the resource's
// channel; a waiter, subscribed on a third socket per node, sends its SET NX as soon as the
// message arrives. With several nodes, Redlock's way: the release goes to all at once, the waiter
// sends its SETs to all once a quorum's messages arrived and holds once a quorum granted. Also
// the hand-off our fair lock makes, where the release's script gives the key to the waiter and
// the message alone tells it so ("handed over"). Latency: from just before the release is sent
// to the waiter's hold. Also the PING round trip of the first node. Each both
//   - hot: each step right after the previous one (machine and server busy), and
//   - after 2 ms of idleness before the release (or the PING): what a hand-off pays when the
//     lock was quiet, since idle CPUs fall asleep and each wake-up costs time.
// bench/run_lock_bench compares our hand-off with these.
//
//   handoff_floor --ports P1[,P2,...] [--iterations K]      prints one JSON line

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

// The holder's release: token-checked, publishes on the resource's channel.
const char* release_script =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) "
    "redis.call('SPUBLISH', KEYS[2], ARGV[1]) return 1 end return 0";
// The release of a lock that hands itself over (our fair lock's way): the key gets the next
// waiter's token, and the message tells the waiter it holds it.
const char* hand_over_script =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', 10000) "
    "redis.call('SPUBLISH', KEYS[2], ARGV[2]) return 1 end return 0";

// Three sockets per node.
struct node_sockets {
    int holder, waiter, subscriber;
};

enum class style { waiter_sets, handed_over };

// One hand-off over all nodes, as Redlock does it: the holder's release goes to every node at
// once; the waiter acts once a quorum's messages arrived (its SET NX to every node at once,
// holding once a quorum granted; or, handed over, at once). Returns the latency in
// microseconds; every reply and message is read before it returns.
double handoff(const std::vector<node_sockets>& nodes, const std::string& sha, style how, int i,
               clock_type::duration idle) {
    const std::string key = "floor:handoff", channel = "floor:released";
    const std::string holder_token = "h" + std::to_string(i), waiter_token = "w" + std::to_string(i);
    const std::size_t n = nodes.size(), quorum = n / 2 + 1;
    // The holder's SETs first: sent together, the waiter's could come first on some node.
    for (const auto& s : nodes)
        send_all(s.holder, command({"SET", key, holder_token, "NX", "PX", "10000"}));
    for (const auto& s : nodes)
        read_reply(s.holder);
    for (const auto& s : nodes)
        send_all(s.waiter, command({"SET", key, waiter_token, "NX", "PX", "10000", "GET"}));
    for (const auto& s : nodes)
        read_reply(s.waiter);  // refused: the waiter waits for the messages
    if (idle > clock_type::duration::zero()) std::this_thread::sleep_for(idle);

    const auto t0 = clock_type::now();
    for (const auto& s : nodes)
        send_all(s.holder, command({"EVALSHA", sha, "2", key, channel, holder_token, waiter_token}));
    // Per node: the holder's reply, the message, and (waiter_sets) the waiter's SET reply.
    std::vector<bool> released(n, false), messaged(n, false), answered(n, how == style::handed_over);
    std::size_t messages = 0, grants = 0;
    bool sent = false;
    double latency = -1;
    const auto all_read = [&] {
        return std::all_of(released.begin(), released.end(), [](bool b) { return b; }) &&
               std::all_of(messaged.begin(), messaged.end(), [](bool b) { return b; }) &&
               std::all_of(answered.begin(), answered.end(), [](bool b) { return b; });
    };
    const auto now_us = [&] {
        return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
    };
    while (!all_read()) {
        std::vector<pollfd> p;
        for (std::size_t k = 0; k < n; ++k) {
            p.push_back({nodes[k].holder, static_cast<short>(released[k] ? 0 : POLLIN), 0});
            p.push_back({nodes[k].subscriber, static_cast<short>(messaged[k] ? 0 : POLLIN), 0});
            p.push_back({nodes[k].waiter, static_cast<short>(sent && !answered[k] ? POLLIN : 0), 0});
        }
        if (::poll(p.data(), p.size(), 5000) <= 0) die("poll");
        for (std::size_t k = 0; k < n; ++k) {
            if (p[3 * k + 1].revents & POLLIN) {
                read_reply(nodes[k].subscriber);
                messaged[k] = true;
                if (++messages == quorum) {
                    if (how == style::handed_over) {
                        latency = now_us();
                    } else {
                        for (const auto& s : nodes)
                            send_all(s.waiter,
                                     command({"SET", key, waiter_token, "NX", "PX", "10000", "GET"}));
                        sent = true;
                    }
                }
            }
            if (p[3 * k + 2].revents & POLLIN) {
                // SET NX GET answers nil when it set the key; a node whose release has not run yet
                // refuses (only the messaged ones are sure to grant).
                const bool granted = read_reply(nodes[k].waiter).rfind("$-1", 0) == 0;
                answered[k] = true;
                if (granted && ++grants == quorum) latency = now_us();
            }
            if (p[3 * k].revents & POLLIN) {
                read_reply(nodes[k].holder);
                released[k] = true;
            }
        }
    }
    for (const auto& s : nodes)
        send_all(s.waiter, command({"DEL", key}));
    for (const auto& s : nodes)
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

// "$40\r\n<sha>\r\n" from SCRIPT LOAD on every node (the same on all: it is the SHA1).
std::string load(const std::vector<node_sockets>& nodes, const char* script) {
    std::string sha;
    for (const auto& s : nodes) {
        send_all(s.holder, command({"SCRIPT", "LOAD", script}));
        const auto loaded = read_reply(s.holder);
        const auto start = loaded.find("\r\n");
        if (loaded.empty() || loaded[0] != '$' || start == std::string::npos || loaded.size() < start + 42) {
            std::fprintf(stderr, "handoff_floor: SCRIPT LOAD answered %s\n", loaded.c_str());
            std::exit(1);
        }
        sha = loaded.substr(start + 2, 40);
    }
    return sha;
}

}  // namespace

int main(int argc, char** argv) {
    bare::program = "handoff_floor";
    std::vector<int> ports;
    int iterations = 2000;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if ((a == "--ports" || a == "--port") && i + 1 < argc) {
            ports = bare::parse_ports(argv[++i]);
        } else if (a == "--iterations" && i + 1 < argc) {
            iterations = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: handoff_floor --ports P1[,P2,...] [--iterations K]\n");
            return 2;
        }
    }
    const bool ports_ok =
        !ports.empty() && std::all_of(ports.begin(), ports.end(), [](int p) { return p > 0 && p <= 65535; });
    if (!ports_ok || iterations < 10 || iterations > 1000000) {
        std::fprintf(stderr, "handoff_floor: give ports and 10 to 1000000 iterations\n");
        return 2;
    }
    std::vector<node_sockets> nodes;
    for (int port : ports)
        nodes.push_back({bare::connect_to(port), bare::connect_to(port), bare::connect_to(port)});
    const std::string release_sha = load(nodes, release_script);
    const std::string hand_over_sha = load(nodes, hand_over_script);
    for (const auto& s : nodes) {
        send_all(s.subscriber, command({"SSUBSCRIBE", "floor:released"}));
        read_reply(s.subscriber);
    }

    constexpr auto idle = std::chrono::milliseconds(2);
    const auto idle_runs = std::max(10, iterations / 4);  // 2 ms each
    auto hot = run(iterations, [&](int i) { return handoff(nodes, release_sha, style::waiter_sets, i, {}); });
    auto cold =
        run(idle_runs, [&](int i) { return handoff(nodes, release_sha, style::waiter_sets, i, idle); });
    auto handed =
        run(iterations, [&](int i) { return handoff(nodes, hand_over_sha, style::handed_over, i, {}); });
    auto handed_cold =
        run(idle_runs, [&](int i) { return handoff(nodes, hand_over_sha, style::handed_over, i, idle); });
    auto ping_hot = run(iterations, [&](int) { return ping(nodes.front().holder, {}); });
    auto ping_cold = run(idle_runs, [&](int) { return ping(nodes.front().holder, idle); });
    std::printf(
        "{\"nodes\": %zu, \"iterations\": %d, \"handoff_hot_p50_us\": %.1f, \"handoff_hot_p99_us\": %.1f, "
        "\"handoff_idle_p50_us\": %.1f, \"handoff_idle_p99_us\": %.1f, \"handed_over_hot_p50_us\": %.1f, "
        "\"handed_over_hot_p99_us\": %.1f, \"handed_over_idle_p50_us\": %.1f, \"ping_hot_p50_us\": %.1f, "
        "\"ping_idle_p50_us\": %.1f, \"hand_over_sha\": \"%s\"}\n",
        nodes.size(), iterations, quantile(hot, 0.5), quantile(hot, 0.99), quantile(cold, 0.5),
        quantile(cold, 0.99), quantile(handed, 0.5), quantile(handed, 0.99), quantile(handed_cold, 0.5),
        quantile(ping_hot, 0.5), quantile(ping_cold, 0.5), hand_over_sha.c_str());
    for (const auto& s : nodes) {
        ::close(s.holder);
        ::close(s.waiter);
        ::close(s.subscriber);
    }
    return 0;
}
