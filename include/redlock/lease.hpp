// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LEASE_HPP
#define REDLOCK_LEASE_HPP

#include <redlock/diagnostics.hpp>
#include <redlock/export.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace redlock {

namespace detail {
struct lease_state;
}

/// A held lock: proof that a quorum of nodes stored our token for the resource.
///
/// Move-only. An empty lease (default-constructed, moved from) holds nothing.
///
/// \par Object lifetimes
/// A lease keeps its client's connections alive, so it may outlive the `client` object. A lease
/// destroyed while still held is released in the background (counted as `leases_dropped`); the
/// destructor never throws and never blocks. Use async_release for a release you can observe.
///
/// \par Thread-safety
/// Distinct leases may be used concurrently. One lease: the observers are safe from any thread;
/// start at most one async operation at a time.
class REDLOCK_API lease {
public:
    using clock = std::chrono::steady_clock;

    lease() noexcept;
    explicit lease(std::shared_ptr<detail::lease_state> state) noexcept;
    lease(lease&&) noexcept;
    lease& operator=(lease&&) noexcept;
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    ~lease();

    /// True from a successful acquire until release or loss is observed (or the lease is moved from).
    [[nodiscard]] bool held() const noexcept;
    explicit operator bool() const noexcept { return held(); }

    /// The resource held; a lease of client::async_acquire_all names them all (", ").
    [[nodiscard]] const std::string& resource() const noexcept;
    /// Each resource held: resource() alone, or those of client::async_acquire_all, sorted.
    /// Empty for an empty lease.
    [[nodiscard]] std::vector<std::string> resources() const;
    /// 128 random bits from the OS CSPRNG, hex-encoded: unique per acquisition. A fair lock's is
    /// its acquisition's place in the queue (such a token) and the number of the round that won
    /// ("<place>.<n>"; "<place>:<place>.<n>" when a release handed it over).
    [[nodiscard]] const std::string& token() const noexcept;
    /// Monotonic per resource with fenced locks; 0 otherwise. Of several resources, the first's.
    [[nodiscard]] std::uint64_t fence() const noexcept;
    /// The fence of each of resources(), in its order (0s when not fenced); empty for an empty
    /// lease.
    [[nodiscard]] std::vector<std::uint64_t> fences() const;
    /// The validity computed when the lease was granted or last extended: until then, a quorum
    /// of nodes is known to hold our token (ttl - elapsed - drift). The steady clock stops while
    /// the machine is suspended and the servers' ttls do not: the time slept since comes off.
    [[nodiscard]] clock::time_point valid_until() const noexcept;
    /// valid_until() - now, never negative.
    [[nodiscard]] clock::duration remaining() const noexcept;
    /// Nodes that granted in the round that acquired the lease (or last extended it).
    [[nodiscard]] unsigned nodes_granted() const noexcept;

    /// The lease written out for another process, which turns it back into a lease with
    /// client::async_adopt (redsync's and node-redlock's "extend or release by token"). A JSON
    /// object naming the resource, the kind of lock, the token, the fence, and the owner, place
    /// or permits of its kind. Empty for an empty lease. The text is the lock: whoever has it can
    /// adopt it, once. The adopter puts a token of its own in this one's place on a quorum, so
    /// that it is the only holder: from then on nothing this lease does (release, drop, close,
    /// renewals, a loss) touches the adopter's hold. Until then this lease holds as before, and
    /// releasing or dropping it frees the lock (the adoption then fails with not_owner): keep it
    /// until the other process holds. Once this lease finds a majority without its token (its
    /// watchdog's or an extend's renewal, a check, a release), it ends as handed over, without
    /// a release: async_wait_lost and those calls complete with error::handed_over. Write it
    /// once this process's critical section is done: this lease hears of the adoption only then.
    [[nodiscard]] std::string handover() const;

