// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_KINDS_LOCK_KIND_HPP
#define REDLOCK_LOCK_KINDS_LOCK_KIND_HPP

#include "lock/acquire/quorum.hpp"
#include "lock/client/resource_keys.hpp"
#include "lock/nodes/replica_waits.hpp"
#include "lock/nodes/slot_steps.hpp"
#include <redlock/lock_options.hpp>
#include <redlock/redis/script.hpp>
#include <redlock/resp/request.hpp>
#include <redlock/resp/value.hpp>

#include <boost/system/error_code.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// One command for every node of a round, built by a lock's kind: a script call (EVALSHA; the
/// connection falls back to EVAL on NOSCRIPT) or a pipeline. Its views point into the kind,
/// the caller's strings and its own `numbers`: it is sent where it was built, never copied.
struct node_call {
    node_call() = default;
    node_call(const node_call&) = delete;
    node_call& operator=(const node_call&) = delete;

    const redis::script* script = nullptr;   ///< null: `pipeline`
    std::array<std::string_view, 6> keys{};  ///< a script's KEYS; a pipeline's first key
    std::size_t key_count = 0;
    /// Instead of `keys`, when not empty: a kind's own list (a lock over several resources)
    std::span<const std::string_view> key_list{};
    std::array<std::string_view, 9> args{};
    std::size_t arg_count = 0;
    std::array<std::string, 2> owned;  ///< strings of its own that `keys` and `args` may point to

    resp::request pipeline;
    std::size_t pttl_reply = 0;            ///< in the pipeline's replies: the holder's PTTL; 0: not asked
    std::size_t wait_reply = 0;            ///< in the replies: WAIT's; 0: not asked
    std::size_t replication_id_reply = 0;  ///< in the replies: INFO replication's; 0: not asked
    /// A script's: commands without keys sent right behind it on the same connection (its WAIT)
    resp::request after_script;

    /// A lock over several resources, for a Redis Cluster node, where they lie on several
    /// slots: the call as one script call per slot, run one after another (slot_steps.hpp);
    /// empty when the kind does not split. A single server runs the whole call instead.
    std::list<node_call> steps;
    /// An acquire's steps: the release of each (announced), for those granted before one that was not.
    std::list<node_call> undo;
    /// steps[s]'s resources, as indexes into the whole call's
    std::vector<std::vector<std::size_t>> step_members;
    step_merge merge = step_merge::all_ones;

    /// Empty again, to be built anew (a round's call is kept for reading its replies).
    void clear() noexcept {
        script = nullptr;
        key_count = 0;
        key_list = {};
        arg_count = 0;
        pipeline.clear();
        pttl_reply = 0;
        wait_reply = 0;
        replication_id_reply = 0;
        after_script.clear();
        steps.clear();
        undo.clear();
        step_members.clear();
    }
    /// Adds a step (or an acquire's undo step) to be built.
    node_call& step() { return steps.emplace_back(); }
    node_call& undo_step() { return undo.emplace_back(); }
    void key(std::string_view k) { keys[key_count++] = k; }
    void arg(std::string_view a) { args[arg_count++] = a; }
    [[nodiscard]] std::span<const std::string_view> key_span() const {
        return key_list.empty() ? std::span<const std::string_view>(keys.data(), key_count) : key_list;
    }
    /// The key that routes the call in a cluster (all of a resource's keys share its slot): a
    /// script's first key; a pipeline names it with key() too.
    [[nodiscard]] std::string_view route_key() const {
        const auto all = key_span();
        return all.empty() ? std::string_view() : all.front();
    }
    [[nodiscard]] std::span<const std::string_view> arg_span() const { return {args.data(), arg_count}; }
    /// How many replies the node owes: one per pipelined command; a script's, then one per
    /// command after it.
    [[nodiscard]] std::size_t replies() const { return script ? 1 + after_script.size() : pipeline.size(); }
    /// The call's write counts once `replicas` replicas have it: a WAIT right behind it, on the
    /// connection that carries it (WAIT covers what its own connection wrote before it; sent
    /// alone it could reach another connection, or another master after a redirect, and answer
    /// for writes that were not ours). A cluster's call split into steps runs without it.
    /// Nothing when `replicas` is 0 or the call has its WAIT already (a plain lock's pipeline).
    void wait_for_replicas(int replicas, std::chrono::milliseconds timeout) {
        if (replicas <= 0 || wait_reply != 0) return;
        auto& trailer = script ? after_script : pipeline;
        trailer.push("WAIT", replicas, timeout.count());
        wait_reply = replies() - 1;
    }
    /// The server's replication ID right behind the call, on its connection, for judging a
    /// grant (node_health_board::granted_under): after the write, so a promotion before it shows.
    /// Nothing when `asked` is false or the call asks it already. After wait_for_replicas().
    void ask_replication_id(bool asked) {
        if (!asked || replication_id_reply != 0) return;
        auto& trailer = script ? after_script : pipeline;
        trailer.push("INFO", "replication");
        replication_id_reply = replies() - 1;
    }
    /// The call's timeout: its WAIT may hold the node `replica_timeout` longer.
    [[nodiscard]] std::chrono::milliseconds timeout(std::chrono::milliseconds node_timeout,
                                                    std::chrono::milliseconds replica_timeout) const {
        return wait_reply != 0 ? node_timeout + replica_timeout : node_timeout;
    }
};

