// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_LEASE_ROUNDS_HPP
#define REDLOCK_LOCK_LEASE_LEASE_ROUNDS_HPP

#include "lock/acquire/quorum.hpp"
#include "lock/acquire/round_report.hpp"
#include "lock/lease/lease_ops.hpp"
#include "lock/lease/lease_state.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// The I/O of one round of a lease over all N nodes (extend, release, check): sends it, counts
/// the answers, completes its caller once, and can be cancelled at any point (the commands
/// already sent still run). What an extend's outcome means is the lease machine's to decide
/// (lease_fsm.hpp); a release's or a check's only reports to its caller.
class lease_round : public std::enable_shared_from_this<lease_round>, public node_answers {
public:
    lease_round(std::shared_ptr<lease_state> state, const char* operation, diagnostics* diag,
                lease_handler h);
    virtual ~lease_round() = default;
    lease_round(const lease_round&) = delete;
    lease_round& operator=(const lease_round&) = delete;

    /// On the initiating thread, before start().
    void connect_cancellation();
    /// On the strand, from here on.
    virtual void start() = 0;
    virtual void cancel();
    /// Completes the caller, if any and not yet, with `ec`; `outcome` ends the diagnostics' summary.
    void finish(boost::system::error_code ec, std::string_view outcome);

    /// A node's answer: the script's reply, the first of `replies`.
    void on_node_answer(call_tag tag, std::size_t node, boost::system::error_code ec,
                        std::span<const resp::value> replies) override;

protected:
    void on_reply(std::size_t node, boost::system::error_code ec, const resp::value& v);
    /// Whether a node's answer says it did it (true) or that the lease is not ours there (false);
    /// nullopt for an answer the script never gives.
    [[nodiscard]] virtual std::optional<bool> did_it(const resp::value& v) const;
    /// Node `node` did it: its vote, unless the round waits for more.
    virtual void on_done_by(std::size_t node) { count(node, vote::granted, {}, {}); }
    void count(std::size_t node, vote verdict, boost::system::error_code ec, std::string detail);
    virtual void decided() = 0;
    /// A majority without our token, after lease::handover(): the adoption, not a loss.
    [[nodiscard]] bool finished_as_handed_over();

    std::shared_ptr<lease_state> state_;
    std::shared_ptr<client_state> client_;
    diagnostics* diag_;
    lease_handler handler_;
    vote_tally tally_;
    round_report report_;
    bool done_ = false;
};

/// One extend, the caller's (lease::async_extend) or the machine's own (the watchdog's, a
/// hand-off's): numbered by the machine, which asks for it (send()) and decides its outcome.
class extend_round final : public lease_round {
public:
    extend_round(std::shared_ptr<lease_state> state, std::uint64_t id, std::chrono::milliseconds ttl,
                 diagnostics* diag, lease_handler h);

    [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
    /// The caller's: asks the machine (extend_requested).
    void start() override;
    void cancel() override;
    /// The machine's send_extend.
    void send();

    // With lock_options::replicas: an extend with its WAIT behind it (`tag.what` pinned_wait)
    // is judged on both; a WAIT of its own (confirm_replicas) counts the node.
    void on_node_answer(call_tag tag, std::size_t node, boost::system::error_code ec,
                        std::span<const resp::value> replies) override;
    void on_replicas(call_tag tag, std::size_t node, replication_verdict verdict) override;

private:
    static constexpr unsigned pinned_wait = 1;  // call_tag::what of an extend sent with its WAIT

    void send_waited();
    void on_done_by(std::size_t node) override;
    void decided() override;

    std::uint64_t id_;
    std::chrono::milliseconds ttl_;
    std::size_t wait_reply_ = 0;  // send_waited()'s: where its replies have the WAIT's
    std::vector<std::optional<replication_verdict>> replication_;  // per node: its pinned WAIT's verdict
};

/// lease::async_release, after its caller moved the lease out of held: ends the lease through
/// the machine, which asks for the release (send()).
class release_round final : public lease_round {
public:
    using lease_round::lease_round;
    void start() override;
    void send();

private:
    void decided() override;
};

/// lease::async_check: check.lua on every node; the lease is not changed.
class check_round final : public lease_round {
public:
    using lease_round::lease_round;
    void start() override;

private:
    [[nodiscard]] std::optional<bool> did_it(const resp::value& v) const override;
    void decided() override;
};

}  // namespace redlock::detail

#endif
