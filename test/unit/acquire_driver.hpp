// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_UNIT_ACQUIRE_DRIVER_HPP
#define REDLOCK_TEST_UNIT_ACQUIRE_DRIVER_HPP

// A scripted acquisition, in the style of Boost.MySQL's algo_test: an acquire_fsm with a fake
// context and a fake clock, the nodes' answers written per kind of lock, and a record of what
// went to each node. No socket, no timer.

#include "lock/acquire/acquire_fsm.hpp"
#include "lock/kinds/lock_kind.hpp"
#include "support/resp_values.hpp"
#include <redlock/error.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace redlock::test {

/// The kinds of lock an acquisition runs with, as the driver answers for them.
enum class lock_shape { plain, fenced, reentrant, fair, semaphore, read, write, several };

inline const char* name_of(lock_shape s) {
    switch (s) {
        case lock_shape::plain:
            return "plain";
        case lock_shape::fenced:
            return "fenced";
        case lock_shape::reentrant:
            return "reentrant";
        case lock_shape::fair:
            return "fair";
        case lock_shape::semaphore:
            return "semaphore";
        case lock_shape::read:
            return "read";
        case lock_shape::write:
            return "write";
        case lock_shape::several:
            return "several";
    }
    return "?";
}

/// The client as an acquisition sees it: every node votes, tokens are "tok-1", "tok-2", ...
class fake_acquire_context final : public detail::acquire_context {
public:
    explicit fake_acquire_context(std::size_t nodes) : metrics_(names_of(nodes)), names_(names_of(nodes)) {}

    std::span<const std::string> node_names() const override { return names_; }
    std::string new_token(std::string_view) override { return "tok-" + std::to_string(++tokens_); }
    bool votes(std::size_t, std::string_view) const override { return true; }
    void admit(std::size_t, std::string_view, detail::vote&, boost::system::error_code&,
               std::string&) override {}
    std::chrono::milliseconds quarantine_left(std::size_t, std::string_view) const override { return {}; }
    void judge_answer(std::size_t, detail::acquire_answer&, std::size_t,
                      std::span<const resp::value>) const override {}
    std::string why_answer_does_not_count(std::size_t, std::size_t, std::span<const resp::value>,
                                          boost::system::error_code&) const override {
        return {};
    }
    bool runs_steps(std::size_t, const detail::node_call&) const override { return false; }
    std::uint64_t live_fence(const std::string&, const std::string&, clock::time_point) override { return 0; }
    std::chrono::nanoseconds suspended_so_far() const override { return {}; }
    detail::metrics_recorder& metrics() override { return metrics_; }

private:
    static std::vector<std::string> names_of(std::size_t nodes) {
        std::vector<std::string> names;
        for (std::size_t i = 0; i < nodes; ++i)
            names.push_back("node-" + std::to_string(i));
        return names;
    }
    detail::metrics_recorder metrics_;
    std::vector<std::string> names_;
    unsigned tokens_ = 0;
};

/// One acquisition driven by scripted answers: the first round is refused everywhere, every
/// later one granted everywhere; a cleanup is answered 1; a sleep ends when the fake clock
/// reaches it. `inject(k)` runs before the k-th event delivered (0: before the start).
class acquire_driver {
public:
    using clock = std::chrono::steady_clock;
    using event_type = detail::acquire_event::type;

    acquire_driver(lock_shape shape, std::size_t nodes, std::chrono::milliseconds wait)
        : acquire_driver(shape, nodes, setup(shape, nodes, wait)) {}

    /// Runs the acquisition to its end and on until nothing is pending (stragglers included).
    /// `inject(k, driver)` is called before the k-th event is delivered: it may add events of its
    /// own (a cancel), and for a node's reply return true to make that reply a failure (a timeout).
    template <class Inject>
    void run(Inject inject, std::size_t limit = 400) {
        std::size_t k = 0;
        (void)inject(k++, *this);  // before the start: no reply to fail yet
        resume(detail::acquire_event::of(event_type::start));
        while (k < limit) {
            if (!pending_.empty()) {
                auto p = pending_.front();
                pending_.pop_front();
                if (inject(k++, *this)) {
                    deliver(p, true);
                    continue;
                }
                deliver(p, false);
                continue;
            }
            if (sleeping_) {
                now_ = std::max(now_, wake_at_);
                sleeping_ = false;
                (void)inject(k++, *this);  // a timer does not fail: it may only be preceded
                resume(detail::acquire_event::sleep_ended_for(sleep_));
                continue;
            }
            return;  // nothing pending, nothing sleeping
        }
        stuck_ = true;
    }

