// SPDX-License-Identifier: BSL-1.0
#include "redis_cluster.hpp"

#include "support/fixture_commands.hpp"
#include "support/unique_fd.hpp"
#include <redlock/resp/value.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace redlock::test {
namespace {

using fixture::address;
using fixture::arg_value;
using fixture::describe;
using fixture::expect_ok;
using fixture::has_arg;
using fixture::info_field;

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

constexpr std::uint16_t slot_count = 16384;
constexpr auto startup_limit = 20s;         // slots assigned -> cluster ok and replicas linked
constexpr auto redis_cli_limit = 30s;       // `redis-cli --cluster create`, killed beyond
constexpr auto migrate_limit = 30s;         // migrate_slot_keys()
constexpr auto failover_limit = 20s;        // failover()
constexpr auto failover_retry = 6s;         // a manual failover gives up after 5 s (CLUSTER_MF_TIMEOUT)
constexpr auto poll_interval = 25ms;        // between two looks at the servers
constexpr auto probe_timeout = 2s;          // one command while polling: a paused server must not stall us
constexpr std::size_t migrate_batch = 100;  // keys per MIGRATE, as redis-cli's --cluster-pipeline default

// The next loopback address of redis_cluster_options::partitionable: 127.0.0.2 to
// 127.0.0.254, then again (an address names no server: the ports do).
std::string own_loopback_host() {
    static std::atomic<unsigned> next{0};
    return "127.0.0." + std::to_string(2 + next.fetch_add(1) % 253);
}

// ---------------------------------------------------------------------------------------------
// CLUSTER SLOTS, reduced to what the fixture compares: which master port owns which range.

struct slot_range {
    std::uint16_t first = 0;
    std::uint16_t last = 0;
    unsigned short master_port = 0;
    friend bool operator==(const slot_range&, const slot_range&) = default;
};

// Sorted, with adjacent ranges of one master merged. Throws on a reply of another shape.
std::vector<slot_range> parse_cluster_slots(const resp::value& reply, const redis_server& from) {
    const auto bad = [&]() {
        return std::runtime_error("redis_cluster: CLUSTER SLOTS on " + address(from) +
                                  ": unexpected reply: " + resp::to_string(reply));
    };
    if (reply.kind != resp::type::array) throw bad();
    std::vector<slot_range> ranges;
    for (const auto& entry : reply.elements) {
        // [first, last, [ip, port, id, ...] (master), [ip, port, id, ...] (replica), ...]
        if (entry.elements.size() < 3 || entry.elements[0].kind != resp::type::integer ||
            entry.elements[1].kind != resp::type::integer || entry.elements[2].elements.size() < 2 ||
            entry.elements[2].elements[1].kind != resp::type::integer)
            throw bad();
        ranges.push_back({static_cast<std::uint16_t>(entry.elements[0].integer),
                          static_cast<std::uint16_t>(entry.elements[1].integer),
                          static_cast<unsigned short>(entry.elements[2].elements[1].integer)});
    }
    std::sort(ranges.begin(), ranges.end(),
              [](const slot_range& a, const slot_range& b) { return a.first < b.first; });
    std::vector<slot_range> merged;
    for (const auto& r : ranges) {
        if (!merged.empty() && merged.back().master_port == r.master_port &&
            merged.back().last + 1 == r.first) {
            merged.back().last = r.last;
        } else {
            merged.push_back(r);
        }
    }
    return merged;
}

// Empty if the ranges cover 0..16383 without holes; else the first hole.
std::string coverage_hole(const std::vector<slot_range>& ranges) {
    std::uint32_t next = 0;
    for (const auto& r : ranges) {
        if (r.first != next) return "slot " + std::to_string(next) + " not covered";
        next = std::uint32_t{r.last} + 1;
    }
    if (next != slot_count) return "slot " + std::to_string(next) + " not covered";
    return {};
}

std::string to_text(const std::vector<slot_range>& ranges) {
    std::string text;
    for (const auto& r : ranges) {
        text += (text.empty() ? "" : " ") + std::to_string(r.first) + "-" + std::to_string(r.last) + "@" +
                std::to_string(r.master_port);
    }
    return text.empty() ? "(no slots)" : text;
}

// ROLE: ["master", offset, [...]] or ["slave", ip, port, state, offset].
struct role_info {
    std::string role;
    unsigned short master_port = 0;  // replicas only
    std::string state;               // replicas only: connect, connecting, sync, connected
};

role_info role_of(const redis_server& s, std::chrono::milliseconds timeout = probe_timeout) {
    const auto reply = s.command({"ROLE"}, timeout);
    role_info info;
    if (reply.kind != resp::type::array || reply.elements.empty()) {
        throw std::runtime_error("redis_cluster: ROLE on " + address(s) + ": " + resp::to_string(reply));
    }
    info.role = reply.elements[0].str;
    if (info.role == "slave" && reply.elements.size() >= 4) {
        info.master_port = static_cast<unsigned short>(reply.elements[2].integer);
        info.state = reply.elements[3].str;
    }
    return info;
}

// One line of CLUSTER NODES: <id> <ip:port@cport> <flags> <master> <ping-sent> <pong-recv>
// <config-epoch> <link-state> <slot>...
std::vector<std::string> node_fields(const std::string& line) {
    std::istringstream fields(line);
    return {std::istream_iterator<std::string>(fields), std::istream_iterator<std::string>()};
}

// Whether `observer`'s CLUSTER NODES shows node `replica_id` as a replica of `master_id`.
bool sees_as_replica(const redis_server& observer, const std::string& replica_id,
                     const std::string& master_id) {
    std::istringstream lines(observer.command({"CLUSTER", "NODES"}, probe_timeout).str);
    for (std::string line; std::getline(lines, line);) {
        const auto f = node_fields(line);
        if (f.size() >= 4 && f[0] == replica_id) {
            return f[2].find("slave") != std::string::npos && f[3] == master_id;
        }
    }
    return false;
}

// ---------------------------------------------------------------------------------------------
// redis-cli as a child process, its stdout and stderr captured, killed by PID when it overruns.

// Kills and reaps the child unless it was reaped: no path out of run_captured leaves it running.
class child_guard {
public:
    explicit child_guard(pid_t pid) noexcept : pid_(pid) {}
    child_guard(const child_guard&) = delete;
    child_guard& operator=(const child_guard&) = delete;
    ~child_guard() { kill_and_reap(); }
    // Returns the wait status once the child has exited, nothing while it runs.
    std::optional<int> try_reap() noexcept {
        int status = 0;
        pid_t r;
        do {
            r = ::waitpid(pid_, &status, WNOHANG);
        } while (r < 0 && errno == EINTR);
        if (r == 0) return std::nullopt;
        pid_ = -1;
        return r < 0 ? -1 : status;
    }
    void kill_and_reap() noexcept {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGKILL);
        while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
    }

private:
    pid_t pid_;
};

