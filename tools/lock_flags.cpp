// SPDX-License-Identifier: BSL-1.0
#include "lock_flags.hpp"

#include "lock/kinds/kind_mixing.hpp"

#include <algorithm>
#include <cstdio>

#include <unistd.h>

namespace redlock::cli {

using boost::system::error_code;
using std::chrono::milliseconds;

namespace {

// A trait of a kind of lock as the command's flags ask for it; the command asks for no
// reentrant or fair lock.
std::string_view flag_name(detail::kind_trait trait) noexcept {
    switch (trait) {
        case detail::kind_trait::fenced:
            return "--fenced";
        case detail::kind_trait::semaphore:
            return "--permits";
        case detail::kind_trait::read:
            return "--shared";
        case detail::kind_trait::write:
            return "--writer";
        case detail::kind_trait::several:
            return "several RESOURCEs";
        case detail::kind_trait::reentrant:
            return "reentrant";
        case detail::kind_trait::fair:
            return "fair";
        case detail::kind_trait::count:
            break;
    }
    return "?";
}

}  // namespace

void lock_flags::add_to(CLI::App& command, const std::string& what) {
    where.add_to(command);
    add_duration_flag(command, "--ttl", ttl, "the lease's ttl, renewed every third of it (default 10s)");
    add_duration_flag(command, "--wait", wait, "how long to wait for the lock; 0: try once (default 30s)");
    add_switch(command, "--fenced", fenced, "number the lease with a fencing token (REDLOCK_FENCE)");
    command
        .add_option(
            "--permits", permits,
            "a semaphore: up to K holders of RESOURCE at once (every holder of RESOURCE must name the "
            "same K); not with --fenced")
        ->check(CLI::Range(1, 1'000'000))
        ->type_name("K");
    add_switch(
        command, "--shared", shared,
        "a reader of a read-write lock: holders with --shared share RESOURCE, never with a --writer or "
        "a plain one");
    add_switch(command, "--writer", writer,
               "the writer of a read-write lock: alone, and while it waits no new --shared holder gets in (a "
               "stream of readers cannot starve it)");
    add_duration_flag(command, "--max-hold", max_hold,
                      "stop renewing after this long: " + what +
                          " ends as when the lease is lost (exit status 70); 0: no bound (default)");
    command
        .add_option("--replicas", replicas,
                    "count a node's grant and renewals only once K of its replicas have them (WAIT), so a "
                    "failover keeps the lease (default 0)")
        ->check(CLI::Range(0, 1'000))
        ->type_name("K");
    command
        .add_option("--conflict-exit-code", conflict_exit,
                    "the exit status when the lock was not acquired within --wait, to tell that from any "
                    "other (default 75)")
        ->check(CLI::Range(0, 255))
        ->type_name("N");
    command
        .add_option("--label", label,
                    "what the holder is, shown by `redlock inspect` beside its host and process id (at most "
                    "64 bytes)")
        ->type_name("TEXT");
    add_switch(command, "--quiet", quiet, "no status line while waiting");
}

void lock_flags::check() const {
    if (shared && writer) throw usage_error("--shared and --writer: one or the other");
    if (ttl < milliseconds(3)) throw usage_error("--ttl: at least 3ms");
    // The library's own rules of which kinds mix, said in flags.
    if (const auto conflict = detail::first_conflict(detail::traits_of(options(), resources.size() > 1)))
        throw usage_error(detail::describe(*conflict, flag_name));
    if (max_hold < milliseconds::zero()) throw usage_error("--max-hold: not negative");
    if (label.size() > 64 || label.find('\n') != std::string::npos)
        throw usage_error("--label: at most 64 bytes, on one line");
}

void lock_flags::set_resources(std::vector<std::string> names) {
    for (const auto& r : names) {
        // `run job --ttl 5s -- cmd` would lock "job", "--ttl" and "5s" and run with the defaults.
        if (r.starts_with('-'))
            throw usage_error("\"" + r + "\" after RESOURCE looks like a flag: flags go before RESOURCE");
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    resources = std::move(names);
    resource.clear();
    for (const auto& r : resources) {
        if (!resource.empty()) resource += ", ";
        resource += r;
    }
}

lock_mode lock_flags::mode() const noexcept {
    return shared ? lock_mode::read : writer ? lock_mode::write : lock_mode::exclusive;
}

lock_options lock_flags::options() const {
    lock_options o;
    o.ttl = ttl;
    o.wait = wait;
    o.fenced = fenced;
    o.permits = permits;
    o.mode = mode();
    o.max_hold = max_hold;
    o.replicas = replicas;
    o.label = label;
    o.watchdog = true;
    return o;
}

int lock_flags::exit_for(error_code ec) const noexcept {
    if (ec == error::invalid_config || ec == error::invalid_ttl || ec == error::invalid_resource ||
        ec == error::invalid_uri)
        return exit_usage;
    // The servers refused what no retry changes (at once); also a refusal that may pass (OOM,
    // BUSY) but outlasted the whole wait: the operator's to look at.
    if (ec == error::auth_failed || ec == error::handshake_failed || ec == error::tls_failed ||
        ec == error::server_error)
        return exit_refused;
    return conflict_exit;
}

bool lock_flags::shows_wait() const {
    return !quiet && ::isatty(STDERR_FILENO) == 1 && wait > milliseconds::zero();
}

int lock_flags::acquire_failed(const char* command, error_code ec, const diagnostics& diag,
                               int interrupted) const {
    if (interrupted != 0) return 128 + interrupted;
    std::fprintf(stderr, "redlock %s: not acquired (%s): %s\n", command,
                 error_name(static_cast<error>(ec.value())),
                 diag.message.empty() ? ec.message().c_str() : diag.message.c_str());
    return exit_for(ec);
}

void lock_flags::release_failed(const char* command, error_code ec, const diagnostics& diag) const {
    std::fprintf(stderr, "redlock %s: release of \"%s\": %s\n", command, resource.c_str(),
                 diag.message.empty() ? ec.message().c_str() : diag.message.c_str());
}

}  // namespace redlock::cli
