// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_WITH_LOCK_HPP
#define REDLOCK_WITH_LOCK_HPP

#include <redlock/client.hpp>
#include <redlock/error.hpp>
#include <redlock/export.hpp>
#include <redlock/lease.hpp>
#include <redlock/lock_options.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <exception>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace redlock {

namespace detail {

// Decides, as each of the body and the lease's end completes, whether to cancel the other.
struct REDLOCK_API with_lock_cancel_condition {
    // The body finished, returning or throwing: stop waiting for a loss.
    template <class... Args>
    boost::asio::cancellation_type_t operator()(const std::exception_ptr&, const Args&...) const noexcept {
        return boost::asio::cancellation_type::terminal;
    }
    // The lease ended: a loss, or an adoption elsewhere of what the body handed over, cancels
    // the body (it no longer holds the lock); a release by the body itself does not.
    boost::asio::cancellation_type_t operator()(const boost::system::error_code& ec) const noexcept {
        return ec == error::lock_lost || ec == error::handed_over ? boost::asio::cancellation_type::terminal
                                                                  : boost::asio::cancellation_type::none;
    }
};

template <class T, class Body>
boost::asio::awaitable<T> with_lock(client& c, std::string resource, lock_options options, Body body,
                                    diagnostics* diag) {
    namespace asio = boost::asio;
    // After the caller cancelled, the release below must still run.
    co_await asio::this_coro::throw_if_cancelled(false);
    options.watchdog = true;
    // No co_await inside ?: (GCC 12 miscompiles it for results that are not trivially copyable).
    std::tuple<boost::system::error_code, lease> acquired;
    if (diag != nullptr) {
        acquired = co_await c.async_acquire(resource, options, *diag, asio::as_tuple(asio::use_awaitable));
    } else {
        acquired = co_await c.async_acquire(resource, options, asio::as_tuple(asio::use_awaitable));
    }
    auto& [acquire_ec, held] = acquired;
    if (acquire_ec) throw boost::system::system_error(acquire_ec, "async_with_lock \"" + resource + "\"");
    // A cancellation that came as the acquire completed was not seen by anything: honour it here.
    auto no_cancel =
        asio::bind_cancellation_slot(asio::cancellation_slot(), asio::as_tuple(asio::use_awaitable));
    asio::cancellation_state cancel_state = co_await asio::this_coro::cancellation_state;
    if (cancel_state.cancelled() != asio::cancellation_type::none) {
        co_await held.async_release(no_cancel);
        throw boost::system::system_error(asio::error::operation_aborted,
                                          "async_with_lock \"" + resource + "\": cancelled");
    }

    auto ex = co_await asio::this_coro::executor;
    auto results = co_await asio::experimental::make_parallel_group(
                       asio::co_spawn(ex, body(held), asio::deferred), held.async_wait_lost(asio::deferred))
                       .async_wait(with_lock_cancel_condition{}, asio::use_awaitable);

    // Not cancellable: whatever happened to the body, the lock is given back.
    co_await held.async_release(no_cancel);

    const std::exception_ptr& body_error = std::get<1>(results);
    const boost::system::error_code& end = std::get<std::tuple_size_v<decltype(results)> - 1>(results);
    if (end == error::lock_lost) {
        throw boost::system::system_error(
            error::lock_lost, "async_with_lock \"" + resource + "\": the lease was lost while the body ran");
    }
    if (end == error::handed_over) {
        throw boost::system::system_error(
            error::handed_over,
            "async_with_lock \"" + resource +
                "\": the body handed the lease over, and it was adopted while the body ran");
    }
    if (body_error) std::rethrow_exception(body_error);
    if constexpr (!std::is_void_v<T>) co_return std::move(std::get<2>(results));
}

}  // namespace detail

/// The value type of the awaitable that `body(lease&)` returns.
template <class Body>
using with_lock_result_t = typename std::invoke_result_t<Body&, lease&>::value_type;

/// Acquires `resource`, runs `body(lease&)` (which returns an `asio::awaitable<T>`) while a
/// watchdog keeps the lease alive (every options.renew_every, ttl / 3 by default), releases the
/// lease on every exit path, and completes with the body's result.
///
/// If the lease is lost while the body runs (no quorum confirmed an extension before the
/// validity ran out, a majority of nodes no longer hold our token, or options.max_hold was
/// reached), the body gets a terminal cancellation at once and the operation fails with
/// error::lock_lost, also when the body swallows the cancellation and returns normally. A body
/// that hands its lease over (lease::handover) is cancelled the same way once the other process
/// adopts it, and the operation fails with error::handed_over.
///
/// Completion signature: `void(std::exception_ptr, T)` (`void(std::exception_ptr)` for
/// `T = void`), as `asio::co_spawn`: with `use_awaitable` the result is returned and failures are
/// thrown. Failures: a `boost::system::system_error` carrying the acquire's error
/// (not_acquired, wait_timeout, quorum_unreachable, ...) or error::lock_lost; an exception the
/// body threw, rethrown after the release.
/// Cancellation: terminal. During the acquire it cancels the acquire; during the body it cancels
/// the body, then releases. The release itself is not cancellable.
/// The client and `body` are used until the operation completes: keep the client alive.
template <class Body, class CompletionToken = boost::asio::deferred_t>
auto async_with_lock(client& c, std::string_view resource, lock_options options, Body body,
                     CompletionToken&& token = {}) {
    using result_type = with_lock_result_t<Body>;
    return boost::asio::co_spawn(c.get_executor(),
                                 detail::with_lock<result_type>(c, std::string(resource), std::move(options),
                                                                std::move(body), nullptr),
                                 std::forward<CompletionToken>(token));
}

/// As above, and fills `diag` with the acquire's diagnostics (which node granted, refused or
/// failed, and why), before the body runs; `diag` must live until the operation completes.
template <class Body, class CompletionToken = boost::asio::deferred_t>
auto async_with_lock(client& c, std::string_view resource, lock_options options, diagnostics& diag, Body body,
                     CompletionToken&& token = {}) {
    using result_type = with_lock_result_t<Body>;
    return boost::asio::co_spawn(
        c.get_executor(),
        detail::with_lock<result_type>(c, std::string(resource), std::move(options), std::move(body), &diag),
        std::forward<CompletionToken>(token));
}

}  // namespace redlock

#endif
