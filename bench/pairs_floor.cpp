// SPDX-License-Identifier: BSL-1.0
// The floor of lock pairs on this machine: what a client that does nothing but the lock's
// commands can get through one master or a cluster's masters, with C workers each looping
// SET <key> <token> NX PX 10000 GET, then the release script (GET, DEL, SPUBLISH), as lock_bench's
// workers do. One non-blocking socket per server; every reply read in one turn of the loop moves
// its worker on, and then each socket gets one write with everything queued for it: the most
// coalescing a pipelining client can do. No library of ours is used.
//
//   pairs_floor --ports P[,P...] [--concurrency C] [--seconds S]
//
// With several ports (a cluster's masters) each worker's next pair goes to the next master, its
// key hash-tagged for that master's slots (found by probing). Prints one JSON line:
// {"servers": N, "concurrency": C, "seconds": s, "pairs": n, "pairs_per_s": r,
//  "client_cpu_us_per_pair": u} (u: this process's CPU, getrusage, over the run, per pair).
#include "bare_socket.hpp"
#include "process_cpu.hpp"

#include <chrono>
#include <deque>
#include <string_view>

#include <fcntl.h>
#include <sys/epoll.h>

namespace {

constexpr std::string_view release_lua =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) "
    "redis.call('SPUBLISH', KEYS[2], ARGV[1]) return 1 end return 0";

// Pieces joined by appending (g++ 12 warns falsely on chains of operator+ here).
std::string cat(std::initializer_list<std::string_view> pieces) {
    std::string out;
    for (auto p : pieces)
        out += p;
    return out;
}

std::string command(std::initializer_list<std::string_view> words) {
    std::string out = cat({"*", std::to_string(words.size()), "\r\n"});
    for (auto w : words)
        out += cat({"$", std::to_string(w.size()), "\r\n", w, "\r\n"});
    return out;
}

// Reads one whole reply from a blocking socket (the set-up's exchanges only).
std::string read_line_reply(int fd) {
    std::string got;
    char c;
    while (::read(fd, &c, 1) == 1) {
        got += c;
        if (got.size() >= 2 && got.ends_with("\r\n")) {
            if (got[0] != '$' || got == "$-1\r\n") return got;
            const auto len = std::stoul(got.substr(1));
            std::string body(len + 2, '\0');
            std::size_t have = 0;
            while (have < body.size()) {
                const auto n = ::read(fd, body.data() + have, body.size() - have);
                if (n <= 0) bare::die("read");
                have += static_cast<std::size_t>(n);
            }
            return got.append(body);
        }
    }
    bare::die("read");
}

// Length of the first complete simple reply (+, -, :, or a bulk string) in `in`; 0 if none yet.
std::size_t reply_length(std::string_view in) {
    const auto eol = in.find("\r\n");
    if (eol == std::string_view::npos) return 0;
    if (in[0] != '$' || in[1] == '-') return eol + 2;
    const auto len = std::stoul(std::string(in.substr(1, eol - 1)));
    return in.size() >= eol + 2 + len + 2 ? eol + 2 + len + 2 : 0;
}

struct server {
    int fd = -1;
    std::string tag;               // a hash tag whose slot this server owns
    std::string sha;               // the release script's
    std::string in, out;           // unparsed replies; commands not written yet
    std::deque<std::size_t> owed;  // workers whose replies come next, in order
};

struct worker {
    std::size_t server = 0;
    bool releasing = false;
    std::uint64_t n = 0;
    std::string key;
};

}  // namespace