struct captured_run {
    bool overran = false;
    int status = -1;  // wait status
    std::string output;
};

std::string describe_status(const captured_run& run) {
    if (run.overran) return "killed after overrunning its time limit";
    if (WIFEXITED(run.status)) return "exited with status " + std::to_string(WEXITSTATUS(run.status));
    if (WIFSIGNALED(run.status)) return "killed by signal " + std::to_string(WTERMSIG(run.status));
    return "ended with wait status " + std::to_string(run.status);
}

// Runs args[0] (searched in PATH) with stdin from /dev/null, stdout and stderr into one pipe.
captured_run run_captured(std::vector<std::string> args, std::chrono::milliseconds limit) {
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
    unique_fd out_read(fds[0]);
    unique_fd out_write(above_stdio(fds[1]));
    unique_fd devnull(above_stdio(::open("/dev/null", O_RDONLY | O_CLOEXEC)));
    if (out_write.get() < 0 || devnull.get() < 0)
        throw std::runtime_error(std::string("open/fcntl: ") + std::strerror(errno));

    // As in redis_server: no signal handler of ours may run in the child before exec, and
    // between fork() and exec() only async-signal-safe calls (other threads may hold locks).
    sigset_t all, old;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, &old);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
        // Dies with the test process, even on SIGKILL.
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
        for (int sig = 1; sig < NSIG; ++sig) {
            if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
        }
        sigset_t none;
        ::sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        if (::dup2(devnull.get(), 0) < 0 || ::dup2(out_write.get(), 1) < 0 || ::dup2(out_write.get(), 2) < 0)
            ::_exit(127);
        ::close_range(3, ~0u, 0);  // the rest is CLOEXEC anyway
        ::execvp(argv[0], argv.data());
        constexpr std::string_view msg = "exec failed: not found or not executable\n";
        [[maybe_unused]] auto n = ::write(2, msg.data(), msg.size());
        ::_exit(127);
    }
    const int fork_errno = errno;
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(fork_errno));
    child_guard child(pid);
    out_write.reset();

    captured_run run;
    const auto deadline = steady::now() + limit;
    bool eof = false;
    std::array<char, 4096> buf;
    while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
        if (left.count() <= 0) {
            child.kill_and_reap();
            run.overran = true;
            return run;
        }
        if (eof) {
            // The output is closed; the process is about to exit.
            if (auto status = child.try_reap()) {
                run.status = *status;
                return run;
            }
            std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(left, 10ms));
            continue;
        }
        pollfd p{out_read.get(), POLLIN, 0};
        const int ready =
            ::poll(&p, 1, static_cast<int>(std::min<std::chrono::milliseconds>(left, 100ms).count()));
        if (ready < 0 && errno != EINTR)
            throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
        if (ready <= 0) continue;
        const auto n = ::read(out_read.get(), buf.data(), buf.size());
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            throw std::runtime_error(std::string("read: ") + std::strerror(errno));
        }
        if (n == 0) {
            eof = true;
        } else {
            run.output.append(buf.data(), static_cast<std::size_t>(n));
        }
    }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

