// SPDX-License-Identifier: BSL-1.0
#include "redis_sentinel.hpp"

#include "support/fixture_commands.hpp"
#include <redlock/resp/value.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

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

constexpr auto startup_limit = 20s;   // processes started -> replicas linked, sentinels agreed
constexpr auto poll_interval = 25ms;  // between two looks at the servers
constexpr auto probe_timeout = 2s;    // one command while polling: a paused server must not stall us

// The port the servers and sentinels know a process by: its TLS port in a group over TLS (the
// plain one stays for the fixture's own commands).
unsigned short known_port(const redis_server& s) {
    return s.tls_port() != 0 ? s.tls_port() : s.port();
}

std::string known_address(const redis_server& s) {
    return "127.0.0.1:" + std::to_string(known_port(s));
}

std::chrono::milliseconds left_until(steady::time_point deadline) {
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()), 1ms);
}

// ROLE: ["master", offset, [...]] or ["slave", ip, port, state, offset].
struct role_info {
    std::string role;
    unsigned short master_port = 0;  // replicas only
    std::string state;               // replicas only: connect, connecting, sync, connected
};

role_info role_of(const redis_server& s) {
    const auto reply = s.command({"ROLE"}, probe_timeout);
    if (reply.kind != resp::type::array || reply.elements.empty()) {
        throw std::runtime_error("redis_sentinel_group: ROLE on " + address(s) + ": " +
                                 resp::to_string(reply));
    }
    role_info info;
    info.role = reply.elements[0].str;
    if (info.role == "slave" && reply.elements.size() >= 4) {
        info.master_port = static_cast<unsigned short>(reply.elements[2].integer);
        info.state = reply.elements[3].str;
    }
    return info;
}

// SENTINEL GET-MASTER-ADDR-BY-NAME: the port of the master a sentinel names (its address is
// always 127.0.0.1 here). Throws on a reply of another shape (a null one: unknown name).
unsigned short named_master_port(const redis_server& sentinel, const std::string& name) {
    const auto reply = sentinel.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", name}, probe_timeout);
    if (reply.kind != resp::type::array || reply.elements.size() != 2) {
        throw std::runtime_error("redis_sentinel_group: SENTINEL GET-MASTER-ADDR-BY-NAME " + name + " on " +
                                 address(sentinel) + ": " + resp::to_string(reply));
    }
    return static_cast<unsigned short>(std::stoul(reply.elements[1].str));
}

// An entry of SENTINEL MASTER / REPLICAS / SENTINELS: a flat list of field names and values
// (RESP2) or a map (RESP3; our command() speaks RESP2, but both are read).
std::map<std::string, std::string> fields_of(const resp::value& entry) {
    std::map<std::string, std::string> out;
    for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2)
        out[entry.elements[i].str] = entry.elements[i + 1].str;
    return out;
}

std::vector<std::map<std::string, std::string>> entries_of(const redis_server& sentinel,
                                                           const std::vector<std::string>& args) {
    const auto reply = sentinel.command(args, probe_timeout);
    if (reply.kind != resp::type::array) {
        throw std::runtime_error("redis_sentinel_group: " + describe(sentinel, args) + ": " +
                                 resp::to_string(reply));
    }
    std::vector<std::map<std::string, std::string>> out;
    for (const auto& e : reply.elements)
        out.push_back(fields_of(e));
    return out;
}

// Empty if `s` is a replica of `master` with its link up; else its INFO replication.
std::string replication_problem(const redis_server& s, const redis_server& master) {
    const auto info = s.command({"INFO", "replication"}, probe_timeout).str;
    if (info_field(info, "role") == "slave" &&
        info_field(info, "master_port") == std::to_string(known_port(master)) &&
        info_field(info, "master_link_status") == "up")
        return {};
    return address(s) + " does not replicate from " + address(master) + ":\n" + info;
}

std::string to_text(const std::map<std::string, std::string>& entry) {
    return entry.contains("name")
               ? entry.at("name") + " " + entry.at("ip") + ":" + entry.at("port") + " " + entry.at("flags")
               : "?";
}