    void resume(const detail::acquire_event& e) {
        ++resumes_;
        for (auto& a : fsm_.resume(e, now_, rng_))
            record(a);
    }
    void cancel() { resume(detail::acquire_event::of(event_type::cancel)); }

    // --- what came out --------------------------------------------------------------------------
    [[nodiscard]] std::size_t finishes() const noexcept { return finishes_; }
    [[nodiscard]] boost::system::error_code result() const noexcept { return result_; }
    [[nodiscard]] bool granted() const noexcept { return granted_; }
    [[nodiscard]] bool stuck() const noexcept { return stuck_; }
    /// Nodes that may still hold a token of ours that no release or cleanup followed.
    [[nodiscard]] std::vector<std::size_t> nodes_left_holding() const {
        std::vector<std::size_t> out;
        for (std::size_t i = 0; i < nodes_; ++i)
            for (const auto& t : held_[i])
                if (!released_[i].count(t)) {
                    out.push_back(i);
                    break;
                }
        return out;
    }
    /// Nodes that answered a round and got no unanswered release after the last round went out:
    /// a fair waiter's place, or a writer's mark, may be left there.
    [[nodiscard]] std::vector<std::size_t> places_left() const {
        std::vector<std::size_t> out;
        for (std::size_t i = 0; i < nodes_; ++i)
            if (answered_[i] && last_release_[i] < last_round_) out.push_back(i);
        return out;
    }
    [[nodiscard]] bool leaves_places() const noexcept {
        return shape_ == lock_shape::fair || shape_ == lock_shape::write;
    }
    [[nodiscard]] unsigned attempts() const noexcept { return fsm_.attempts(); }

private:
    acquire_driver(lock_shape shape, std::size_t nodes, detail::acquire_setup s)
        : shape_(shape),
          nodes_(nodes),
          context_(nodes),
          kind_(s.kind),
          fsm_(std::move(s), context_),
          held_(nodes),
          released_(nodes),
          answered_(nodes, false),
          last_release_(nodes, 0) {}

    struct pending_reply {
        event_type what;
        unsigned round;
        std::size_t node;
        std::string token;  // the round's, for an answer
    };

public:
    /// What an acquisition of "orders:42" (or of "a" and "b") of `shape` knows from its start.
    static detail::acquire_setup setup(lock_shape shape, std::size_t nodes, std::chrono::milliseconds wait) {
        detail::acquire_setup s;
        s.resource = "orders:42";
        s.nodes = nodes;
        s.options.ttl = std::chrono::milliseconds(2000);
        s.options.wait = wait;
        s.options.queue_timeout = std::chrono::milliseconds(900);
        s.node_timeout = std::chrono::milliseconds(100);
        s.background_timeout = std::chrono::milliseconds(1000);
        s.client_retry = retry_config{};
        auto& o = s.options;
        const auto keys = detail::keys_for("app:", s.resource);
        switch (shape) {
            case lock_shape::fenced:
                o.fenced = true;
                break;
            case lock_shape::reentrant:
                o.reentrant = true;
                o.owner = owner_id("worker-7");
                break;
            case lock_shape::fair:
                o.fair = true;
                break;
            case lock_shape::semaphore:
                o.permits = 3;
                break;
            case lock_shape::read:
                o.mode = lock_mode::read;
                break;
            case lock_shape::write:
                o.mode = lock_mode::write;
                break;
            default:
                break;
        }
        if (shape == lock_shape::several) {
            s.resources = {"a", "b"};
            s.kind = detail::make_multi_kind("app:", s.resources, o, false);
        } else {
            s.kind = detail::make_lock_kind(keys, o, "place-1");
        }
        return s;
    }

private:
    void record(const detail::acquire_action& a) {
        using type = detail::acquire_action::type;
        switch (a.what) {
            case type::send:
                for (std::size_t i = 0; i < nodes_; ++i) {
                    if (a.nodes && !(*a.nodes)[i]) continue;  // null: every node
                    const auto args = a.call->arg_span();
                    if (!a.reply || *a.reply == event_type::cleanup_done) {
                        for (auto arg : args)
                            released_[i].insert(std::string(arg));
                        if (!a.reply) last_release_[i] = resumes_;
                    }
                    if (a.reply == event_type::answer) last_round_ = resumes_;
                    if (a.reply) pending_.push_back({*a.reply, a.round, i, token_of(a.round)});
                }
                return;
            case type::confirm_replicas:
                pending_.push_back({event_type::replicas_confirmed, a.round, a.node, {}});
                return;
            case type::sleep_until:
                sleeping_ = true;
                wake_at_ = a.at;
                sleep_ = a.sleep;
                return;
            case type::end_sleep:
                sleeping_ = false;
                return;
            case type::listen:
                return;
            case type::finish:
                ++finishes_;
                result_ = a.ec;
                granted_ = a.won.has_value();
                return;
        }
    }