redis_cluster::redis_cluster(redis_cluster_options opts) : opts_(std::move(opts)) {
    if (opts_.masters == 0) throw std::invalid_argument("redis_cluster: masters must be at least 1");
    auto& server_opts = opts_.server;
    server_opts.cluster = true;
    auto& extra = server_opts.extra_args;
    // partitionable: its replicas log in as a user of their own (start_partitionable).
    if (const auto pw = arg_value(extra, "--requirepass");
        pw && !has_arg(extra, "--masterauth") && !opts_.partitionable) {
        extra.insert(extra.end(), {"--masterauth", *pw});
    }
    // A master waits this long (5 s by default) for more replicas before a diskless full sync:
    // every replica's first sync would wait for it.
    if (!has_arg(extra, "--repl-diskless-sync-delay"))
        extra.insert(extra.end(), {"--repl-diskless-sync-delay", "0"});
    // Nodes learn each other's roles from direct pings, and a node pings each peer at least every
    // cluster-node-timeout / 2: with the default 15 s a fresh 6-node cluster took 8-11 s to
    // agree on its replicas here, with 5 s it takes under 5 s. It is also how long a dead or
    // paused master goes unnoticed before its replica takes over.
    if (!has_arg(extra, "--cluster-node-timeout"))
        extra.insert(extra.end(), {"--cluster-node-timeout", "5000"});

    // If anything below throws, servers_ is destroyed with the half-built object: every server
    // already started is stopped (start_redis_servers itself cleans up after a failed start).
    if (opts_.partitionable) {
        start_partitionable();
    } else {
        servers_ = start_redis_servers(opts_.masters * (1 + opts_.replicas_per_master), server_opts);
    }
    if (opts_.masters >= 3) {
        create_with_redis_cli();
    } else {
        create_by_hand();
    }
    const auto deadline = steady::now() + startup_limit;
    wait_until_ok(startup_limit);
    wait_until_formed(deadline, true);
    wait_until_replicas_linked(deadline);
}

redis_cluster::~redis_cluster() = default;