/// What one round asks of every node, beside what the kind knows for the whole acquisition.
struct round_request {
    std::string_view token;           ///< this round's: the value it writes to the lock
    std::string_view previous_token;  ///< the round's before it (ours to take over); empty: none
    bool ask_holder_pttl = false;     ///< a waiter sleeps at most until the holder's key expires
    bool wait = false;                ///< a fair lock: keep our place in the queue when refused
    std::uint64_t ticket = 0;         ///< a fair lock: ours; 0: to be numbered
    bool single_node = false;         ///< a fair lock without a ticket: the one node numbers us
};

/// A fair waiter's place on one node.
struct queue_place {
    std::int64_t ticket = 0;  ///< 0: not numbered there
    std::int64_t rank = -1;   ///< 0: the head of the queue; -1: not queued
};

/// What a refused round of a waiting acquisition leaves of ours on the nodes, kept until its
/// next round: how the acquisition waits, asked of its kind once. By default nothing, and each
/// round starts afresh.
struct between_rounds {
    /// A refused round leaves a trace of ours where it was refused (a place in a queue, a mark
    /// that holds newcomers off): the acquisition's end releases (`announce` false) on every
    /// node, and a won round takes it away where it was refused.
    bool leaves_trace = false;
    /// The trace is a numbered place in a first-come queue: answers say where
    /// (acquire_answer::place), a quorum's largest number is ours from then on (round_request::
    /// ticket), and a release hands the lock to the queue's head, woken on `wake_channel`.
    bool queued = false;
    std::string_view place;         ///< queued: ours, as a hand-off names it
    std::string_view wake_channel;  ///< queued: where a release wakes us alone
    /// Not zero: the trace lapses this long after its round, unless the next round renews it.
    std::chrono::milliseconds lapses_after{0};
};

/// One node's answer to a round's acquire, read by the lock's kind.
struct acquire_answer {
    vote verdict = vote::failed;
    boost::system::error_code ec;             ///< failed: why
    std::string detail;                       ///< failed: the server's words, or the reply that made no sense
    bool node_fault = false;                  ///< failed by what the node answered: counts against the node
    std::optional<std::int64_t> holder_pttl;  ///< denied: how long the holder's key lives, as read
    std::optional<std::int64_t> fence;        ///< granted, fenced: the node's fence of the grant
    /// granted, fenced, several resources: the node's fence of each (`fence` is the first's)
    std::vector<std::int64_t> fences;
    bool numbered = true;  ///< granted, fenced reentrant: this call numbered the hold (not an entry)
    std::optional<queue_place> place;  ///< a fair lock: where the node queues us
    std::string held_by;               ///< denied, a plain lock: the value in the key
    std::size_t blocked_by = 0;        ///< denied, a lock over several resources: which one was held
    /// granted with WAIT pipelined: whether enough replicas have the grant (the vote fails if not)
    std::optional<replication_verdict> replication;

