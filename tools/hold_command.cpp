// SPDX-License-Identifier: BSL-1.0
// redlock hold: hold a lock until told to let go (like etcdctl lock NAME without a command).
#include "cli_args.hpp"
#include "commands.hpp"
#include "lock_flags.hpp"
#include "wait_status.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <array>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace redlock::cli {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::milliseconds;

constexpr const char* hold_footer =
    "Acquires RESOURCE's lock and holds it, the watchdog renewing the lease, until SIGINT (Ctrl-C),\n"
    "SIGTERM or SIGHUP, or until its standard input closes where that is a pipe or a terminal\n"
    "(Ctrl-D); then releases it. Once it holds, it prints REDLOCK_RESOURCE=, REDLOCK_TOKEN=,\n"
    "REDLOCK_FENCE= and REDLOCK_FENCES= lines to standard output, as `redlock run` gives them to\n"
    "CMD. Several RESOURCEs: all of them at once or none.\n"
    "\n"
    "durations: 500ms, 1.5s, 2m, 1h, 1m30s (a bare number is seconds)\n"
    "exit status: 0 once released; 75 (--conflict-exit-code) if the lock was not acquired within\n"
    "--wait; 78 if the servers refused what no retry changes; 70 if the lease was lost (or\n"
    "--max-hold ran out) before it was let go; 2 for usage errors; 128 + N if signal N came\n"
    "before the lock was held.\n";

// Whether the end of `fd` is something to wait for: a pipe, a socket or a terminal. Not /dev/null
// nor a file, which end at once (`redlock hold job &` in a script reads /dev/null).
bool closes_on_purpose(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return false;
    return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || ::isatty(fd) == 1;
}

// One acquire, then the hold until a signal, the end of stdin or the lease's loss.
class hold_session {
public:
    hold_session(asio::io_context& ioc, lock_flags flags, const client_config& cfg)
        : ioc_(ioc),
          flags_(std::move(flags)),
          client_(ioc.get_executor(), quarantine_news::telling(cfg, news_)),
          signals_(ioc, SIGINT, SIGTERM, SIGHUP),
          drain_timer_(ioc) {
        if (flags_.shows_wait()) status_.emplace(ioc.get_executor(), cfg, flags_.resources.front(), news_);
        if (closes_on_purpose(STDIN_FILENO)) {
            const int fd = ::dup(STDIN_FILENO);
            if (fd >= 0) input_.emplace(ioc, fd);
        }
    }

    void start() {
        signals_.async_wait([this](error_code ec, int sig) {
            if (!ec) on_signal(sig);
        });
        if (status_) status_->start();
        async_acquire_flagged(
            client_, flags_, diag_,
            asio::bind_cancellation_slot(acquire_cancel_.slot(), [this](error_code ec, lease l) {
                this->on_acquired(ec, std::move(l));
            }));
    }

    [[nodiscard]] int exit_status() const noexcept { return exit_; }

private:
    void on_signal(int sig) {
        if (held_) {
            let_go(0);
        } else {
            interrupted_ = sig;
            acquire_cancel_.emit(asio::cancellation_type::terminal);
        }
    }

    void on_acquired(error_code ec, lease l) {
        if (status_) status_->stop();
        if (ec) {
            exit_ = flags_.acquire_failed("hold", ec, diag_, interrupted_);
            finish();
            return;
        }
        lease_ = std::move(l);
        held_ = true;
        if (interrupted_ != 0) {  // the interrupt came as the grant did
            let_go(128 + interrupted_);
            return;
        }
        print_lease();
        lease_.async_wait_lost([this](error_code lost) {
            if (lost && held_) {
                std::fprintf(stderr, "redlock hold: lost the lock on \"%s\" (%s)\n", flags_.resource.c_str(),
                             error_name(static_cast<error>(lost.value())));
                lost_ = true;
                let_go(exit_lease_lost);
            }
        });
        read_input();
    }

    void print_lease() {
        std::string fences;
        for (auto f : lease_.fences()) {
            if (!fences.empty()) fences += ' ';
            fences += std::to_string(f);
        }
        std::printf("REDLOCK_RESOURCE=%s\nREDLOCK_TOKEN=%s\nREDLOCK_FENCE=%llu\nREDLOCK_FENCES=%s\n",
                    flags_.resource.c_str(), lease_.token().c_str(),
                    static_cast<unsigned long long>(lease_.fence()), fences.c_str());
        std::fflush(stdout);
    }

    // What comes in is read and dropped; its end (or an error) lets go.
    void read_input() {
        if (!input_) return;
        input_->async_read_some(asio::buffer(discard_), [this](error_code ec, std::size_t) {
            if (!held_) return;
            if (ec) {
                let_go(0);
            } else {
                read_input();
            }
        });
    }

    void let_go(int status) {
        if (!held_) return;
        held_ = false;
        exit_ = status;
        if (input_) input_->cancel();
        lease_.async_release(diag_, [this](error_code ec) {
            if (ec && !lost_) flags_.release_failed("hold", ec, diag_);
            finish();
        });
    }

    // A cancelled or failed acquire releases what it may hold in the background: give those
    // releases a moment to leave before the event loop stops.
    void finish() {
        signals_.cancel();
        if (input_) input_->cancel();
        drain_timer_.expires_after(milliseconds(100));
        drain_timer_.async_wait([this](error_code) { ioc_.stop(); });
    }

    asio::io_context& ioc_;
    lock_flags flags_;
    // Before client_, whose events it hears.
    std::shared_ptr<quarantine_news> news_ = std::make_shared<quarantine_news>();
    client client_;
    std::optional<wait_status> status_;
    asio::signal_set signals_;
    std::optional<asio::posix::stream_descriptor> input_;
    std::array<char, 256> discard_{};
    asio::steady_timer drain_timer_;
    asio::cancellation_signal acquire_cancel_;
    diagnostics diag_;
    lease lease_;
    bool held_ = false;
    bool lost_ = false;
    int interrupted_ = 0;
    int exit_ = 1;
};

struct hold_settings {
    lock_flags lock;
    std::vector<std::string> resources;
};

int hold_command(hold_settings& s) {
    if (s.resources.empty()) throw usage_error("no RESOURCE given (see redlock hold --help)");
    s.lock.set_resources(s.resources);
    s.lock.check();
    const auto cfg = s.lock.where.to_config();
    asio::io_context ioc(1);
    hold_session session(ioc, std::move(s.lock), cfg);
    session.start();
    ioc.run();
    return session.exit_status();
}

}  // namespace

subcommand add_hold_command(CLI::App& redlock) {
    auto* hold = add_command(redlock, "hold", "hold a lock until told to let go",
                             "redlock hold [options] RESOURCE [RESOURCE...]", hold_footer);
    auto settings = std::make_shared<hold_settings>();
    settings->lock.add_to(*hold, "the hold");
    hold->add_option("RESOURCE", settings->resources, "the resources to lock (several: all or none)");
    return {hold, [settings] { return hold_command(*settings); }};
}

}  // namespace redlock::cli
