// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_CLIENT_CANCEL_ON_SLOT_HPP
#define REDLOCK_LOCK_CLIENT_CANCEL_ON_SLOT_HPP

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/post.hpp>

#include <memory>

namespace redlock::detail {

/// Connects the cancellation slot of an operation's handler, if it has one, to `op->cancel()`,
/// run on `strand` where the operation's state lives. Call it on the initiating thread, before
/// the operation starts: a slot must be assigned where its handler lives. The operation is held
/// weakly, so a slot that outlives it does nothing.
template <class Handler, class Op, class Strand>
void cancel_on_slot(Handler& handler, const std::shared_ptr<Op>& op, const Strand& strand) {
    auto slot = boost::asio::get_associated_cancellation_slot(handler);
    if (!slot.is_connected()) return;
    slot.assign([weak = std::weak_ptr<Op>(op), strand](boost::asio::cancellation_type) {
        boost::asio::post(strand, [weak] {
            if (auto self = weak.lock()) self->cancel();
        });
    });
}

}  // namespace redlock::detail

#endif