    /// Every fence of a fenced grant: `fences`, or `fence` alone; empty unfenced.
    [[nodiscard]] std::span<const std::int64_t> all_fences() const noexcept {
        if (!fences.empty()) return fences;
        return fence ? std::span<const std::int64_t>(&*fence, 1) : std::span<const std::int64_t>();
    }
};

/// One handover.lua call: the token that holds and the one that is to, and for a hold with an
/// owner (reentrant) the owner that holds and the one that is to. The views outlive the call's
/// sending.
struct hand_over_step {
    std::string_view from;
    std::string_view to;
    std::string_view from_owner;
    std::string_view to_owner;
    std::chrono::milliseconds ttl{0};
};

/// One kind of lock (plain, reentrant, fair, semaphore, read-write): the script calls of its acquire,
/// cleanup, release and extend, and how it reads a node's answer. No I/O: the acquire operation and the lease
/// send what it builds. Created once per acquisition, then shared by its lease.
class lock_kind {
public:
    virtual ~lock_kind() = default;

    [[nodiscard]] const resource_keys& keys() const noexcept { return keys_; }
    /// Empty for a lock without an owner; a reentrant lock's owner id.
    [[nodiscard]] virtual std::string_view owner() const noexcept { return {}; }
    /// What an acquisition that waits keeps on the nodes between its rounds; by default nothing.
    [[nodiscard]] virtual between_rounds kept_between_rounds() const noexcept { return {}; }
    /// A lock over several resources: their names (sorted); empty for one resource.
    [[nodiscard]] virtual std::span<const std::string> resources() const noexcept { return {}; }
    /// A lock over several resources: every one's lock key (on a cluster each slot's master
    /// votes on its own); empty for one resource, whose lock key is keys().lock.
    [[nodiscard]] virtual std::span<const std::string_view> lock_keys() const noexcept { return {}; }
    /// Whether a re-entry of this client's live hold keeps the hold's fence (a fenced reentrant
    /// lock): the acquisition offers the hold's fence (owned_holds::live_fence), and its
    /// grant is registered there (owned_holds::add), under owner().
    [[nodiscard]] virtual bool reenters_fenced() const noexcept { return false; }
    /// A semaphore's count of permits; 0 for a lock.
    [[nodiscard]] virtual int permits() const noexcept { return 0; }
    /// A read-write lock's read or write; exclusive for the other kinds.
    [[nodiscard]] virtual lock_mode mode() const noexcept { return lock_mode::exclusive; }

    /// The channel a release of the kind's resource number `i` (acquire_answer::blocked_by) is
    /// published on: a waiter listens where it was refused.
    [[nodiscard]] virtual const std::string& released_channel(std::size_t i) const noexcept {
        (void)i;
        return keys_.released;
    }

    /// The value round number `round` (1, 2, ...) of an acquisition writes to the lock; empty:
    /// a new token. A fair lock's is "<place>.<round>": its script takes a value of any earlier
    /// round of the acquisition, and never a later one's (fair.lua).
    [[nodiscard]] virtual std::string round_value(unsigned round) const {
        (void)round;
        return {};
    }
    /// The acquire that round `r` sends to every node.
    virtual void acquire(const round_request& r, node_call& out) const = 0;
    /// A node's answer to `sent`: `ec` the transport's failure (timeout, connection), else its
    /// replies, as many as `sent.replies()`.
    [[nodiscard]] virtual acquire_answer read_acquire(const node_call& sent, boost::system::error_code ec,
                                                      std::span<const resp::value> replies) const = 0;
    /// Frees what a failed round may have written where it did not win, without waking
    /// anyone; a fair lock keeps our place at `ticket` (0: leaves the queue).
    virtual void round_cleanup(std::string_view token, std::uint64_t ticket, node_call& out) const = 0;
    /// Frees the lock where it holds `value`: the end of an acquisition (`announce` false: a
    /// cancelled or failed attempt, no message) or of its lease.
    virtual void release(std::string_view value, bool announce, node_call& out) const = 0;
    /// A fair lock: takes our place out of the queue, nothing else (`value`: the current
    /// round's token). False: no queue.
    virtual bool leave_queue(std::string_view value, node_call& out) const {
        (void)value;
        (void)out;
        return false;
    }
    /// Puts round token `token` in the place of `earlier`, the token of an earlier round of
    /// ours whose reply was lost and whose cleanup has not arrived, with the full ttl from now
    /// (takeover.lua): the late cleanup then deletes nothing. Its answer is 1 (taken over) or
    /// 0. False: this kind's answers never name an earlier round (acquire_answer::held_by).
    virtual bool take_over(std::string_view earlier, std::string_view token, node_call& out) const {
        (void)earlier;
        (void)token;
        (void)out;
        return false;
    }

