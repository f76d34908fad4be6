// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_CLIENT_HPP
#define REDLOCK_CLIENT_HPP

#include <redlock/config.hpp>
#include <redlock/diagnostics.hpp>
#include <redlock/export.hpp>
#include <redlock/inspection.hpp>
#include <redlock/lease.hpp>
#include <redlock/lock_options.hpp>
#include <redlock/metrics.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace redlock {

namespace detail {
class client_state;
}

/// How client::async_close ends what the client holds.
struct REDLOCK_API close_options {
    /// Release every lease the client holds (default), waiting for the replies; false keeps
    /// them on the servers, unextended, until their ttl runs out (a process that hands its
    /// work to a successor before it exits).
    bool release_leases = true;
};

/// Distributed locks over N independent Redis masters (Redlock); N = 1 is the single-instance
/// lock and runs the same code.
///
/// The client opens one pipelined connection per node at construction and keeps it up
/// (reconnecting with backoff). Every lock command of every coroutine sharing the client is
/// pipelined on those connections.
///
/// \par Thread-safety
/// All members may be called from any thread, also by coroutines of an io_context run by
/// several threads: the client's state lives on a strand.
///
/// \par Object lifetimes
/// Leases and pending operations keep the connections alive; destroying the client does not
/// cancel them. The connections close when the client and every lease and operation are gone,
/// or at once by async_close, which also ends what is pending.
class REDLOCK_API client {
public:
    using executor_type = boost::asio::any_io_executor;

    /// Throws boost::system::system_error (error::invalid_config, error::invalid_uri) with a
    /// message naming the field when `cfg.validate()` fails.
    client(executor_type ex, client_config cfg);
    ~client();
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    [[nodiscard]] executor_type get_executor() const noexcept;
    [[nodiscard]] const client_config& config() const noexcept;
    [[nodiscard]] std::size_t node_count() const noexcept;

