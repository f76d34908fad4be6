// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_OPTIONS_HPP
#define REDLOCK_LOCK_OPTIONS_HPP

#include <redlock/config.hpp>
#include <redlock/export.hpp>
#include <redlock/owner_id.hpp>

#include <chrono>
#include <optional>

namespace redlock {

/// How an acquire with `wait > 0` waits between attempts.
enum class wait_strategy {
    /// Sleep until a release of the resource is published (one subscriber connection per node
    /// for the whole client), or at most until the holder's lease would expire or the backoff
    /// (retry.max_delay, doubling per wait up to 8x) runs out, whichever is first.
    notify,
    /// Retry after a random delay in [retry.min_delay, retry.max_delay], as redsync does.
    spin,
};

/// Whether an acquisition holds the resource alone or shares it (a read-write lock).
enum class lock_mode {
    /// A lock: one holder (or one owner's holds, reentrant).
    exclusive,
    /// A read hold of a read-write lock: readers share the resource with each other, never with a
    /// writer or an exclusive lock.
    read,
    /// A write hold of a read-write lock: alone, as an exclusive lock is; beside that, while it
    /// waits (`wait` > 0) it holds new readers off, so that a stream of readers cannot starve it.
    write,
};

/// How one acquisition behaves. The defaults take a 10 s lease and try once.
struct REDLOCK_API lock_options {
    /// Lease length on the servers; in (0, client_config::max_ttl].
    std::chrono::milliseconds ttl{10000};
    /// 0: one attempt, error::not_acquired if the resource is held. > 0: retry after a random
    /// delay until this much time has passed since the call, then error::wait_timeout.
    std::chrono::milliseconds wait{0};
    /// How a waiting acquire waits between attempts.
    wait_strategy waiting = wait_strategy::notify;
    /// Overrides client_config::retry for this acquisition.
    std::optional<retry_config> retry;
    /// Per-node timeout of each command; zero: min(client_config::node_timeout, ttl / 10).
    std::chrono::milliseconds node_timeout{0};
    /// A grant whose validity left is not above this is error::validity_expired.
    std::chrono::milliseconds min_validity{0};

    /// Keeps the lease alive until it is released or dropped: a watchdog extends it to `ttl`
    /// every `renew_every`, retries a failed extension quickly, and declares the lease lost
    /// (lease::async_wait_lost) when no quorum confirmed one before the validity ran out, or as
    /// soon as a majority of nodes no longer hold our token. async_with_lock always turns it on.
    bool watchdog = false;
    /// How often the watchdog extends; zero: ttl / 3. Must be below ttl.
    std::chrono::milliseconds renew_every{0};
    /// Caps how long the watchdog keeps the lease alive, counted from the acquire; zero: no cap.
    /// Past it the lease is released and declared lost (the Redlock spec asks for a bound, or a
    /// holder stuck in its critical section keeps everybody else out for ever).
    std::chrono::milliseconds max_hold{0};

    /// A reentrant lock: acquisitions by the same `owner` while it holds the lock succeed at
    /// once, each giving its own lease; the lock is freed when the last of them is released.
    /// Another owner, or a plain lock, is refused meanwhile. Extend and the watchdog work on it.
    bool reentrant = false;
    /// The owner of a reentrant lock (required with `reentrant`, refused without it).
    owner_id owner;
    /// What the holder is, for operators (at most 64 bytes, no newline): recorded with the
    /// host name and process id in the lease's token (client_config::identify_holder) and shown
    /// by async_inspect and `redlock inspect`.
    std::string label;

    /// Number each grant with a fencing token (lease::fence()): a 64-bit number that strictly
    /// increases from one holder of the resource to the next, also across Redlock quorums (the
    /// largest of the granting quorum, written back to a quorum before the lease is returned).
    /// Pass it to the protected resource, which refuses writes with a lower fence than it has
    /// seen (redlock::async_fenced_set). Needs nodes that keep their counters across restarts
    /// (persistence). With `reentrant`, a re-entry gets the fence of the hold it enters; with
    /// `fair`, the fence follows the queue's order.
    bool fenced = false;

    /// For a master with replicas (Redisson's approach): each grant is followed by `WAIT
    /// replicas replica_timeout` (in the same request for a plain lock; after the script's reply,
    /// one more round trip, for reentrant, fair and fenced ones), and a node whose grant fewer
    /// replicas acknowledged does not count; with N = 1 the acquire then fails with
    /// error::not_replicated and releases the key. The lease's extends and renewals wait the
    /// same way (a node whose replicas did not acknowledge the extend does not count), and a
    /// fair hand-off is taken by the head's next round, which waits too. The WAIT holds the
    /// node's connection for up to replica_timeout. 0: no WAIT.
    int replicas = 0;
    std::chrono::milliseconds replica_timeout{100};

    /// A fair lock: waiters queue by ticket and get the lock in the order they came (first in,
    /// first out); a release wakes only the next waiter, on its own channel. A free lock is
    /// refused to newcomers while others queue for it. Not with `reentrant`. With N > 1 the
    /// tickets come from a quorum of nodes, so every node orders the waiters the same way.
    /// Use it for every acquisition of a resource: a plain acquire does not look at the queue.
    bool fair = false;
    /// A fair waiter refreshes its place in the queue every third of this; a waiter that stops
    /// (crashed, paused, cut off) loses its place this long after its last refresh, measured
    /// by the server's clock, and no longer holds up the waiters behind it.
    std::chrono::milliseconds queue_timeout{5000};

    /// A semaphore (Redisson's RPermitExpirableSemaphore): at most `permits` acquisitions hold
    /// the resource at once, each lease on one permit, which expires by the server's clock
    /// (a dead holder's permit comes back after its ttl). 0: a lock (one holder). Every
    /// acquisition of a resource must name the same count while permits are in use; one that
    /// names another fails with error::permits_mismatch. Not with `reentrant`, `fair` or
    /// `fenced` (holders at once have no order to number). With N > 1 a permit counts when a quorum of nodes
    /// granted it: at most `permits` holders on each node, but up to floor(permits * N / quorum) holders in
    /// all (docs/safety.md).
    int permits = 0;
    /// A read-write lock (Redisson's RReadWriteLock): `read` holds share the resource, a `write`
    /// hold has it alone. Each hold expires by the server's clock (a dead reader holds writers
    /// off for its ttl at most). Writer preference: a writer that waits holds new readers off
    /// (for `queue_timeout` after each of its attempts, so a writer that died stops doing it),
    /// while the readers already in finish. With `reentrant`, holds of one `owner` go together:
    /// an owner that holds the resource in either mode may also read it (a writer that reads
    /// too, then releases its write, has downgraded), and a writer may write again; an owner that
    /// only reads and asks to write is refused at once with error::upgrade_refused (two such
    /// owners would wait for each other for ever). Not `fair`, not a semaphore; `fenced` numbers
    /// the writes (not with `reentrant`), and a reader is not numbered. An exclusive lock of the
    /// same resource excludes readers and writers, but does not hold readers off while it waits.
    lock_mode mode = lock_mode::exclusive;
};

}  // namespace redlock

#endif