    /// Moves the expiry of the hold where the lock holds `token` to `ttl` from now; the answer
    /// is 1 (extended) or 0 (not ours). By default extend.lua, whose calls the client batches
    /// across leases (extend_batcher) when extends_in_batches().
    virtual void extend(std::string_view token, std::chrono::milliseconds ttl, node_call& out) const;
    [[nodiscard]] virtual bool extends_in_batches() const noexcept { return true; }

    /// check.lua: the ms the hold of `token` has left (0: not held), reading only.
    virtual void check(std::string_view token, node_call& out) const;

    /// handover.lua: where `step.from` holds, `step.to` holds instead, for at least `step.ttl`
    /// from now (the expiry never shrinks), and a reentrant hold's owner becomes `step.to_owner`;
    /// the answer is 1 (handed over), 0 (`from` holds nothing there) or -1 (its owner re-entered
    /// it there). By default the lock key's string value, as a plain or fair lock's.
    virtual void hand_over(const hand_over_step& step, node_call& out) const;

    /// A fenced lock's counter beside the lock key; empty unfenced.
    [[nodiscard]] const std::string& fence_key() const noexcept { return fence_key_; }
    /// fence_writeback.lua: raises the node's counter to `fences` (one per resource) where
    /// `token` holds the lock (for our owner, with one); answers 1 if it did.
    virtual void write_back_fence(std::string_view token, std::span<const std::uint64_t> fences,
                                  node_call& out) const;

protected:
    lock_kind(resource_keys keys, const lock_options& options);

    [[nodiscard]] bool fenced() const noexcept { return !fence_key_.empty(); }
    /// lock_options::ttl as the scripts' argument.
    [[nodiscard]] const std::string& ttl_text() const noexcept { return ttl_text_; }

private:
    resource_keys keys_;
    std::string fence_key_;
    std::string ttl_text_;
};

/// handover.lua's script and arguments for a hold of `shape` ("string", "reentrant", "permit",
/// "rw"); the caller adds the keys, and the owners after them where the shape has one.
void hand_over_call(std::string_view shape, const hand_over_step& step, node_call& out);

/// The kind of lock `options` ask for on `keys`; `place` is a fair acquisition's place in the
/// queue (unused by the other kinds). The options are valid (validate_lock_options).
[[nodiscard]] std::shared_ptr<const lock_kind> make_lock_kind(resource_keys keys, const lock_options& options,
                                                              std::string place);

// One factory per kind, each in its own file.
[[nodiscard]] std::shared_ptr<const lock_kind> make_plain_kind(resource_keys keys,
                                                               const lock_options& options);
[[nodiscard]] std::shared_ptr<const lock_kind> make_reentrant_kind(resource_keys keys,
                                                                   const lock_options& options);
[[nodiscard]] std::shared_ptr<const lock_kind> make_semaphore_kind(resource_keys keys,
                                                                   const lock_options& options);
[[nodiscard]] std::shared_ptr<const lock_kind> make_read_write_kind(resource_keys keys,
                                                                    const lock_options& options);
/// A plain lock over several resources at once (`resources`: their names, sorted, distinct,
/// at least two; `prefix`: client_config::key_prefix). `split_by_slot`: some node is a Redis
/// Cluster, whose calls then come split by slot too (node_call::steps).
[[nodiscard]] std::shared_ptr<const lock_kind> make_multi_kind(std::string_view prefix,
                                                               std::vector<std::string> resources,
                                                               const lock_options& options,
                                                               bool split_by_slot);
[[nodiscard]] std::shared_ptr<const lock_kind> make_fair_kind(resource_keys keys, const lock_options& options,
                                                              std::string place);

}  // namespace redlock::detail

#endif