void redis_cluster::start_partitionable() {
    const auto n = opts_.masters * (1 + opts_.replicas_per_master);
    for (std::size_t i = 0; i < n; ++i) {
        auto o = opts_.server;
        o.host = own_loopback_host();
        // The others must be told the proxy's port before the server's own bus port is picked:
        // the proxy learns where to forward once the server runs, before anyone meets it.
        auto proxy = std::make_unique<tcp_proxy>(o.host, 0);
        // Announced, the address and the bus port are what every node's packets carry, so the
        // others know it by them and not by where its connections come from (the proxy).
        o.extra_args.insert(
            o.extra_args.end(),
            {"--cluster-announce-ip", o.host, "--cluster-announce-bus-port", std::to_string(proxy->port())});
        fixture::add_own_users(o.extra_args, {replication_user}, replication_user);
        servers_.push_back(std::make_unique<redis_server>(o));
        proxy->set_upstream_port(servers_.back()->cluster_port());
        bus_proxies_.push_back(std::move(proxy));
    }
}

std::size_t redis_cluster::index_of(const redis_server& server) const {
    for (std::size_t i = 0; i < servers_.size(); ++i)
        if (servers_[i].get() == &server) return i;
    throw std::invalid_argument("redis_cluster: " + address(server) + " is not a server of this cluster");
}

unsigned short redis_cluster::bus_port(std::size_t i) const {
    return opts_.partitionable ? bus_proxies_.at(i)->port() : servers_.at(i)->cluster_port();
}

void redis_cluster::cut_off(redis_server& server) {
    if (!opts_.partitionable) throw std::logic_error("redis_cluster::cut_off: needs partitionable");
    if (cut_off_) {
        throw std::logic_error("redis_cluster::cut_off: " + address(*servers_[*cut_off_]) +
                               " is cut off already");
    }
    const auto i = index_of(server);
    std::vector<std::string> others;
    for (std::size_t j = 0; j < servers_.size(); ++j) {
        if (j == i) continue;
        others.push_back(servers_[j]->host());
        bus_proxies_[j]->cut_clients_from({server.host()});
    }
    bus_proxies_[i]->cut_clients_from(others);
    cut_off_ = i;
    fixture::delete_own_users("redis_cluster", server, {replication_user});
}

void redis_cluster::rejoin(redis_server& server) {
    if (!opts_.partitionable) throw std::logic_error("redis_cluster::rejoin: needs partitionable");
    if (cut_off_ != index_of(server))
        throw std::logic_error("redis_cluster::rejoin: " + address(server) + " is not cut off");
    // The user first: the bus tells the server of the failover, and its replicas (or it, a
    // replica from now on) log in at once.
    cut_off_.reset();
    std::exception_ptr failed;
    try {
        fixture::define_own_user("redis_cluster", server, replication_user);
    } catch (...) {
        failed = std::current_exception();  // not answering: its restart defines the user again
    }
    for (auto& proxy : bus_proxies_)
        proxy->cut_clients_from({});
    if (failed) std::rethrow_exception(failed);
}

void redis_cluster::create_with_redis_cli() {
    const char* env = std::getenv("REDLOCK_TEST_REDIS_CLI");
    std::vector<std::string> args{(env != nullptr && *env != '\0') ? env : "redis-cli", "--cluster",
                                  "create"};
    for (const auto& s : servers_)
        args.push_back(address(*s));
    args.insert(args.end(),
                {"--cluster-replicas", std::to_string(opts_.replicas_per_master), "--cluster-yes"});
    if (const auto pw = arg_value(opts_.server.extra_args, "--requirepass")) {
        args.insert(args.end(), {"-a", *pw, "--no-auth-warning"});
    }
    const auto run = run_captured(args, redis_cli_limit);
    if (run.overran || !WIFEXITED(run.status) || WEXITSTATUS(run.status) != 0) {
        std::string command;
        for (const auto& a : args)
            command += (command.empty() ? "" : " ") + a;
        throw std::runtime_error("redis_cluster: `" + command + "` " + describe_status(run) + ":\n" +
                                 run.output);
    }
}

