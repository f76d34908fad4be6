// SPDX-License-Identifier: BSL-1.0
#include "redis/multiplexer.hpp"

#include <algorithm>
#include <iterator>

namespace redlock::redis {

void multiplexer::add(entry_ptr e) {
    e->state_ = exec_entry::state::staged;
    queue_.push_back(std::move(e));
    ++staged_count_;
}

std::string_view multiplexer::prepare_write() {
    write_buffer_.clear();
    auto first_staged = queue_.begin() + static_cast<std::ptrdiff_t>(written_count_);
    // Entries cancelled while staged never reach the wire: drop them here.
    auto live_end = std::remove_if(first_staged, queue_.end(), [](const entry_ptr& e) {
        return e->state_ == exec_entry::state::finished;
    });
    queue_.erase(live_end, queue_.end());
    cancelled_staged_ = 0;
    first_staged = queue_.begin() + static_cast<std::ptrdiff_t>(written_count_);
    for (auto it = first_staged; it != queue_.end(); ++it) {
        write_buffer_.append((*it)->payload_);
        (*it)->state_ = exec_entry::state::written;
    }
    written_count_ = queue_.size();
    staged_count_ = 0;
    return write_buffer_;
}

multiplexer::reply_outcome multiplexer::on_reply(resp::value& v) {
    if (v.kind == resp::type::push) {
        if (written_count_ > 0) {
            exec_entry& front = *queue_.front();
            if (front.answered_by_pushes() && !v.elements.empty() &&
                v.elements.front().str == front.push_kind_ && ++front.received_ >= front.expected_) {
                pop_answered();
            }
        }
        return reply_outcome::push;
    }
    if (written_count_ == 0) return reply_outcome::unexpected;

    exec_entry& front = *queue_.front();
    if (front.state_ == exec_entry::state::written) front.replies_.push_back(std::move(v));
    // A reply that is not a push answers a command answered by pushes only when it refuses it.
    if (!front.answered_by_pushes() && ++front.received_ < front.expected_) return reply_outcome::matched;
    pop_answered();
    return reply_outcome::matched;
}

void multiplexer::pop_answered() {
    // Pop before completing: a handler run inline may add requests to the queue.
    entry_ptr done = std::move(queue_.front());
    queue_.pop_front();
    --written_count_;
    if (done->state_ == exec_entry::state::written) finish(*done, {});
}

bool multiplexer::cancel(const entry_ptr& e, boost::system::error_code ec) {
    switch (e->state_) {
        case exec_entry::state::staged:
            --staged_count_;
            ++cancelled_staged_;
            finish(*e, ec);
            return true;
        case exec_entry::state::written:
            e->state_ = exec_entry::state::abandoned;
            e->replies_.clear();
            e->on_complete(ec);
            return true;
        case exec_entry::state::abandoned:
        case exec_entry::state::finished:
            return false;
    }
    return false;
}

exec_entry::time_point multiplexer::expire(exec_entry::time_point now, boost::system::error_code ec) {
    // Completions may add entries (and so reallocate the deque): collect first, cancel after.
    std::vector<entry_ptr> overdue;
    auto next = exec_entry::time_point::max();
    for (const auto& e : queue_) {
        if (e->state_ != exec_entry::state::staged && e->state_ != exec_entry::state::written) continue;
        if (e->deadline_ <= now) {
            overdue.push_back(e);
        } else {
            next = std::min(next, e->deadline_);
        }
    }
    for (const auto& e : overdue)
        cancel(e, ec);
    return next;
}

void multiplexer::on_connection_lost(boost::system::error_code lost_ec) {
    std::vector<entry_ptr> lost(
        std::make_move_iterator(queue_.begin()),
        std::make_move_iterator(queue_.begin() + static_cast<std::ptrdiff_t>(written_count_)));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(written_count_));
    written_count_ = 0;
    for (auto& e : lost) {
        if (e->state_ == exec_entry::state::written) finish(*e, lost_ec);
    }
}

void multiplexer::fail_all(boost::system::error_code ec) {
    std::deque<entry_ptr> all;
    all.swap(queue_);
    written_count_ = 0;
    staged_count_ = 0;
    cancelled_staged_ = 0;
    for (auto& e : all) {
        if (e->state_ == exec_entry::state::written || e->state_ == exec_entry::state::staged) finish(*e, ec);
    }
}

void multiplexer::drop_all() noexcept {
    // Emptied before the entries die: a handler's destructor may reach back into us.
    std::deque<entry_ptr> all;
    all.swap(queue_);
    written_count_ = 0;
    staged_count_ = 0;
    cancelled_staged_ = 0;
}

void multiplexer::finish(exec_entry& e, boost::system::error_code ec) {
    e.state_ = exec_entry::state::finished;
    if (ec) e.replies_.clear();
    e.on_complete(ec);
}

}  // namespace redlock::redis
