// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_SERIAL_EXECUTOR_HPP
#define REDLOCK_REDIS_SERIAL_EXECUTOR_HPP

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

namespace redlock::redis::detail {

/// The strand that a client's connections and lock operations share, as an any_io_executor.
/// Over an io_context it is a strand of the io_context's own executor: 24 bytes, which an
/// any_io_executor (and the any_completion_executor of an any_completion_handler) keeps inline.
/// A strand over an any_io_executor (72 bytes) does not fit, so that every conversion, prefer()
/// and require() of one allocates, several times per request. Over any other executor it is a
/// strand over an any_io_executor all the same.
using serial_executor = boost::asio::any_io_executor;

using io_strand = boost::asio::strand<boost::asio::io_context::executor_type>;
using any_strand = boost::asio::strand<boost::asio::any_io_executor>;

/// `ex` itself if it is a strand already (one made here, or a caller's strand<any_io_executor>),
/// else a new strand over it.
[[nodiscard]] inline serial_executor make_serial(const boost::asio::any_io_executor& ex) {
    if (ex.target<io_strand>() || ex.target<any_strand>()) return ex;
    if (const auto* io = ex.target<boost::asio::io_context::executor_type>())
        return boost::asio::make_strand(*io);
    return boost::asio::make_strand(ex);
}

/// Whether the caller runs inside `serial` (a strand made by make_serial()); false for an
/// executor that is not a strand.
[[nodiscard]] inline bool running_in(const serial_executor& serial) noexcept {
    if (const auto* s = serial.target<io_strand>()) return s->running_in_this_thread();
    if (const auto* s = serial.target<any_strand>()) return s->running_in_this_thread();
    return false;
}

}  // namespace redlock::redis::detail

#endif