// redis-cli refuses fewer than 3 masters; this is what it would do: distinct config epochs,
// slots split evenly among the masters, MEET, then REPLICATE once every node knows every other.
void redis_cluster::create_by_hand() {
    const auto n = servers_.size();
    for (std::size_t i = 0; i < n; ++i)
        expect_ok("redis_cluster", *servers_[i], {"CLUSTER", "SET-CONFIG-EPOCH", std::to_string(i + 1)});
    for (std::size_t i = 0; i < opts_.masters; ++i) {
        const auto first = slot_count * i / opts_.masters;
        const auto last = slot_count * (i + 1) / opts_.masters - 1;
        expect_ok("redis_cluster", *servers_[i],
                  {"CLUSTER", "ADDSLOTSRANGE", std::to_string(first), std::to_string(last)});
    }
    for (std::size_t i = 1; i < n; ++i) {
        expect_ok("redis_cluster", *servers_[0],
                  {"CLUSTER", "MEET", servers_[i]->host(), std::to_string(servers_[i]->port()),
                   std::to_string(bus_port(i))});
    }

    // REPLICATE names a node the replica must already know.
    wait_until_formed(steady::now() + startup_limit, false);

    for (std::size_t i = opts_.masters; i < n; ++i) {
        auto& master = *servers_[(i - opts_.masters) % opts_.masters];
        expect_ok("redis_cluster", *servers_[i], {"CLUSTER", "REPLICATE", node_id(master)});
    }
}

// Every live node lists every node, none in handshake, without address or with its bus link
// down; with `replicas_assigned`, every node also sees each master with all its replicas (the
// gossip that spreads a replica's role may lag behind cluster_state:ok).
//
// Not CLUSTER SLOTS for the replicas: Redis 7 leaves a replica out of it until the node has
// heard from that replica itself that its replication offset is not 0, which on an idle cluster
// takes up to cluster-node-timeout / 2 (7.5 s by default) after the sync.
void redis_cluster::wait_until_formed(steady::time_point deadline, bool replicas_assigned) {
    const auto n = servers_.size();
    while (true) {
        std::string pending;
        for (const auto& s : servers_) {
            if (!s->running()) continue;
            const auto nodes = s->command({"CLUSTER", "NODES"}, probe_timeout).str;
            std::size_t known = 0;
            bool unsettled = false;
            std::map<std::string, std::size_t> replicas_of;  // master id -> replicas
            std::istringstream lines(nodes);
            for (std::string line; std::getline(lines, line);) {
                if (line.empty()) continue;
                ++known;
                const auto f = node_fields(line);
                if (f.size() < 8 || f[2].find("handshake") != std::string::npos ||
                    f[2].find("noaddr") != std::string::npos || f[7] != "connected") {
                    unsettled = true;
                } else if (f[2].find("master") != std::string::npos) {
                    replicas_of.try_emplace(f[0], 0);
                } else if (f[2].find("slave") != std::string::npos) {
                    ++replicas_of[f[3]];
                }
            }
            if (known != n || unsettled) {
                pending = address(*s) + " knows " + std::to_string(known) + " of " + std::to_string(n) +
                          " nodes:\n" + nodes;
                break;
            }
            if (!replicas_assigned) continue;
            const bool complete = replicas_of.size() == opts_.masters &&
                                  std::all_of(replicas_of.begin(), replicas_of.end(), [&](const auto& m) {
                                      return m.second == opts_.replicas_per_master;
                                  });
            if (!complete) {
                pending = address(*s) + " does not see every master with its replicas:\n" + nodes;
                break;
            }
        }
        if (pending.empty()) return;
        if (steady::now() >= deadline)
            throw std::runtime_error("redis_cluster: the cluster did not form: " + pending);
        std::this_thread::sleep_for(poll_interval);
    }
}

void redis_cluster::wait_until_replicas_linked(steady::time_point deadline) {
    while (true) {
        std::string pending;
        for (const auto& s : servers_) {
            if (!s->running()) continue;
            const auto info = s->command({"INFO", "replication"}, probe_timeout).str;
            if (info_field(info, "role") == "slave" && info_field(info, "master_link_status") != "up") {
                pending = address(*s) + ": " + info;
                break;
            }
        }
        if (pending.empty()) return;
        if (steady::now() >= deadline) {
            throw std::runtime_error("redis_cluster: a replica's link to its master is not up: " + pending);
        }
        std::this_thread::sleep_for(poll_interval);
    }
}

