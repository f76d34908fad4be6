// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TOOLS_LOCK_FLAGS_HPP
#define REDLOCK_TOOLS_LOCK_FLAGS_HPP

#include "commands.hpp"
#include "deployment_flags.hpp"
#include <redlock/redlock.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace redlock::cli {

/// What `redlock run` and `redlock hold` lock, and how: the nodes, the lease's flags and the
/// resources, and the exit status of an acquire that failed.
struct lock_flags {
    deployment_flags where;
    std::chrono::milliseconds ttl{10'000};
    std::chrono::milliseconds wait{30'000};
    bool fenced = false;
    int permits = 0;
    bool shared = false;
    bool writer = false;
    std::chrono::milliseconds max_hold{0};
    int replicas = 0;
    int conflict_exit = exit_not_acquired;
    bool quiet = false;
    std::string label;
    /// Sorted, each once (set_resources).
    std::vector<std::string> resources;
    /// For messages: the resources, joined by ", ".
    std::string resource;

    /// Adds the flags to `command` (`what` names the holder in their help: "CMD", "the hold").
    void add_to(CLI::App& command, const std::string& what);
    /// The checks that need more than one flag; usage_error naming the flags.
    void check() const;
    /// Takes RESOURCE...: usage_error for none, or for one that looks like a flag.
    void set_resources(std::vector<std::string> names);
    [[nodiscard]] lock_mode mode() const noexcept;
    /// The lock_options of the flags, the watchdog on.
    [[nodiscard]] lock_options options() const;
    /// The exit status of an acquire that failed with `ec`: a usage error, a refusal that
    /// stays (exit_refused), else conflict_exit.
    [[nodiscard]] int exit_for(boost::system::error_code ec) const noexcept;
    /// Whether a status line shows the wait on stderr: a terminal, a wait, not --quiet.
    [[nodiscard]] bool shows_wait() const;
    /// The exit status of an acquire that failed with `ec`: 128 + `interrupted` if a signal
    /// cancelled it, else exit_for(ec), after saying why on stderr ("redlock <command>: not
    /// acquired ...").
    int acquire_failed(const char* command, boost::system::error_code ec, const diagnostics& diag,
                       int interrupted) const;
    /// Says on stderr why a release failed.
    void release_failed(const char* command, boost::system::error_code ec, const diagnostics& diag) const;
};

/// Acquires what `flags` name on `c`: one resource, or all of several at once.
template <typename Handler>
void async_acquire_flagged(client& c, const lock_flags& flags, diagnostics& diag, Handler&& handler) {
    if (flags.resources.size() > 1) {
        c.async_acquire_all(flags.resources, flags.options(), diag, std::forward<Handler>(handler));
    } else {
        c.async_acquire(flags.resources.front(), flags.options(), diag, std::forward<Handler>(handler));
    }
}

}  // namespace redlock::cli

#endif