    /// Gives the lease a new ttl on the servers: a token-checked PEXPIRE sent to all N nodes,
    /// successful when a quorum confirms within the remaining validity; never recreates a key.
    /// On success valid_until() moves to now + ttl - elapsed - drift.
    ///
    /// Handler signature: `void(error_code)`. Errors: not_owner (a majority of nodes no longer
    /// hold our token: it expired or was taken; the lease is then no longer held), lock_lost (no
    /// quorum confirmed before the validity ran out; the lease is then no longer held),
    /// invalid_ttl. Executor: the handler's associated executor, else the client's.
    /// Cancellation: terminal, partial and total complete it at once with operation_aborted;
    /// commands already sent still run and the lease keeps whatever validity it had.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_extend(std::chrono::milliseconds ttl, CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
            extend_initiation{this}, token, ttl, static_cast<diagnostics*>(nullptr));
    }
    /// As above, and fills `diag` (which must live until the handler runs).
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_extend(std::chrono::milliseconds ttl, diagnostics& diag, CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
            extend_initiation{this}, token, ttl, &diag);
    }

    /// Deletes the lock on all N nodes if it still holds our token, and publishes on the
    /// resource's `released` channel. The lease is no longer held from the call on, whatever
    /// the outcome.
    ///
    /// Handler signature: `void(error_code)`. Errors: not_owner (a majority of nodes no longer
    /// held our token), quorum_unreachable (too few nodes answered: where the delete did not
    /// run, our key expires with its ttl). Cancellation: as async_extend.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_release(CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
            release_initiation{this}, token, static_cast<diagnostics*>(nullptr));
    }
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_release(diagnostics& diag, CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
            release_initiation{this}, token, &diag);
    }

    /// Asks every node whether it still holds this lease's token with time left (check.lua,
    /// which reads only), like redsync's Valid or redis-py's owned(). Does not change the
    /// lease: an extend or the watchdog acts on what the servers hold.
    ///
    /// Handler signature: `void(error_code)`. Success: a quorum of nodes hold our token.
    /// Errors: not_owner (more nodes than a quorum can spare no longer hold it: it expired,
    /// was released, or was freed by async_force_release; also for an empty lease),
    /// quorum_unreachable (too few nodes answered). Cancellation: as async_extend.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_check(CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
            check_initiation{this}, token, static_cast<diagnostics*>(nullptr));
    }
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_check(diagnostics& diag, CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
            check_initiation{this}, token, &diag);
    }

    /// Completes when the lease ends: with error::lock_lost when it was lost (an extend found
    /// that a majority of nodes no longer hold our token, its watchdog could not extend it
    /// before its validity ran out or reached options.max_hold, or, without a watchdog, its
    /// validity ran out unextended), with success when it was released or dropped. At once if
    /// it already ended. Any number of waits may be pending on one lease.
    ///
    /// Handler signature: `void(error_code)`. Errors: lock_lost; not_owner for an empty lease.
    /// Cancellation: terminal, partial and total complete it at once with operation_aborted;
    /// the lease is not affected.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_wait_lost(CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
            wait_lost_initiation{this}, token);
    }

private:
    using void_handler = boost::asio::any_completion_handler<void(boost::system::error_code)>;

    struct extend_initiation {
        lease* self;
        template <class Handler>
        void operator()(Handler&& h, std::chrono::milliseconds ttl, diagnostics* diag) const {
            self->async_extend_impl(ttl, diag, void_handler(std::forward<Handler>(h)));
        }
    };
    struct release_initiation {
        lease* self;
        template <class Handler>
        void operator()(Handler&& h, diagnostics* diag) const {
            self->async_release_impl(diag, void_handler(std::forward<Handler>(h)));
        }
    };

    struct check_initiation {
        lease* self;
        template <class Handler>
        void operator()(Handler&& h, diagnostics* diag) const {
            self->async_check_impl(diag, void_handler(std::forward<Handler>(h)));
        }
    };
    struct wait_lost_initiation {
        lease* self;
        template <class Handler>
        void operator()(Handler&& h) const {
            self->async_wait_lost_impl(void_handler(std::forward<Handler>(h)));
        }
    };
    void async_wait_lost_impl(void_handler h);
    void async_extend_impl(std::chrono::milliseconds ttl, diagnostics* diag, void_handler h);
    void async_release_impl(diagnostics* diag, void_handler h);
    void async_check_impl(diagnostics* diag, void_handler h);

    std::shared_ptr<detail::lease_state> state_;
};

}  // namespace redlock

#endif