redis_server& redis_cluster::server(std::size_t i) {
    if (i >= servers_.size())
        throw std::out_of_range("redis_cluster::server: no server " + std::to_string(i));
    return *servers_[i];
}

std::string redis_cluster::seeds() const {
    return fixture::addresses(servers_);
}

std::string redis_cluster::uri() const {
    return "redis-cluster://" + seeds();
}

redis_server& redis_cluster::server_on_port(unsigned short port) {
    for (const auto& s : servers_) {
        if (s->port() == port) return *s;
    }
    throw std::runtime_error("redis_cluster: no server of ours on port " + std::to_string(port));
}

redis_server& redis_cluster::master_of_slot(std::uint16_t slot) {
    if (slot >= slot_count) throw std::invalid_argument("redis_cluster: no slot " + std::to_string(slot));
    for (const auto& s : servers_) {
        if (!s->running()) continue;
        for (const auto& r : parse_cluster_slots(s->command({"CLUSTER", "SLOTS"}), *s)) {
            if (r.first <= slot && slot <= r.last) return server_on_port(r.master_port);
        }
        throw std::runtime_error("redis_cluster: slot " + std::to_string(slot) + " has no master on " +
                                 address(*s));
    }
    throw std::runtime_error("redis_cluster: no server is running");
}

std::vector<redis_server*> redis_cluster::masters() {
    std::vector<redis_server*> out;
    for (const auto& s : servers_) {
        if (s->running() && role_of(*s).role == "master") out.push_back(s.get());
    }
    return out;
}

std::string redis_cluster::node_id(redis_server& s) const {
    const auto reply = s.command({"CLUSTER", "MYID"});
    if (!reply.is_string() || reply.is_error() || reply.str.empty()) {
        throw std::runtime_error("redis_cluster: CLUSTER MYID on " + address(s) + ": " +
                                 resp::to_string(reply));
    }
    return reply.str;
}

void redis_cluster::begin_slot_migration(std::uint16_t slot, redis_server& to) {
    if (migrations_.contains(slot)) {
        throw std::invalid_argument("redis_cluster: slot " + std::to_string(slot) + " is already migrating");
    }
    auto& from = master_of_slot(slot);
    if (&from == &to) {
        throw std::invalid_argument("redis_cluster: slot " + std::to_string(slot) + " is already on " +
                                    address(to));
    }
    const auto s = std::to_string(slot);
    // Importing first, as redis-cli does: once the source says MIGRATING it sends ASK, and the
    // target must then accept ASKING requests for the slot.
    expect_ok("redis_cluster", to, {"CLUSTER", "SETSLOT", s, "IMPORTING", node_id(from)});
    try {
        expect_ok("redis_cluster", from, {"CLUSTER", "SETSLOT", s, "MIGRATING", node_id(to)});
    } catch (...) {
        try {
            to.command({"CLUSTER", "SETSLOT", s, "STABLE"});
        } catch (...) {
            // The first error is the one to report.
        }
        throw;
    }
    migrations_[slot] = {&from, &to};
}

