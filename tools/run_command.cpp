// SPDX-License-Identifier: BSL-1.0
// redlock run: hold a lock while a command runs (like flock(1), etcdctl lock, consul lock).
#include "cli_args.hpp"
#include "commands.hpp"
#include "lock_flags.hpp"
#include "wait_status.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace redlock::cli {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::milliseconds;

constexpr const char* run_footer =
    "Acquires RESOURCE's lock, runs CMD while a watchdog keeps the lease alive, and releases the\n"
    "lock when CMD exits. Several RESOURCEs: all of them at once or none (runs that name them in\n"
    "any order never deadlock), as plain locks (--fenced or not). CMD gets REDLOCK_RESOURCE\n"
    "(several: sorted, joined by \", \"), REDLOCK_TOKEN, REDLOCK_FENCE (0 unless --fenced; several:\n"
    "the first's) and REDLOCK_FENCES (one per resource, in REDLOCK_RESOURCE's order, separated\n"
    "by spaces) in its environment. CMD never outlives the lease: if renewals fail, CMD gets\n"
    "SIGTERM --grace before the lease's validity runs out, and SIGKILL just before it does.\n"
    "Ctrl-C (or SIGTERM, SIGHUP) stops CMD with SIGTERM, SIGKILL --grace later, and releases the\n"
    "lock.\n"
    "\n"
    "durations: 500ms, 1.5s, 2m, 1h, 1m30s (a bare number is seconds)\n"
    "exit status: CMD's (128 + N if signal N ended it); 75 (--conflict-exit-code) if the lock was\n"
    "not acquired within --wait; 78 if the servers refused what no retry changes (a wrong\n"
    "password, a missing ACL permission, a command they lack, a server too old: at once, without\n"
    "waiting); 70 if the lease was lost while CMD ran; 127 if CMD could not be started; 2 for\n"
    "usage errors; 128 + N if signal N interrupted redlock.\n";

struct run_settings {
    lock_flags lock;
    std::optional<milliseconds> grace;  // default: grace_for(ttl)
    // What follows the flags: RESOURCE..., --, CMD and its arguments, untouched.
    std::vector<std::string> positional;
    std::vector<std::string> command;
};

void add_flags(CLI::App& run, run_settings& s) {
    s.lock.add_to(run, "CMD");
    add_duration_flag(run, "--grace", s.grace,
                      "from SIGTERM to SIGKILL; at most half of --ttl (default: 5s, or half of --ttl if that "
                      "is less)");
    // One list, split at its first `--` after parsing: of two positional lists CLI11 would
    // give the first everything. From RESOURCE on nothing is parsed (add_command), so CMD's
    // arguments reach it untouched, also those that look like flags.
    run.add_option("RESOURCE", s.positional,
                   "the resources to lock (several: all or none), then -- and the command to run, CMD "
                   "[ARG...]; from the first RESOURCE on nothing is a flag of redlock's");
}

