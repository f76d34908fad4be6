// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_ACQUIRE_EVENTS_HPP
#define REDLOCK_LOCK_ACQUIRE_ACQUIRE_EVENTS_HPP

#include "lock/kinds/lock_kind.hpp"
#include "lock/lease/won_lock.hpp"
#include "lock/nodes/replica_waits.hpp"
#include <redlock/resp/value.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// What happened to an acquisition: the input of acquire_fsm::resume. What came back from a
/// node names the round it was sent in (`round`): a reply of an earlier round may come late.
struct acquire_event {
    enum class type {
        start,                 ///< the acquisition begins
        answer,                ///< node `node`'s replies to round `round`'s acquire (or `ec`)
        takeover_answer,       ///< node `node`'s replies to the take-over of an earlier round's key
        replicas_confirmed,    ///< a WAIT after node `node`'s grant in round `round`: `verdict`
        writeback_answer,      ///< node `node`'s replies to round `round`'s fence write-back
        cleanup_done,          ///< node `node` answered a failed round's cleanup
        sleep_ended,           ///< the timer of sleep number `sleep` went off
        released,              ///< a release message (or anything that says: try again)
        handoff,               ///< node `node` handed the lock to our place, registered by `text`
        subscribed,            ///< the release channel's subscription is confirmed
        subscription_refused,  ///< a node refused the SSUBSCRIBE, for `text`
        cancel,                ///< the caller cancelled
    } what = type::start;
    unsigned round = 0;
    unsigned sleep = 0;
    std::size_t node = 0;
    boost::system::error_code ec;
    std::span<const resp::value> replies;
    std::optional<replication_verdict> verdict;
    std::string_view text;

    [[nodiscard]] static acquire_event of(type what, std::string_view text = {}) {
        acquire_event e;
        e.what = what;
        e.text = text;
        return e;
    }
    [[nodiscard]] static acquire_event sleep_ended_for(unsigned sleep) {
        auto e = of(type::sleep_ended);
        e.sleep = sleep;
        return e;
    }
    [[nodiscard]] static acquire_event handoff_from(std::size_t node, std::string_view round_token) {
        auto e = of(type::handoff, round_token);
        e.node = node;
        return e;
    }
    [[nodiscard]] static acquire_event replicas_of(unsigned round, std::size_t node, replication_verdict v) {
        auto e = from_node(type::replicas_confirmed, round, node);
        e.verdict = std::move(v);
        return e;
    }
    /// What came back from node `node` for round `round`.
    [[nodiscard]] static acquire_event from_node(type what, unsigned round, std::size_t node,
                                                 boost::system::error_code ec = {},
                                                 std::span<const resp::value> replies = {}) {
        acquire_event e;
        e.what = what;
        e.round = round;
        e.node = node;
        e.ec = ec;
        e.replies = replies;
        return e;
    }
};

/// What an acquisition asks its executor to do: the output of acquire_fsm::resume, run in order.
/// Its call and node set are the fsm's, valid until its next resume: the executor sends them
/// before that (a connection copies what it sends).
struct acquire_action {
    enum class type {
        send,  ///< `call` to each node of `nodes` (null: all), within `timeout`; replies as `reply`
        confirm_replicas,  ///< a WAIT for `replicas` replicas of node `node`'s write on `key`
        sleep_until,       ///< sleep number `sleep` ends at `at` (a new sleep, or sooner)
        end_sleep,         ///< the sleep ended by itself: its timer no longer matters
        listen,            ///< wait for messages on `channel` from now (the previous one no longer)
        finish,            ///< the acquisition's result: `ec`, or the lease `won`; `message`
    } what = type::send;

    // send
    const node_call* call = nullptr;
    const std::vector<bool>* nodes = nullptr;
    std::chrono::milliseconds timeout{0};
    /// How each node's replies come back: as an event of this type for `round`; none: unwanted.
    std::optional<acquire_event::type> reply;
    unsigned round = 0;

    // confirm_replicas (and `node`, `round`)
    std::size_t node = 0;
    std::string_view key;
    int replicas = 0;
    std::chrono::milliseconds replica_timeout{0};

    // sleep_until; finish: when
    std::chrono::steady_clock::time_point at;
    unsigned sleep = 0;

    // listen
    const std::string* channel = nullptr;
    /// A resource's release channel, whose releases name the client they wake: the client
    /// lists itself there (release_listener). Not a fair waiter's own channel.
    bool listed = false;

    // finish
    boost::system::error_code ec;
    std::optional<won_lock> won;
    std::string message;
    std::chrono::steady_clock::duration took{};  ///< since the acquisition started
    bool handed_over = false;                    ///< the lock came by hand-offs, not by a round
};

}  // namespace redlock::detail

#endif