void redis_cluster::migrate_slot_keys(std::uint16_t slot) {
    const auto it = migrations_.find(slot);
    if (it == migrations_.end()) {
        throw std::invalid_argument("redis_cluster: slot " + std::to_string(slot) + " is not migrating");
    }
    const auto& from = *it->second.from;
    const auto& to = *it->second.to;
    const auto password = arg_value(opts_.server.extra_args, "--requirepass");
    const auto deadline = steady::now() + migrate_limit;
    while (true) {
        const auto keys =
            from.command({"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), std::to_string(migrate_batch)});
        if (keys.kind != resp::type::array) {
            throw std::runtime_error("redis_cluster: CLUSTER GETKEYSINSLOT on " + address(from) + ": " +
                                     resp::to_string(keys));
        }
        if (keys.elements.empty()) return;
        if (steady::now() >= deadline) {
            throw std::runtime_error("redis_cluster: slot " + std::to_string(slot) + " still has keys on " +
                                     address(from) + " after " + std::to_string(migrate_limit.count()) +
                                     " s");
        }
        // MIGRATE host port "" db timeout-ms [AUTH pw] KEYS k...: the empty key selects KEYS.
        std::vector<std::string> args{"MIGRATE", to.host(), std::to_string(to.port()), "", "0", "5000"};
        if (password) args.insert(args.end(), {"AUTH", *password});
        args.emplace_back("KEYS");
        for (const auto& k : keys.elements)
            args.push_back(k.str);
        const auto reply = from.command(args, 15s);
        // NOKEY: the keys expired between GETKEYSINSLOT and MIGRATE.
        if (reply.kind != resp::type::simple_string || (reply.str != "OK" && reply.str != "NOKEY")) {
            throw std::runtime_error("redis_cluster: MIGRATE of slot " + std::to_string(slot) + " from " +
                                     address(from) + " to " + address(to) + ": " + resp::to_string(reply));
        }
    }
}

void redis_cluster::finish_slot_migration(std::uint16_t slot) {
    const auto it = migrations_.find(slot);
    if (it == migrations_.end()) {
        throw std::invalid_argument("redis_cluster: slot " + std::to_string(slot) + " is not migrating");
    }
    auto& from = *it->second.from;
    auto& to = *it->second.to;
    const auto s = std::to_string(slot);
    const auto to_id = node_id(to);
    // The target first: it bumps its config epoch and so wins any later conflict (the order
    // the Redis cluster spec recommends); then the source, which stops sending ASK; then every
    // other master (SETSLOT is refused by replicas: they learn it by gossip).
    expect_ok("redis_cluster", to, {"CLUSTER", "SETSLOT", s, "NODE", to_id});
    expect_ok("redis_cluster", from, {"CLUSTER", "SETSLOT", s, "NODE", to_id});
    for (auto* m : masters()) {
        if (m != &from && m != &to) expect_ok("redis_cluster", *m, {"CLUSTER", "SETSLOT", s, "NODE", to_id});
    }
    migrations_.erase(it);
}

void redis_cluster::announce_hostname(const std::string& hostname) {
    for (const auto& s : servers_) {
        if (!s->running()) continue;
        expect_ok("redis_cluster", *s, {"CONFIG", "SET", "cluster-announce-hostname", hostname});
        expect_ok("redis_cluster", *s, {"CONFIG", "SET", "cluster-preferred-endpoint-type", "hostname"});
    }
    const auto deadline = steady::now() + startup_limit;
    while (true) {
        std::string pending;
        for (const auto& s : servers_) {
            if (!s->running()) continue;
            for (const auto& range : s->command({"CLUSTER", "SLOTS"}, probe_timeout).elements) {
                const auto named = range.elements.size() >= 3 && !range.elements[2].elements.empty()
                                       ? range.elements[2].elements[0].str
                                       : std::string();
                if (named != hostname) pending = address(*s) + " names a master \"" + named + "\"";
            }
        }
        if (pending.empty()) return;
        if (steady::now() >= deadline)
            throw std::runtime_error("redis_cluster: announce_hostname: " + pending);
        std::this_thread::sleep_for(poll_interval);
    }
}

void redis_cluster::move_slot(std::uint16_t slot, redis_server& to) {
    begin_slot_migration(slot, to);
    migrate_slot_keys(slot);
    finish_slot_migration(slot);
    wait_until_ok();
}

redis_server& redis_cluster::failover(redis_server& master) {
    const auto deadline = steady::now() + failover_limit;
    const auto give_up = [&](const std::string& what) {
        return std::runtime_error("redis_cluster::failover of " + address(master) + ": " + what);
    };

    redis_server* replica = nullptr;
    while (replica == nullptr) {
        for (const auto& s : servers_) {
            if (s.get() == &master || !s->running()) continue;
            const auto role = role_of(*s);
            if (role.role == "slave" && role.master_port == master.port() && role.state == "connected") {
                replica = s.get();
                break;
            }
        }
        if (replica != nullptr) break;
        if (steady::now() >= deadline) throw give_up("no connected replica");
        std::this_thread::sleep_for(poll_interval);
    }

    // `master` answers the replica's request (MFSTART) only if it knows it as its replica, the
    // other masters vote only for a node they know as a replica of `master`, and they all learn
    // a new replica's role from its own pings, up to cluster-node-timeout / 2 late (after a
    // previous failover, say). Otherwise the manual failover times out after 5 s.
    const auto master_id = node_id(master);
    const auto replica_id = node_id(*replica);
    while (true) {
        std::string unaware;
        for (auto* m : masters()) {
            if (!sees_as_replica(*m, replica_id, master_id)) unaware = address(*m);
        }
        if (unaware.empty()) break;
        if (steady::now() >= deadline) {
            throw give_up(unaware + " does not know " + address(*replica) + " as its replica");
        }
        std::this_thread::sleep_for(poll_interval);
    }

    // A manual failover that does not complete (no votes in time) is abandoned by the replica
    // after 5 s: ask again then.
    auto asked = steady::now();
    expect_ok("redis_cluster", *replica, {"CLUSTER", "FAILOVER"});
    while (role_of(*replica).role != "master") {
        if (steady::now() >= deadline) throw give_up(address(*replica) + " was not promoted");
        if (steady::now() - asked >= failover_retry) {
            asked = steady::now();
            expect_ok("redis_cluster", *replica, {"CLUSTER", "FAILOVER"});
        }
        std::this_thread::sleep_for(poll_interval);
    }

    const auto left = [&]() {
        return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()),
                        std::chrono::milliseconds(1));
    };
    wait_until_ok(left());
    // The old master follows the new one once it learns the new configuration: wait for its
    // link, so that the next step of a test (another failover, a kill9) meets a settled cluster.
    while (master.running()) {
        const auto role = role_of(master);
        if (role.role == "slave" && role.master_port == replica->port() && role.state == "connected") break;
        if (steady::now() >= deadline) {
            throw give_up("the old master did not become a connected replica of " + address(*replica) +
                          " (role " + role.role + ", state " + role.state + ")");
        }
        std::this_thread::sleep_for(poll_interval);
    }
    return *replica;
}