    /// Acquires `resource` on a quorum (N/2+1) of the nodes.
    ///
    /// Each attempt takes t0 on steady_clock, sends `SET {prefix resource}:lock token NX PX ttl GET`
    /// to all N nodes at once, each with the per-node timeout, and succeeds when a quorum granted
    /// with validity = ttl - (now - t0) - (ttl * drift_factor + 2 ms) above options.min_validity.
    /// A failed attempt releases on every node that may hold our key (all but those that
    /// answered with another owner's token), then retries after a random delay until
    /// options.wait is spent.
    ///
    /// Handler signature: `void(error_code, lease)`. Errors: not_acquired (wait = 0 and another
    /// owner holds it), wait_timeout, quorum_unreachable (more than N - quorum nodes failed or
    /// timed out), validity_expired, invalid_ttl, connection_closed.
    /// Executor: the handler's associated executor, else the client's.
    /// Cancellation: terminal, partial and total complete it at once with operation_aborted;
    /// whatever the attempt set on any node is released in the background.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_acquire(std::string_view resource, const lock_options& options, CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, lease)>(
            acquire_initiation{this}, token, std::string(resource), options,
            static_cast<diagnostics*>(nullptr));
    }
    /// As above, and fills `diag` (which must live until the handler runs) with the last round's
    /// per-node outcomes and a message naming the resource and the nodes.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_acquire(std::string_view resource, const lock_options& options, diagnostics& diag,
                       CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, lease)>(
            acquire_initiation{this}, token, std::string(resource), options, &diag);
    }

    /// Takes several resources at once, all or none, as one lease (Redisson's MultiLock): one
    /// token in every resource's lock key, set by one script per node that writes only when it
    /// finds every key free, so callers naming the same resources in any order never deadlock
    /// and never hold part of them. The rounds, quorum, validity, waiting (a waiter listens on
    /// the resource that refused it), cancellation and the lease's extend, check, watchdog and
    /// release are those of async_acquire; a release frees every resource and wakes each one's
    /// waiters. `resources` may come in any order; repeats are merged, and one name is
    /// async_acquire's. A plain lock, fenced or not (a fenced one numbers each resource:
    /// lease::fences()): `options` must not ask for reentrant, fair, permits or a read-write
    /// mode (error::invalid_config). On a Redis Cluster, whose slots the resources may spread
    /// over, the call runs as one script per slot on each master in turn; there `replicas` is
    /// refused (error::invalid_config). At most 100 resources (error::invalid_resource). Each
    /// resource is also excluded by and excludes an async_acquire of it alone.
    ///
    /// Handler signature: `void(error_code, lease)`; lease::resource() names them all, joined
    /// by ", " in sorted order, and lease::resources() lists them. Errors: those of
    /// async_acquire.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_acquire_all(std::vector<std::string> resources, const lock_options& options,
                           CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, lease)>(
            acquire_all_initiation{this}, token, std::move(resources), options,
            static_cast<diagnostics*>(nullptr));
    }
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_acquire_all(std::vector<std::string> resources, const lock_options& options, diagnostics& diag,
                           CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, lease)>(
            acquire_all_initiation{this}, token, std::move(resources), options, &diag);
    }

    /// Turns a lease another process wrote out (lease::handover) back into a lease here, the
    /// only one: on every node where the lease's token holds, a new token of this lease's takes
    /// its place, living at least `options.ttl` from now (never shortened). Held when a quorum
    /// confirmed, with validity = ttl - elapsed - drift counted from before the call was sent,
    /// as an acquire's. The written-out lease's token then holds nothing, so nothing its lease
    /// does touches this one, and a second adoption of the same text fails with not_owner.
    /// A failed adoption puts the first token back wherever its call landed. The kind of lock
    /// (reentrant, fair, permits, fenced, read or write) comes from the text; the rest of
    /// `options` (ttl, watchdog, max_hold, node_timeout, min_validity, replicas: the adoption
    /// counts on a node once that many of its replicas have the new token, and so do later
    /// extends) is the adopter's, and `wait` is ignored. A hold with an owner (reentrant, or a
    /// read-write lock's) becomes `options.owner`'s, or a new random owner's when that is empty:
    /// the first process, acquiring again under its owner, is refused like any other owner. One
    /// its owner re-entered (holds more than once) is not handed over: not_owner, and the
    /// diagnostics say so; release the inner holds first.
    ///
    /// Handler signature: `void(error_code, lease)`. Errors: invalid_config (not a handover
    /// text; the diagnostics say why), invalid_ttl, invalid_resource, not_owner (a majority of
    /// nodes no longer hold the token: it expired, was released, or was adopted already; or its
    /// owner re-entered it),
    /// quorum_unreachable, not_replicated, validity_expired. Cancellation: terminal, partial
    /// and total complete it at once with operation_aborted, and the first token is put back
    /// where the call landed.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_adopt(std::string_view handover, const lock_options& options, CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, lease)>(
            adopt_initiation{this}, token, std::string(handover), options,
            static_cast<diagnostics*>(nullptr));
    }
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_adopt(std::string_view handover, const lock_options& options, diagnostics& diag,
                     CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, lease)>(
            adopt_initiation{this}, token, std::string(handover), options, &diag);
    }

    /// Reads what holds `resource` on every node, for operators and tools (inspect.lua: reads
    /// only): per node the kind of hold, its holders' tokens (a reentrant lock's owner), the
    /// key's PTTL, the fence counter, fair waiters queued and a semaphore's count; and the
    /// holders a quorum of nodes agree on. Waits for every node (or its node_timeout).
    ///
    /// Handler signature: `void(error_code, inspection)`. Errors: invalid_resource;
    /// quorum_unreachable when fewer than a quorum of nodes answered (the inspection still
    /// has what the others said). Executor: the handler's associated executor, else the
    /// client's. Cancellation: terminal, partial and total complete it at once with
    /// operation_aborted.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_inspect(std::string_view resource, CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, inspection)>(
            inspect_initiation{this}, token, std::string(resource));
    }

    /// An operator's release of whatever holds `resource` (any kind, any holder) on every node,
    /// waking its waiters. Dangerous: the holders are not told, and believe they hold it until
    /// their next extend (not_owner) or, without one, until their validity runs out; a fenced
    /// resource refuses nothing for it, since the next holder's fence is larger anyway. Use it
    /// for a lock whose holder is known dead with a long ttl left. The fence counter and a fair
    /// lock's queue stay.
    ///
    /// Handler signature: `void(error_code, std::size_t)`: the number of nodes where something
    /// held the resource and was deleted. Errors: invalid_resource; quorum_unreachable when
    /// fewer than a quorum of nodes answered (those that did were freed). Cancellation: as
    /// async_inspect; commands already sent still run.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_force_release(std::string_view resource, CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code, std::size_t)>(
            force_release_initiation{this}, token, std::string(resource));
    }

    /// Closes the client for a clean shutdown. From the call on, new acquires and adopts fail
    /// with error::client_closed. Acquires in flight, waiting ones too, complete with
    /// operation_aborted (whatever they may hold is released); the leases the client holds are
    /// released (their async_wait_lost hears success) or, with `options.release_leases` false,
    /// left on the servers until their ttl (their watchdogs stop; async_wait_lost hears
    /// client_closed); then each connection is closed once everything sent on it before has
    /// been answered, or has timed out. A lease kept or closed over answers extends and
    /// releases with an error, never by touching the servers again.
    ///
    /// Handler signature: `void(error_code)`, success once all of that is done; a second
    /// async_close completes with the first (or at once after it). Executor: the handler's
    /// associated executor, else the client's. Not cancellable: its steps are bounded by the
    /// node timeouts. Destroying a client without closing it stays safe (see the class).
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_close(const close_options& options, CompletionToken&& token = {}) {
        return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
            close_initiation{this}, token, options);
    }
    /// async_close with the default options: the leases held are released.
    template <class CompletionToken = boost::asio::deferred_t>
    requires(!std::is_same_v<std::remove_cvref_t<CompletionToken>, close_options>) auto async_close(
        CompletionToken&& token = {}) {
        return async_close(close_options{}, std::forward<CompletionToken>(token));
    }

    /// Counters and latency histogram since construction.
    [[nodiscard]] metrics_snapshot metrics() const;