// The checks that need more than one flag, or the positional arguments.
void check_flags(run_settings& s) {
    const auto& rest = s.positional;
    const auto dashes = std::find(rest.begin(), rest.end(), std::string("--"));
    if (dashes == rest.begin()) throw usage_error("no RESOURCE given (see redlock run --help)");
    if (dashes == rest.end()) throw usage_error("expected -- and a command after RESOURCE");
    s.lock.set_resources({rest.begin(), dashes});
    s.command.assign(dashes + 1, rest.end());
    if (s.command.empty()) throw usage_error("no command after --");
    s.lock.check();
    // SIGTERM goes out --grace before the validity ends, which must leave the watchdog its
    // renewals (every third of the ttl) first.
    if (s.grace && *s.grace * 2 > s.lock.ttl)
        throw usage_error("--grace: at most half of --ttl (CMD gets SIGTERM --grace before the lease ends)");
    if (!s.grace) s.grace = std::min(milliseconds(5'000), s.lock.ttl / 2);
}

// One acquire, one child, one release: the state of a `redlock run`.
class run_session {
public:
    run_session(asio::io_context& ioc, run_settings s, const client_config& cfg)
        : ioc_(ioc),
          s_(std::move(s)),
          client_(ioc.get_executor(), quarantine_news::telling(cfg, news_)),
          signals_(ioc, SIGINT, SIGTERM, SIGHUP),
          children_(ioc, SIGCHLD),
          grace_timer_(ioc),
          validity_timer_(ioc),
          drain_timer_(ioc) {
        if (s_.lock.shows_wait()) status_.emplace(ioc.get_executor(), cfg, s_.lock.resources.front(), news_);
    }

    void start() {
        wait_for_signal();
        if (status_) status_->start();
        async_acquire_flagged(
            client_, s_.lock, diag_,
            asio::bind_cancellation_slot(acquire_cancel_.slot(), [this](error_code ec, lease l) {
                this->on_acquired(ec, std::move(l));
            }));
    }

    [[nodiscard]] int exit_status() const noexcept { return exit_; }

private:
    void wait_for_signal() {
        signals_.async_wait([this](error_code ec, int sig) {
            if (ec) return;
            on_signal(sig);
            wait_for_signal();
        });
    }

    void on_signal(int sig) {
        if (interrupted_ != 0 && child_ > 0) {
            ::kill(child_, SIGKILL);  // a second interrupt does not wait for the grace period
            return;
        }
        interrupted_ = sig;
        if (child_ > 0) {
            stop_child();
        } else if (!acquired_) {
            acquire_cancel_.emit(asio::cancellation_type::terminal);
        }
    }

    void on_acquired(error_code ec, lease l) {
        if (status_) status_->stop();
        if (ec) {
            exit_ = s_.lock.acquire_failed("run", ec, diag_, interrupted_);
            finish();
            return;
        }
        acquired_ = true;
        lease_ = std::move(l);
        if (interrupted_ != 0) {  // the interrupt came as the grant did
            exit_ = 128 + interrupted_;
            release_and_finish();
            return;
        }
        wait_for_children();
        if (!spawn_child()) {
            exit_ = exit_command_not_found;
            release_and_finish();
            return;
        }
        lease_.async_wait_lost([this](error_code lost) {
            if (lost == error::lock_lost && child_ > 0) on_lease_lost();
        });
        guard_validity();
        reap();  // it may have ended before the SIGCHLD wait was set up
    }

    bool spawn_child() {
        std::string fences;
        for (auto f : lease_.fences()) {
            if (!fences.empty()) fences += ' ';
            fences += std::to_string(f);
        }
        std::vector<std::string> env_strings = {
            "REDLOCK_RESOURCE=" + s_.lock.resource, "REDLOCK_TOKEN=" + lease_.token(),
            "REDLOCK_FENCE=" + std::to_string(lease_.fence()), "REDLOCK_FENCES=" + fences};
        std::vector<char*> envp;
        for (char** e = environ; *e != nullptr; ++e) {
            const std::string_view entry(*e);
            if (entry.starts_with("REDLOCK_RESOURCE=") || entry.starts_with("REDLOCK_TOKEN=") ||
                entry.starts_with("REDLOCK_FENCE=") || entry.starts_with("REDLOCK_FENCES=")) {
                continue;
            }
            envp.push_back(*e);
        }
        for (auto& e : env_strings)
            envp.push_back(e.data());
        envp.push_back(nullptr);
        std::vector<char*> argv;
        for (auto& a : s_.command)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_t pid = -1;
        const int rc = ::posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data());
        if (rc != 0) {
            std::fprintf(stderr, "redlock run: cannot run %s: %s\n", argv[0], std::strerror(rc));
            return false;
        }
        child_ = pid;
        return true;
    }

    void wait_for_children() {
        children_.async_wait([this](error_code ec, int) {
            if (ec) return;
            reap();
            if (child_ > 0) wait_for_children();
        });
    }

    void reap() {
        if (child_ <= 0) return;
        int status = 0;
        const pid_t r = ::waitpid(child_, &status, WNOHANG);
        if (r == child_) on_child_exit(status);
    }

    // The watchdog found the lock gone (its key deleted under us, say): SIGTERM now, and SIGKILL
    // --grace later, but never after the validity we had would have run out.
    void on_lease_lost() {
        lost_ = true;
        kill_by_ = std::chrono::steady_clock::now() + *s_.grace;
        if (!terminated_) {
            terminated_ = true;
            std::fprintf(stderr,
                         "redlock run: lost the lock on \"%s\"; stopping %s (SIGTERM, then SIGKILL)\n",
                         s_.lock.resource.c_str(), s_.command[0].c_str());
            ::kill(child_, SIGTERM);
        }
        guard_validity();
    }

    // What the watchdog has not renewed ends CMD before it ends: SIGTERM --grace before the
    // validity runs out, SIGKILL just before it does. Re-read at each step: a renewal moves it.
    void guard_validity() {
        if (child_ <= 0) return;
        const auto now = std::chrono::steady_clock::now();
        const auto until = lease_.valid_until();
        const auto kill_at = std::min(until - kill_margin(), kill_by_);
        const auto term_at = kill_at - *s_.grace;
        if (now >= kill_at) {
            lost_ = true;
            ::kill(child_, SIGKILL);
            return;
        }
        if (now >= term_at && !terminated_) {
            terminated_ = true;
            lost_ = true;
            std::fprintf(stderr,
                         "redlock run: the lease on \"%s\" was not renewed and ends in %lldms; stopping %s "
                         "(SIGTERM, SIGKILL before it ends)\n",
                         s_.lock.resource.c_str(),
                         static_cast<long long>(std::chrono::ceil<milliseconds>(until - now).count()),
                         s_.command[0].c_str());
            ::kill(child_, SIGTERM);
        }
        validity_timer_.expires_at(terminated_ ? kill_at : term_at);
        validity_timer_.async_wait([this](error_code ec) {
            if (!ec) guard_validity();
        });
    }

    // SIGKILL this long before the validity ends: the kernel's time to end the process, and the
    // steps between our clock and the nodes' expiry.
    [[nodiscard]] milliseconds kill_margin() const {
        return std::clamp(s_.lock.ttl / 20, milliseconds(1), milliseconds(100));
    }

    void stop_child() {
        ::kill(child_, SIGTERM);
        grace_timer_.expires_after(*s_.grace);
        grace_timer_.async_wait([this](error_code ec) {
            if (!ec && child_ > 0) ::kill(child_, SIGKILL);
        });
    }

    void on_child_exit(int status) {
        child_ = -1;
        grace_timer_.cancel();
        validity_timer_.cancel();
        children_.cancel();
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        exit_ = lost_ ? exit_lease_lost : interrupted_ != 0 ? 128 + interrupted_ : code;
        release_and_finish();
    }

    void release_and_finish() {
        lease_.async_release(diag_, [this](error_code ec) {
            if (ec && !lost_) s_.lock.release_failed("run", ec, diag_);
            finish();
        });
    }

    // A cancelled or failed acquire releases what it may hold in the background: give those
    // releases a moment to leave before the event loop stops.
    void finish() {
        signals_.cancel();
        children_.cancel();
        drain_timer_.expires_after(milliseconds(100));
        drain_timer_.async_wait([this](error_code) { ioc_.stop(); });
    }

    asio::io_context& ioc_;
    run_settings s_;
    // Before client_, whose events it hears.
    std::shared_ptr<quarantine_news> news_ = std::make_shared<quarantine_news>();
    client client_;
    std::optional<wait_status> status_;
    asio::signal_set signals_;
    asio::signal_set children_;
    asio::steady_timer grace_timer_;
    asio::steady_timer validity_timer_;  // see guard_validity()
    asio::steady_timer drain_timer_;
    asio::cancellation_signal acquire_cancel_;
    diagnostics diag_;
    lease lease_;
    pid_t child_ = -1;
    bool acquired_ = false;
    bool lost_ = false;
    bool terminated_ = false;  // CMD got SIGTERM for the lease's sake
    std::chrono::steady_clock::time_point kill_by_ = std::chrono::steady_clock::time_point::max();
    int interrupted_ = 0;
    int exit_ = 1;
};

int run_command(run_settings& s) {
    check_flags(s);
    const auto cfg = s.lock.where.to_config();
    asio::io_context ioc(1);
    run_session session(ioc, std::move(s), cfg);
    session.start();
    ioc.run();
    return session.exit_status();
}

}  // namespace

subcommand add_run_command(CLI::App& redlock) {
    auto* run = add_command(redlock, "run", "hold a lock while a command runs",
                            "redlock run [options] RESOURCE [RESOURCE...] -- CMD [ARG...]", run_footer);
    auto settings = std::make_shared<run_settings>();
    add_flags(*run, *settings);
    return {run, [settings] { return run_command(*settings); }};
}

}  // namespace redlock::cli
