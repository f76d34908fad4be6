// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_MULTIPLEXER_HPP
#define REDLOCK_REDIS_MULTIPLEXER_HPP

#include <redlock/resp/value.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::redis {

/// One async_exec as the multiplexer sees it: bytes to write, how many replies to collect.
/// The I/O shell derives from it to attach the completion handler and timer.
class exec_entry {
public:
    using time_point = std::chrono::steady_clock::time_point;

    enum class state : unsigned char {
        staged,     // queued, not yet handed to a write
        written,    // handed to a write (maybe still in flight), waiting for replies
        abandoned,  // cancelled after being written: its replies are read and dropped
        finished,   // completed (replies, error or cancellation); no longer in the queue
    };

    exec_entry(std::string payload, std::size_t expected_replies)
        : payload_(std::move(payload)), expected_(expected_replies) {
        replies_.reserve(expected_replies);
    }
    /// A command answered by pushes (SUBSCRIBE, UNSUBSCRIBE): `confirmations` pushes whose first
    /// element is `push_kind` ("subscribe"), or a single reply that is not a push: the server's
    /// refusal (an ACL's -NOPERM, a wrong argument), which the entry then completes with.
    exec_entry(std::string payload, std::size_t confirmations, std::string push_kind)
        : payload_(std::move(payload)), expected_(confirmations), push_kind_(std::move(push_kind)) {}
    virtual ~exec_entry() = default;

    [[nodiscard]] state status() const noexcept { return state_; }
    [[nodiscard]] const std::string& payload() const noexcept { return payload_; }
    [[nodiscard]] std::size_t expected_replies() const noexcept { return expected_; }
    [[nodiscard]] bool answered_by_pushes() const noexcept { return !push_kind_.empty(); }
    std::vector<resp::value>& replies() noexcept { return replies_; }

    /// When expire() gives up on it; the default is never.
    void set_deadline(time_point t) noexcept { deadline_ = t; }
    [[nodiscard]] time_point deadline() const noexcept { return deadline_; }

    /// Called once, by the multiplexer, when the entry leaves the queue with a result.
    virtual void on_complete(boost::system::error_code ec) = 0;

private:
    friend class multiplexer;
    std::string payload_;
    std::size_t expected_;
    std::string push_kind_;  // empty: answered by replies
    std::vector<resp::value> replies_;
    std::size_t received_ = 0;
    time_point deadline_ = time_point::max();
    state state_ = state::staged;
};

/// Sans-I/O request/reply matcher for one pipelined connection. Requests are written in the
/// order they were added and the server answers in that order, so replies are matched FIFO
/// against the written entries. It owns no socket and no timer: the I/O shell asks it what to
/// write, tells it what was written and read, and it completes entries through on_complete().
///
/// Cancellation never desynchronises the stream: a written entry that is cancelled stays in the
/// queue as `abandoned`, and its replies are consumed and dropped when they arrive, so they
/// can never be handed to the next request. Commands answered by pushes keep their place in the
/// FIFO too: the server answers them in order with the rest, and an error that refuses one is
/// that command's, never the next request's.
class multiplexer {
public:
    using entry_ptr = std::shared_ptr<exec_entry>;

    /// Queues a request. It goes out with the next write.
    void add(entry_ptr e);

    [[nodiscard]] bool has_staged() const noexcept { return staged_count_ > 0; }
    /// Entries written and still waiting for replies (abandoned ones included).
    [[nodiscard]] bool awaiting_replies() const noexcept { return written_count_ > 0; }
    [[nodiscard]] std::size_t staged() const noexcept { return staged_count_; }
    [[nodiscard]] std::size_t awaiting() const noexcept { return written_count_; }
    /// Entries in the queue that are not finished: what a bound on queued requests counts.
    [[nodiscard]] std::size_t queued() const noexcept { return queue_.size() - cancelled_staged_; }

    /// Coalesces every staged entry into one buffer and marks them `written`: from here on a
    /// lost connection means they may have run. The view stays valid until the next call.
    /// A reply may arrive before the write completes, so nothing waits for a commit.
    std::string_view prepare_write();

    enum class reply_outcome {
        matched,     // consumed by a request (possibly completing it)
        push,        // an out-of-band push: the caller routes it
        unexpected,  // a reply nobody asked for: the stream is out of sync
    };
    /// Hands one parsed reply to the oldest written entry (moved from, unless it is a push). A
    /// push is always the caller's to route; it also counts as a confirmation of the oldest
    /// entry if that one is answered by pushes of its kind.
    reply_outcome on_reply(resp::value& v);
    reply_outcome on_reply(resp::value&& v) { return on_reply(v); }

    /// Removes the entry with `ec`: a staged one is dropped before it is ever written, a
    /// writing/written one becomes abandoned and its replies will be discarded. Completes it
    /// with `ec` unless it was already finished. Returns false if it was already finished.
    bool cancel(const entry_ptr& e, boost::system::error_code ec);

    /// Cancels, as cancel() does, every entry whose deadline is at or before `now`, and returns
    /// the earliest deadline of those still waiting (time_point::max() if none), so that one
    /// timer per connection serves every request's timeout.
    exec_entry::time_point expire(exec_entry::time_point now, boost::system::error_code ec);

    /// The connection is gone. Entries that were written (or in a write) and not answered are
    /// completed with `lost_ec`: they may have run on the server. Staged entries stay queued
    /// for the next connection. Abandoned entries are dropped.
    void on_connection_lost(boost::system::error_code lost_ec);

    /// Completes every entry (staged too) with `ec`; used on close.
    void fail_all(boost::system::error_code ec);

    /// Forgets every entry without completing it: their handlers are destroyed uncalled. For an
    /// execution context that shuts down, whose handlers can never run.
    void drop_all() noexcept;

private:
    static void finish(exec_entry& e, boost::system::error_code ec);
    // The oldest written entry has all its answers: out of the queue, then completed.
    void pop_answered();

    // In write order. The first written_count_ entries are written or abandoned; after them come
    // staged entries and staged ones cancelled before their write (finished, swept by the next
    // prepare_write()).
    std::deque<entry_ptr> queue_;
    std::string write_buffer_;
    std::size_t staged_count_ = 0;
    std::size_t written_count_ = 0;
    std::size_t cancelled_staged_ = 0;  // finished, still in the queue until prepare_write()
};

}  // namespace redlock::redis

#endif
