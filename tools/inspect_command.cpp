// SPDX-License-Identifier: BSL-1.0
// redlock inspect / redlock unlock --force: an operator's look at a resource, and an operator's
// release of it (client::async_inspect, client::async_force_release).
#include "cli_args.hpp"
#include "commands.hpp"
#include "deployment_flags.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <exception>
#include <string>

namespace redlock::cli {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;

constexpr const char* inspect_footer =
    "Shows what holds RESOURCE on every node (any kind: lock, reentrant, semaphore, read-write),\n"
    "its time to live, fence counter, fair waiters or waiting writers, a semaphore's count, a\n"
    "read-write lock's readers and writer, and the holders a quorum of nodes agree on. Reads only.\n"
    "\n"
    "exit status: 0 held, 1 free, 3 fewer than a quorum of nodes answered, 2 usage errors.\n";

constexpr const char* unlock_footer =
    "Deletes whatever holds RESOURCE on every node and wakes its waiters. DANGEROUS: the holders\n"
    "are not told and go on as if they held it until their next renewal fails. For a holder known\n"
    "to be dead whose lease has long to run. --force is required.\n"
    "\n"
    "exit status: 0 done (also when nothing held it), 3 fewer than a quorum of nodes answered,\n"
    "2 usage errors.\n";

constexpr int exit_free = 1;
constexpr int exit_unreachable = 3;

struct resource_settings {
    deployment_flags where;
    std::vector<std::string> positional;  // RESOURCE, if given as it should be
    std::string resource;
    bool json = false;
    bool force = false;
};

// `[options] RESOURCE`: the flags they share.
std::shared_ptr<resource_settings> add_flags(CLI::App& command) {
    auto s = std::make_shared<resource_settings>();
    s->where.add_to(command);
    // A list, to say "exactly one" as before CLI11; from RESOURCE on nothing is a flag (add_command).
    command.add_option("RESOURCE", s->positional, "the resource (its name, as given to the lock)");
    return s;
}

void check_resource(resource_settings& s) {
    for (std::size_t i = 1; i < s.positional.size(); ++i) {
        if (s.positional[i].starts_with('-'))
            throw usage_error("\"" + s.positional[i] +
                              "\" after RESOURCE looks like a flag: flags go before RESOURCE");
    }
    if (s.positional.size() != 1) throw usage_error("expected exactly one RESOURCE (see --help)");
    s.resource = s.positional.front();
}

std::string pttl_text(std::int64_t pttl) {
    if (pttl == -2) return "no key";
    if (pttl == -1) return "no expiry";
    return std::to_string(pttl) + " ms left";
}

// A holder, and who it is where its token says.
void print_holder(const std::string& h, bool first) {
    std::printf("%s %s", first ? ";" : ",", h.c_str());
    if (const auto id = redlock::identity_of(h)) {
        std::printf(" (pid %lld on %s%s%s)", static_cast<long long>(id->pid), id->host.c_str(),
                    id->label.empty() ? "" : ", label ", id->label.c_str());
    }
}

void print_text(const inspection& i) {
    std::printf("%s: %s", i.resource.c_str(), i.held() ? "held" : "free");
    if (!i.owner.empty()) std::printf(" by owner %s", i.owner.c_str());
    for (const auto& h : i.holders)
        print_holder(h, &h == &i.holders.front());
    std::printf(" (quorum %zu of %zu); fence %llu\n", i.quorum, i.nodes.size(),
                static_cast<unsigned long long>(i.fence));
    for (const auto& n : i.nodes) {
        if (n.error) {
            std::printf("  %s: no answer (%s%s%s)\n", n.node.c_str(), n.error.message().c_str(),
                        n.detail.empty() ? "" : ": ", n.detail.c_str());
            continue;
        }
        std::printf("  %s: %s, %s", n.node.c_str(), hold_type_name(n.type), pttl_text(n.pttl_ms).c_str());
        if (n.type == hold_type::semaphore)
            std::printf(", %zu of %lld permits", n.holders.size(), static_cast<long long>(n.permits));
        if (n.type == hold_type::read_write)
            std::printf(", %zu reading, %zu writing", n.holders.size() - n.writers.size(), n.writers.size());
        if (!n.owner.empty()) std::printf(", owner %s", n.owner.c_str());
        for (const auto& h : n.holders)
            print_holder(h, &h == &n.holders.front());
        if (n.queued > 0) std::printf("; %lld queued", static_cast<long long>(n.queued));
        std::printf("\n");
    }
}

// Runs `body` on a client of the flags' config and returns its exit status.
template <class Body>
int with_client(const resource_settings& s, Body body) {
    const auto cfg = s.where.to_config();
    asio::io_context ioc(1);
    redlock::client client(ioc.get_executor(), cfg);
    int status = 0;
    std::exception_ptr failure;
    // The client's connections keep the io_context busy: stop it once the body is done.
    asio::co_spawn(ioc, body(client), [&](std::exception_ptr ep, int result) {
        failure = ep;
        status = result;
        ioc.stop();
    });
    ioc.run();
    std::fflush(stdout);
    if (failure) std::rethrow_exception(failure);
    return status;
}

int inspect_command(resource_settings& s) {
    check_resource(s);
    return with_client(s, [&](redlock::client& client) -> asio::awaitable<int> {
        auto [ec, i] = co_await client.async_inspect(s.resource, asio::as_tuple(asio::use_awaitable));
        if (ec == error::invalid_resource) throw usage_error(ec.message());
        if (s.json) {
            std::printf("%s\n", to_json(i).c_str());
        } else {
            print_text(i);
        }
        if (ec) {
            std::fprintf(stderr, "redlock inspect: %s\n", ec.message().c_str());
            co_return exit_unreachable;
        }
        co_return i.held() ? 0 : exit_free;
    });
}

int unlock_command(resource_settings& s) {
    check_resource(s);
    if (!s.force) throw usage_error("--force is required: this deletes another holder's lock");
    return with_client(s, [&](redlock::client& client) -> asio::awaitable<int> {
        auto [ec, freed] =
            co_await client.async_force_release(s.resource, asio::as_tuple(asio::use_awaitable));
        if (ec == error::invalid_resource) throw usage_error(ec.message());
        std::printf("%s: deleted on %zu of %zu nodes\n", s.resource.c_str(), freed, client.node_count());
        if (ec) {
            std::fprintf(stderr, "redlock unlock: %s\n", ec.message().c_str());
            co_return exit_unreachable;
        }
        co_return 0;
    });
}

}  // namespace

subcommand add_inspect_command(CLI::App& redlock) {
    auto* inspect = add_command(redlock, "inspect", "what holds a resource on every node",
                                "redlock inspect [options] RESOURCE", inspect_footer);
    auto s = add_flags(*inspect);
    add_switch(*inspect, "--json", s->json, "one JSON object instead of text");
    return {inspect, [s] { return inspect_command(*s); }};
}

subcommand add_unlock_command(CLI::App& redlock) {
    auto* unlock = add_command(redlock, "unlock", "--force: an operator's release of a resource",
                               "redlock unlock --force [options] RESOURCE", unlock_footer);
    auto s = add_flags(*unlock);
    add_switch(*unlock, "--force", s->force, "required: this deletes another holder's lock");
    return {unlock, [s] { return unlock_command(*s); }};
}

}  // namespace redlock::cli