// The last `n` lines of a server's log, indented: why the sentinels did what they did.
std::string log_tail(const redis_server& s, std::size_t n) {
    std::ifstream in(s.dir() + "/redis.log");
    std::vector<std::string> last;
    for (std::string line; std::getline(in, line);) {
        last.push_back(std::move(line));
        if (last.size() > n) last.erase(last.begin());
    }
    std::string out;
    for (const auto& l : last)
        out += "\n    " + l;
    return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

redis_sentinel_group::redis_sentinel_group(redis_sentinel_options opts) : opts_(std::move(opts)) {
    if (opts_.sentinels == 0)
        throw std::invalid_argument("redis_sentinel_group: sentinels must be at least 1");
    if (opts_.quorum == 0 || opts_.quorum > opts_.sentinels) {
        throw std::invalid_argument("redis_sentinel_group: quorum must be 1.." +
                                    std::to_string(opts_.sentinels));
    }
    if (opts_.master_name.empty() || opts_.master_name.find_first_of(" \t\r\n\"'") != std::string::npos) {
        throw std::invalid_argument("redis_sentinel_group: bad master name '" + opts_.master_name + "'");
    }
    auto& server_opts = opts_.server;
    server_opts.sentinel = false;
    auto& extra = server_opts.extra_args;
    const auto password = arg_value(extra, "--requirepass");
    if (opts_.own_users && !password)
        throw std::invalid_argument("redis_sentinel_group: own_users needs a --requirepass");
    if (opts_.own_users) {
        fixture::add_own_users(extra, {replication_user, sentinel_user}, replication_user);
    } else if (password && !has_arg(extra, "--masterauth")) {
        extra.insert(extra.end(), {"--masterauth", *password});
    }
    // A master waits this long (5 s by default) for more replicas before a diskless full sync:
    // every replica's first sync would wait for it.
    if (!has_arg(extra, "--repl-diskless-sync-delay"))
        extra.insert(extra.end(), {"--repl-diskless-sync-delay", "0"});
    // Over TLS, replicas reach their master, and sentinels every server, on its TLS port.
    redis_server_options sentinel_opts;
    if (server_opts.tls) {
        if (!has_arg(extra, "--tls-replication")) extra.insert(extra.end(), {"--tls-replication", "yes"});
        sentinel_opts.tls = true;
        for (const char* name :
             {"--tls-cert-file", "--tls-key-file", "--tls-ca-cert-file", "--tls-auth-clients"}) {
            if (const auto value = arg_value(extra, name))
                sentinel_opts.extra_args.insert(sentinel_opts.extra_args.end(), {name, *value});
        }
        sentinel_opts.extra_args.insert(sentinel_opts.extra_args.end(), {"--tls-replication", "yes"});
    }

    // If anything below throws, data_ and sentinels_ are destroyed with the half-built object:
    // every server already started is stopped.
    data_ = start_redis_servers(1 + opts_.replicas, server_opts);
    const auto deadline = steady::now() + startup_limit;
    const auto master_port = std::to_string(known_port(*data_[0]));
    for (std::size_t i = 1; i < data_.size(); ++i)
        expect_ok("redis_sentinel_group", *data_[i], {"REPLICAOF", "127.0.0.1", master_port});
    // Before the sentinels: a sentinel learns the replicas from the master's INFO, which it
    // reads at once when it connects, then every 10 s only.
    wait_until_replicas_linked(left_until(deadline));

    const auto& name = opts_.master_name;
    std::string config;
    const auto line = [&config](const std::string& text) { config += text + "\n"; };
    line("sentinel resolve-hostnames no");
    line("sentinel announce-ip 127.0.0.1");
    line("sentinel monitor " + name + " 127.0.0.1 " + master_port + " " + std::to_string(opts_.quorum));
    line("sentinel down-after-milliseconds " + name + " " + std::to_string(opts_.down_after.count()));
    line("sentinel failover-timeout " + name + " " + std::to_string(opts_.failover_timeout.count()));
    line("sentinel parallel-syncs " + name + " 1");
    // Quoted: the config parser splits on spaces. A password with a quote would need escaping.
    if (opts_.own_users) {
        line("sentinel auth-user " + name + " " + sentinel_user);
        line("sentinel auth-pass " + name + " " + fixture::own_users_password);
    } else if (password) {
        line("sentinel auth-pass " + name + " \"" + *password + "\"");
    }
    sentinel_opts.sentinel = true;
    sentinel_opts.sentinel_config = std::move(config);
    sentinels_ = start_redis_servers(opts_.sentinels, sentinel_opts);
    wait_until_formed(deadline);
}

redis_sentinel_group::~redis_sentinel_group() = default;

// Every sentinel names our master, sees it, every replica and every other sentinel without a
// down or disconnected flag, and says its quorum is reachable. The sentinels find each other
// through their hello messages on the master's and replicas' __sentinel__:hello channel, sent
// every 2 s.
void redis_sentinel_group::wait_until_formed(steady::time_point deadline) {
    const auto& name = opts_.master_name;
    while (true) {
        std::string pending;
        try {
            for (const auto& s : sentinels_) {
                const auto where = address(*s) + ": ";
                if (const auto port = named_master_port(*s, name); port != known_port(*data_[0])) {
                    pending = where + "names the master 127.0.0.1:" + std::to_string(port);
                    break;
                }
                const auto master = fields_of(s->command({"SENTINEL", "MASTER", name}, probe_timeout));
                if (!master.contains("flags") || master.at("flags") != "master") {
                    pending = where + "master " + to_text(master);
                    break;
                }
                std::vector<unsigned short> seen;
                for (const auto& r : entries_of(*s, {"SENTINEL", "REPLICAS", name})) {
                    if (r.at("flags") != "slave" || r.at("master-link-status") != "ok") {
                        pending = where + "replica " + to_text(r) + " link " + r.at("master-link-status");
                        break;
                    }
                    seen.push_back(static_cast<unsigned short>(std::stoul(r.at("port"))));
                }
                if (!pending.empty()) break;
                for (std::size_t i = 1; i < data_.size(); ++i) {
                    if (std::find(seen.begin(), seen.end(), known_port(*data_[i])) == seen.end())
                        pending = where + "does not know the replica " + address(*data_[i]);
                }
                if (!pending.empty()) break;
                seen.clear();
                for (const auto& o : entries_of(*s, {"SENTINEL", "SENTINELS", name})) {
                    if (o.at("flags") != "sentinel") {
                        pending = where + "sentinel " + to_text(o);
                        break;
                    }
                    seen.push_back(static_cast<unsigned short>(std::stoul(o.at("port"))));
                }
                if (!pending.empty()) break;
                for (const auto& o : sentinels_) {
                    if (o != s && std::find(seen.begin(), seen.end(), known_port(*o)) == seen.end())
                        pending = where + "does not know the sentinel " + address(*o);
                }
                if (!pending.empty()) break;
                const auto quorum = s->command({"SENTINEL", "CKQUORUM", name}, probe_timeout);
                if (quorum.kind != resp::type::simple_string || !quorum.str.starts_with("OK")) {
                    pending = where + "SENTINEL CKQUORUM: " + resp::to_string(quorum);
                    break;
                }
            }
        } catch (const std::exception& e) {
            pending = e.what();  // a field missing, a sentinel still busy: look again until the deadline
        }
        if (pending.empty()) return;
        if (steady::now() >= deadline) {
            throw std::runtime_error("redis_sentinel_group: the sentinels did not agree within " +
                                     std::to_string(startup_limit.count()) + " s: " + pending);
        }
        std::this_thread::sleep_for(poll_interval);
    }
}

redis_server& redis_sentinel_group::data_server(std::size_t i) {
    if (i >= data_.size())
        throw std::out_of_range("redis_sentinel_group::data_server: no server " + std::to_string(i));
    return *data_[i];
}

redis_server& redis_sentinel_group::sentinel(std::size_t i) {
    if (i >= sentinels_.size())
        throw std::out_of_range("redis_sentinel_group::sentinel: no sentinel " + std::to_string(i));
    return *sentinels_[i];
}

std::string redis_sentinel_group::sentinel_addresses() const {
    std::string text;
    for (const auto& s : sentinels_)
        text += (text.empty() ? "" : ",") + known_address(*s);
    return text;
}

std::string redis_sentinel_group::uri() const {
    std::string out = opts_.server.tls ? "rediss-sentinel://" : "redis-sentinel://";
    if (const auto pw = arg_value(opts_.server.extra_args, "--requirepass"))
        out.append(":").append(*pw).append("@");
    out.append(sentinel_addresses()).append("#").append(opts_.master_name);
    return out;
}

redis_server* redis_sentinel_group::data_server_on_port(unsigned short port) {
    for (const auto& s : data_) {
        if (known_port(*s) == port) return s.get();
    }
    return nullptr;
}

void redis_sentinel_group::cut_off(std::size_t i) {
    if (!opts_.own_users) throw std::logic_error("redis_sentinel_group::cut_off: needs own_users");
    fixture::delete_own_users("redis_sentinel_group", data_server(i), {replication_user, sentinel_user});
}

void redis_sentinel_group::rejoin(std::size_t i) {
    if (!opts_.own_users) throw std::logic_error("redis_sentinel_group::rejoin: needs own_users");
    for (const char* user : {replication_user, sentinel_user})
        fixture::define_own_user("redis_sentinel_group", data_server(i), user);
}

redis_sentinel_group::named_master redis_sentinel_group::ask_for_master() {
    std::string silent;
    for (const auto& s : sentinels_) {
        if (!s->running()) continue;
        unsigned short port = 0;
        try {
            port = named_master_port(*s, opts_.master_name);
        } catch (const std::runtime_error& e) {
            silent += std::string("; ") + e.what();  // paused, say: ask the next one
            continue;
        }
        auto* m = data_server_on_port(port);
        const auto what = address(*s) + " names the master 127.0.0.1:" + std::to_string(port);
        if (m == nullptr)
            throw std::runtime_error("redis_sentinel_group: " + what + ", not a server of ours");
        if (!m->running())
            throw std::runtime_error("redis_sentinel_group: " + what + ", which is not running");
        if (const auto role = role_of(*m).role; role != "master")
            throw std::runtime_error("redis_sentinel_group: " + what + ", whose ROLE is " + role);
        return {m, s.get()};
    }
    throw std::runtime_error("redis_sentinel_group: no sentinel named the master" +
                             (silent.empty() ? std::string(" (none is running)") : silent));
}

redis_server& redis_sentinel_group::master() {
    return *ask_for_master().master;
}

redis_server& redis_sentinel_group::kill_master_and_wait_for_failover(bool wait_for_replicas) {
    auto& old = master();
    old.kill9();
    // Longer than wait_for_failover's default: an election whose votes split is retried two
    // failover timeouts later, and under load a second one can split too (two fresh-clone CI
    // runs beside the other half saw no new master within 30 s).
    return wait_for_failover(old, wait_for_replicas, std::chrono::seconds(60));
}

redis_server& redis_sentinel_group::failover(bool wait_for_replicas) {
    const auto [old, sentinel] = ask_for_master();
    const auto deadline = steady::now() + 30s;
    // NOGOODSLAVE: no replica the sentinel has heard from recently enough (one just
    // reconfigured, say); INPROG: a failover of this master is already under way. Both pass.
    while (true) {
        const auto reply = sentinel->command({"SENTINEL", "FAILOVER", opts_.master_name});
        if (reply.kind == resp::type::simple_string && reply.str == "OK") break;
        const auto code = reply.error_code();
        if ((code != "NOGOODSLAVE" && code != "INPROG") || steady::now() >= deadline) {
            throw std::runtime_error("redis_sentinel_group: SENTINEL FAILOVER " + opts_.master_name + " on " +
                                     address(*sentinel) + ": " + resp::to_string(reply));
        }
        std::this_thread::sleep_for(100ms);
    }
    return wait_for_failover(*old, wait_for_replicas, left_until(deadline));
}

redis_server& redis_sentinel_group::wait_for_failover(const redis_server& old, bool wait_for_replicas,
                                                      std::chrono::milliseconds limit) {
    const auto deadline = steady::now() + limit;
    const auto& name = opts_.master_name;
    while (true) {
        std::string pending;
        redis_server* promoted = nullptr;
        try {
            std::map<unsigned short, std::size_t> votes;
            std::size_t live = 0;
            std::string said;
            for (const auto& s : sentinels_) {
                if (!s->running()) continue;
                ++live;
                try {
                    const auto port = named_master_port(*s, name);
                    ++votes[port];
                    said += " " + address(*s) + "->" + std::to_string(port);
                } catch (const std::runtime_error& e) {
                    said += std::string(" ") + e.what();
                }
            }
            for (const auto& [port, n] : votes) {
                if (2 * n > live && port != known_port(old)) promoted = data_server_on_port(port);
            }
            if (live == 0) {
                pending = "no sentinel is running";
            } else if (promoted == nullptr) {
                pending = "no majority of the sentinels names a new master of ours:" + said;
            } else if (!promoted->running()) {
                pending = "the sentinels name " + address(*promoted) + ", which is not running";
            } else if (const auto role = role_of(*promoted); role.role != "master") {
                pending = "the sentinels name " + address(*promoted) + ", whose ROLE is " + role.role;
            } else if (wait_for_replicas) {
                for (const auto& s : data_) {
                    if (s.get() == promoted || s.get() == &old || !s->running()) continue;
                    pending = replication_problem(*s, *promoted);
                    if (!pending.empty()) break;
                }
            }
        } catch (const std::runtime_error& e) {
            pending = e.what();  // a server busy or just promoted: look again until the deadline
        }
        if (pending.empty()) return *promoted;
        if (steady::now() >= deadline) {
            std::string logs;
            for (const auto& s : sentinels_) {
                logs += "\n  sentinel " + address(*s) + ":" + log_tail(*s, 15);
                try {
                    // What it knows of the replicas it would choose from.
                    for (const auto& r : entries_of(*s, {"SENTINEL", "REPLICAS", name})) {
                        logs += "\n    replica";
                        for (const auto& [field, value] : r)
                            logs += " " + field + "=" + value;
                    }
                } catch (const std::exception& e) {
                    logs += std::string("\n    SENTINEL REPLICAS: ") + e.what();
                }
            }
            throw std::runtime_error("redis_sentinel_group: no failover from " + address(old) + " within " +
                                     std::to_string(limit.count()) + " ms: " + pending + logs);
        }
        std::this_thread::sleep_for(poll_interval);
    }
}

std::string redis_sentinel_group::unstable() {
    try {
        std::optional<unsigned short> agreed;
        std::optional<std::string> epoch;
        std::string said;
        std::string busy;
        bool differ = false;
        for (const auto& s : sentinels_) {
            if (!s->running()) continue;
            const auto port = named_master_port(*s, opts_.master_name);
            // The leader of a failover names the promoted replica as soon as it answers
            // ROLE master, but reconfigures the other replicas before its +switch-master.
            auto fields = fields_of(s->command({"SENTINEL", "MASTER", opts_.master_name}, probe_timeout));
            said += " " + address(*s) + "->" + std::to_string(port) + " (config-epoch " +
                    fields["config-epoch"] + ")";
            // Two failovers of one epoch (SENTINEL FAILOVER forces one without votes) leave
            // sentinels that name different masters for good: same epoch, neither wins.
            if ((agreed && *agreed != port) || (epoch && *epoch != fields["config-epoch"])) differ = true;
            agreed = port;
            epoch = fields["config-epoch"];
            const auto& flags = fields["flags"];
            if (flags != "master") {
                busy += (busy.empty() ? "" : "; ") + address(*s) +
                        " flags the master (127.0.0.1:" + std::to_string(port) + ") " + flags +
                        ", failover-state " + fields["failover-state"] + ", config-epoch " +
                        fields["config-epoch"];
            }
        }
        if (!agreed) return "no sentinel is running";
        if (!busy.empty()) return busy + "; the sentinels name:" + said;
        if (differ) return "the sentinels disagree:" + said;
        if (auto* m = data_server_on_port(*agreed); m == nullptr || !m->running()) {
            return "the sentinels name 127.0.0.1:" + std::to_string(*agreed) +
                   ", not a running server of ours";
        } else if (const auto role = role_of(*m).role; role != "master") {
            return "the sentinels name " + address(*m) + ", whose ROLE is " + role;
        }
        return "";
    } catch (const std::runtime_error& e) {
        return e.what();
    }
}

void redis_sentinel_group::wait_until_stable(std::chrono::milliseconds limit) {
    const auto deadline = steady::now() + limit;
    while (true) {
        const auto pending = unstable();
        if (pending.empty()) return;
        if (steady::now() >= deadline) {
            // Why a sentinel still calls the master down (seen once in a 30-minute chaos run:
            // s_down for the whole wait, with the master running).
            std::string logs;
            for (const auto& s : sentinels_)
                logs += "\n  sentinel " + address(*s) + ":" + log_tail(*s, 15);
            throw std::runtime_error("redis_sentinel_group: not stable within " +
                                     std::to_string(limit.count()) + " ms: " + pending + logs);
        }
        std::this_thread::sleep_for(poll_interval);
    }
}

void redis_sentinel_group::wait_until_replicas_linked(std::chrono::milliseconds limit) {
    const auto deadline = steady::now() + limit;
    while (true) {
        std::string pending;
        try {
            // Before the sentinels run (the constructor), the master is data server 0.
            auto* m = sentinels_.empty() ? data_[0].get() : &master();
            for (const auto& s : data_) {
                if (s.get() == m || !s->running()) continue;
                pending = replication_problem(*s, *m);
                if (!pending.empty()) break;
            }
        } catch (const std::runtime_error& e) {
            pending = e.what();
        }
        if (pending.empty()) return;
        if (steady::now() >= deadline) {
            throw std::runtime_error("redis_sentinel_group: replicas not linked within " +
                                     std::to_string(limit.count()) + " ms: " + pending);
        }
        std::this_thread::sleep_for(poll_interval);
    }
}

}  // namespace redlock::test