    [[nodiscard]] std::string token_of(unsigned round) const {
        auto token = kind_->round_value(round);
        return token.empty() ? "tok-" + std::to_string(round) : token;
    }

    void deliver(const pending_reply& p, bool failed) {
        std::vector<resp::value> replies;
        boost::system::error_code ec;
        if (failed) {
            ec = error::request_timeout;
        } else if (p.what == event_type::answer) {
            const bool grant = p.round > 1;
            replies = answer(grant);
            if (grant) held_[p.node].insert(p.token);
            answered_[p.node] = true;
        } else {
            replies.push_back(integer_reply(1));
        }
        if (failed && p.what == event_type::answer) held_[p.node].insert(p.token);  // it may have run
        auto e = detail::acquire_event::from_node(p.what, p.round, p.node, ec, replies);
        if (p.what == event_type::replicas_confirmed) e.verdict = detail::replication_verdict{};
        resume(e);
    }

    [[nodiscard]] std::vector<resp::value> answer(bool grant) const {
        switch (shape_) {
            case lock_shape::plain: {
                // SET NX GET's value (nil: ours now), then the holder's PTTL.
                std::vector<resp::value> r;
                r.push_back(grant ? resp::value{} : bulk_reply("someone-else"));
                r.push_back(integer_reply(grant ? -2 : 500));
                return r;
            }
            case lock_shape::fenced:
                return {grant ? integers_reply({1, 7}) : integers_reply({0, 500})};
            case lock_shape::reentrant:
                return {integer_reply(grant ? 1 : -500)};
            case lock_shape::fair:
                return {grant ? integers_reply({1, 0, 5, 0}) : integers_reply({0, 500, 5, 1})};
            case lock_shape::semaphore:
            case lock_shape::read:
            case lock_shape::write:
                return {grant ? integers_reply({1, 0}) : integers_reply({0, 500})};
            case lock_shape::several:
                return {grant ? integers_reply({1, 0}) : integers_reply({0, 500, 1})};
        }
        return {};
    }

    lock_shape shape_;
    std::size_t nodes_;
    fake_acquire_context context_;
    std::shared_ptr<const detail::lock_kind> kind_;
    detail::acquire_fsm fsm_;
    clock::time_point now_ = clock::time_point() + std::chrono::hours(1);
    std::mt19937_64 rng_{7};
    std::deque<pending_reply> pending_;
    bool sleeping_ = false;
    clock::time_point wake_at_;
    unsigned sleep_ = 0;
    std::size_t finishes_ = 0;
    boost::system::error_code result_;
    bool granted_ = false;
    bool stuck_ = false;
    std::size_t resumes_ = 0;
    std::size_t last_round_ = 0;                   // the resume that sent the last round
    std::vector<std::set<std::string>> held_;      // per node: tokens of ours it granted (or may have)
    std::vector<std::set<std::string>> released_;  // per node: tokens a release or cleanup named
    std::vector<bool> answered_;
    std::vector<std::size_t> last_release_;  // per node: the resume that sent it the last unanswered release
};

}  // namespace redlock::test

#endif