void redis_cluster::wait_until_ok(std::chrono::milliseconds limit) {
    const auto deadline = steady::now() + limit;
    std::string problem;
    while (true) {
        problem.clear();
        std::optional<std::vector<slot_range>> reference;
        const redis_server* reference_server = nullptr;
        for (const auto& s : servers_) {
            if (!s->running()) continue;
            try {
                const auto state =
                    info_field(s->command({"CLUSTER", "INFO"}, probe_timeout).str, "cluster_state");
                if (state != "ok") {
                    problem = address(*s) + ": cluster_state:" + state;
                    break;
                }
                auto ranges = parse_cluster_slots(s->command({"CLUSTER", "SLOTS"}, probe_timeout), *s);
                if (auto hole = coverage_hole(ranges); !hole.empty()) {
                    problem = address(*s) + ": " + hole + ": " + to_text(ranges);
                    break;
                }
                if (!reference) {
                    reference = std::move(ranges);
                    reference_server = s.get();
                } else if (ranges != *reference) {
                    problem = address(*s) + " says " + to_text(ranges) + " but " +
                              address(*reference_server) + " says " + to_text(*reference);
                    break;
                }
            } catch (const std::runtime_error& e) {
                problem = e.what();  // a server busy or paused: look again until the deadline
                break;
            }
        }
        if (problem.empty() && !reference) problem = "no server is running";
        if (problem.empty()) return;
        if (steady::now() >= deadline) {
            throw std::runtime_error("redis_cluster: not ok within " + std::to_string(limit.count()) +
                                     " ms: " + problem);
        }
        std::this_thread::sleep_for(poll_interval);
    }
}

}  // namespace redlock::test
