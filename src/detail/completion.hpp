// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_DETAIL_COMPLETION_HPP
#define REDLOCK_DETAIL_COMPLETION_HPP

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>

#include <utility>

namespace redlock::detail {

/// Delivers a completion on the handler's associated executor (`fallback` if it has none),
/// after disconnecting its cancellation slot: a completed operation must not be cancelled.
/// The slot is cleared there, on the executor its signal is emitted from, never on ours: a
/// caller on another strand may be emitting at this very moment. An emit that comes first
/// finds the operation finished (our slot handlers hold weak references) and does nothing.
template <class Handler, class... Args>
void complete_on_handler_executor(Handler h, const boost::asio::any_io_executor& fallback, Args... args) {
    auto ex = boost::asio::get_associated_executor(h, fallback);
    boost::asio::dispatch(ex, [h = std::move(h), ... args = std::move(args)]() mutable {
        auto slot = boost::asio::get_associated_cancellation_slot(h);
        if (slot.is_connected()) slot.clear();
        std::move(h)(std::move(args)...);
    });
}

}  // namespace redlock::detail

#endif