private:
    using acquire_handler = boost::asio::any_completion_handler<void(boost::system::error_code, lease)>;

    struct acquire_initiation {
        client* self;
        template <class Handler>
        void operator()(Handler&& h, std::string resource, lock_options options, diagnostics* diag) const {
            self->async_acquire_impl(std::move(resource), std::move(options), diag,
                                     acquire_handler(std::forward<Handler>(h)));
        }
    };

    void async_acquire_impl(std::string resource, lock_options options, diagnostics* diag, acquire_handler h);

    struct acquire_all_initiation {
        client* self;
        template <class Handler>
        void operator()(Handler&& h, std::vector<std::string> resources, lock_options options,
                        diagnostics* diag) const {
            self->async_acquire_all_impl(std::move(resources), std::move(options), diag,
                                         acquire_handler(std::forward<Handler>(h)));
        }
    };
    void async_acquire_all_impl(std::vector<std::string> resources, lock_options options, diagnostics* diag,
                                acquire_handler h);

    struct adopt_initiation {
        client* self;
        template <class Handler>
        void operator()(Handler&& h, std::string text, lock_options options, diagnostics* diag) const {
            self->async_adopt_impl(std::move(text), std::move(options), diag,
                                   acquire_handler(std::forward<Handler>(h)));
        }
    };
    void async_adopt_impl(std::string text, lock_options options, diagnostics* diag, acquire_handler h);

    using inspect_handler = boost::asio::any_completion_handler<void(boost::system::error_code, inspection)>;
    struct inspect_initiation {
        client* self;
        template <class Handler>
        void operator()(Handler&& h, std::string resource) const {
            self->async_inspect_impl(std::move(resource), inspect_handler(std::forward<Handler>(h)));
        }
    };
    void async_inspect_impl(std::string resource, inspect_handler h);

    using force_release_handler =
        boost::asio::any_completion_handler<void(boost::system::error_code, std::size_t)>;
    struct force_release_initiation {
        client* self;
        template <class Handler>
        void operator()(Handler&& h, std::string resource) const {
            self->async_force_release_impl(std::move(resource),
                                           force_release_handler(std::forward<Handler>(h)));
        }
    };
    void async_force_release_impl(std::string resource, force_release_handler h);

    using close_handler = boost::asio::any_completion_handler<void(boost::system::error_code)>;
    struct close_initiation {
        client* self;
        template <class Handler>
        void operator()(Handler&& h, close_options options) const {
            self->async_close_impl(options, close_handler(std::forward<Handler>(h)));
        }
    };
    void async_close_impl(close_options options, close_handler h);

    std::shared_ptr<detail::client_state> state_;
};

}  // namespace redlock

#endif