int main(int argc, char** argv) {
    bare::program = "pairs_floor";
    std::vector<int> ports;
    int concurrency = 50;
    double seconds = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string_view a = argv[i];
        if (a == "--ports")
            ports = bare::parse_ports(argv[i + 1]);
        else if (a == "--concurrency")
            concurrency = std::atoi(argv[i + 1]);
        else if (a == "--seconds")
            seconds = std::atof(argv[i + 1]);
    }
    bool bad = ports.empty() || concurrency < 1 || concurrency > 10000 || !(seconds > 0 && seconds <= 3600);
    for (int p : ports)
        bad = bad || p <= 0 || p > 65535;
    if (bad) {
        std::fprintf(stderr, "usage: pairs_floor --ports P[,P...] [--concurrency C] [--seconds S]\n");
        return 2;
    }

    std::vector<server> servers(ports.size());
    for (std::size_t s = 0; s < servers.size(); ++s) {
        auto& sv = servers[s];
        sv.fd = bare::connect_to(ports[s]);
        bare::send_all(sv.fd, command({"SCRIPT", "LOAD", release_lua}));
        const auto sha = read_line_reply(sv.fd);
        sv.sha = sha.substr(sha.find("\r\n") + 2, 40);
        // A tag of a slot this server owns: the one that writes a probe key instead of MOVED.
        for (int t = 0; sv.tag.empty() && t < 100000; ++t) {
            const std::string tag = cat({"f", std::to_string(t)});
            bare::send_all(sv.fd, command({"SET", cat({"{", tag, "}:probe"}), "1", "PX", "1000"}));
            if (read_line_reply(sv.fd).starts_with("+OK")) sv.tag = tag;
        }
        if (sv.tag.empty()) bare::die(cat({"no hash tag found for port ", std::to_string(ports[s])}));
        ::fcntl(sv.fd, F_SETFL, ::fcntl(sv.fd, F_GETFL) | O_NONBLOCK);
    }

    const int ep = ::epoll_create1(0);
    for (std::size_t s = 0; s < servers.size(); ++s) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = s;
        if (::epoll_ctl(ep, EPOLL_CTL_ADD, servers[s].fd, &ev) != 0) bare::die("epoll_ctl");
    }

    std::vector<worker> workers(static_cast<std::size_t>(concurrency));
    auto send_set = [&](std::size_t w) {
        auto& wk = workers[w];
        auto& sv = servers[wk.server];
        wk.key = cat({"{", sv.tag, "}:", std::to_string(w), ":", std::to_string(wk.n++)});
        wk.releasing = false;
        sv.out += command({"SET", wk.key, "tok", "NX", "PX", "10000", "GET"});
        sv.owed.push_back(w);
    };
    auto send_release = [&](std::size_t w) {
        auto& wk = workers[w];
        auto& sv = servers[wk.server];
        wk.releasing = true;
        sv.out += command({"EVALSHA", sv.sha, "2", wk.key, cat({"{", sv.tag, "}:released"}), "tok"});
        sv.owed.push_back(w);
    };
    for (std::size_t w = 0; w < workers.size(); ++w) {
        workers[w].server = w % servers.size();
        send_set(w);
    }

    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const double cpu_at_start = bench::process_cpu_seconds();
    const auto until =
        start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
    std::uint64_t pairs = 0;
    std::size_t active = workers.size();
    std::vector<epoll_event> events(servers.size());
    char buf[65536];
    while (active > 0) {
        for (auto& sv : servers) {
            std::size_t done = 0;
            while (done < sv.out.size()) {
                const auto n = ::write(sv.fd, sv.out.data() + done, sv.out.size() - done);
                if (n < 0 && errno == EAGAIN) continue;  // loopback: the kernel drains it at once
                if (n <= 0) bare::die("write");
                done += static_cast<std::size_t>(n);
            }
            sv.out.clear();
        }
        const int ready = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), 5000);
        if (ready <= 0) bare::die("epoll_wait");
        const bool stopping = clock::now() >= until;
        for (int e = 0; e < ready; ++e) {
            auto& sv = servers[events[static_cast<std::size_t>(e)].data.u64];
            const auto n = ::read(sv.fd, buf, sizeof buf);
            if (n <= 0) bare::die("read");
            sv.in.append(buf, static_cast<std::size_t>(n));
            std::size_t used = 0;
            while (const auto len = reply_length(std::string_view(sv.in).substr(used))) {
                if (sv.in[used] == '-') bare::die(cat({"error reply ", sv.in.substr(used, len)}));
                used += len;
                const auto w = sv.owed.front();
                sv.owed.pop_front();
                if (!workers[w].releasing) {
                    send_release(w);
                    continue;
                }
                ++pairs;
                if (stopping) {
                    --active;
                    continue;
                }
                workers[w].server = (workers[w].server + 1) % servers.size();
                send_set(w);
            }
            sv.in.erase(0, used);
        }
    }
    const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
    const double cpu = bench::process_cpu_seconds() - cpu_at_start;
    std::printf(
        "{\"servers\": %zu, \"concurrency\": %d, \"seconds\": %.3f, \"pairs\": %llu, \"pairs_per_s\": "
        "%.0f, \"client_cpu_us_per_pair\": %.2f}\n",
        servers.size(), concurrency, elapsed, static_cast<unsigned long long>(pairs),
        static_cast<double>(pairs) / elapsed, pairs > 0 ? cpu * 1e6 / static_cast<double>(pairs) : 0.0);
    return 0;
}
