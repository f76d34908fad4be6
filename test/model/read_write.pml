/* SPDX-License-Identifier: BSL-1.0 */
/* read_write.pml: a model of redlock-asio's read-write lock (lock_options::mode), checked by
 * check_model (its runs: read_write.runs). NN nodes (knob N: 1 to 3), 3 clients, each a reader
 * or a writer (knob WRITERS), clients 0 and 1 of one owner (a reentrant lock's, knob
 * SHARED_OWNER) or of none; each client's rounds (a token per round), its lease, its extends,
 * its release; a waiting writer's mark; a network that reorders (and loses, with LOSSES); one
 * clock, holds expiring DRIFT early.
 * It follows the scripts, one atomic step each (rw_node.pml):
 *   src/scripts/rw_acquire.lua  lines 36-112 (rw_acquire): the previous round's hold and mark
 *                               (41-45), our own hold (55-58), the owner's holds and those in
 *                               the way (60-78), a writer (80-98: upgrade refused 81-83, the
 *                               mark 93-96), a reader (100-112: writer preference 100-110)
 *   src/scripts/rw_release.lua  lines 16-44 (rw_release: "unmark", "quiet", "leave", none)
 *   src/scripts/rw_extend.lua   lines 10-23 (rw_extend)
 * and the client side (rw_client.pml) as src/lock/kinds/read_write.cpp drives it through the
 * same rounds as a lock: acquire_round.cpp (tally, validity, nodes_to_release), acquire_fsm.cpp
 * (grant; succeed: the won round's mark leaves the other nodes), acquire_fsm_waits.cpp
 * (fail_round: a caller's mistake ends the acquisition; leave), lease_ops.cpp (extend, release).
 * Property (an assertion, checked where a client's belief begins: a grant, an extend):
 *   readers_and_writer_apart  never a writer that believes it holds (a lease with validity left
 *                             by its own clock) while another client of another owner (or of
 *                             none) believes it holds, in either mode. Holds of one owner are
 *                             exempt from each other (a downgrade: docs/safety.md "Read-write
 *                             locks").
 * Writer preference is a liveness rule: the model checks only that the marks never break the
 * property (they refuse readers, never grant), not that a writer gets in.
 * The negative control (a knob, read_write.runs): READER_SKIPS_WRITER, a reader's check of the
 * writers' holds skipped (rw_acquire.lua line 72 without `m ~= 'r'`).
 * Outside the model: fences (a writer's fence is the lock's counter and rules, redlock.pml
 * checks them), restarts (the quarantine), a key of another kind (the plain lock's string, a
 * semaphore's count), hand-over, the pub/sub wake-ups (they only decide when a round is sent,
 * which the scheduler decides here), a request counted failed by its node timeout before it
 * runs (redlock.pml's LATE; here a request still runs after its round was decided). */

#include "common.pml"

#define MAXC     3      /* clients */
#define MAXN     3      /* nodes at most; N of them run */
#define MAXR     2      /* rounds of a client over the run (network: a bit per round) */
#define BIT(x)   (1 << (x))

#define DRIFT    1      /* a node may expire a hold this much earlier than the client's clock */

/* --- the knobs (their defaults in init_knobs) --------------------------------------------- */
byte k_n;          /* N: nodes, 1 to 3 */
byte k_ttl;        /* TTL: every hold's ttl (ARGV[2]) */
byte k_maxt;       /* MAXT: the clock stops here */
byte k_margin;     /* drift_allowance: DRIFT */
byte k_rounds[MAXC]; /* ROUNDS: rounds of each client over the run (retries and new
                       * acquisitions); ROUNDS_<c>: client c's, if other */
byte k_extends;    /* EXTENDS: extends per lease */
byte k_qt;         /* QT: queue_timeout, how long a waiting writer's mark lasts (ARGV[5]) */
byte losses;       /* LOSSES: requests or replies the network may lose over the run */
bool waits;        /* WAIT: writers wait (wait > 0), so leave a mark where refused */
bool reader_skips_writer; /* READER_SKIPS_WRITER (negative control): rw_acquire.lua line 72
                           * without `m ~= 'r'` for a reader: a writer's hold is not in its way */
#define NN        k_n
#define TTL       k_ttl
#define MAXT      k_maxt
#define MARGIN    k_margin
#define ROUNDS(c) k_rounds[c]
#define EXTENDS   k_extends
#define QT        k_qt
#define Q         (NN / 2 + 1)          /* src/lock/quorum.hpp quorum_of */
#define MAY_FAIL  (NN - Q)

/* Each client's mode and owner, set once by init (lock_options::mode, owner with reentrant). */
#define READ   0
#define WRITE  1
#define NO_OWNER 0
byte mode[MAXC];
byte owner[MAXC];

inline init_knobs() {
    c_code {
        now.k_n = model_knob("N", 3, 1, 3);
        now.k_ttl = model_knob("TTL", 2, 2, 6);
        now.k_maxt = model_knob("MAXT", 3, 1, 10);
        int rounds = model_knob("ROUNDS", 1, 0, 2);
        now.k_rounds[0] = model_knob("ROUNDS_0", rounds, 0, 2);
        now.k_rounds[1] = model_knob("ROUNDS_1", rounds, 0, 2);
        now.k_rounds[2] = model_knob("ROUNDS_2", rounds, 0, 2);
        now.k_extends = model_knob("EXTENDS", 0, 0, 2);
        now.k_qt = model_knob("QT", 3, 1, 10);
        now.losses = model_knob("LOSSES", 0, 0, 3);
        now.waits = model_knob("WAIT", 1, 0, 1);
        now.reader_skips_writer = model_knob("READER_SKIPS_WRITER", 0, 0, 1);
        now.k_margin = 1;
        /* WRITERS: a bit per client that writes; the others read. Client 0 writes by default. */
        int writers = model_knob("WRITERS", 1, 0, 7);
        int shared = model_knob("SHARED_OWNER", 1, 0, 1);
        for (int c = 0; c < 3; c++) now.mode[c] = (writers >> c) & 1;
        now.owner[0] = shared ? 1 : 0;
        now.owner[1] = shared ? 1 : 0;
        now.owner[2] = 0;
        printf("model knobs: N=%d TTL=%d MAXT=%d ROUNDS=%d,%d,%d EXTENDS=%d QT=%d LOSSES=%d WAIT=%d "
               "WRITERS=%d SHARED_OWNER=%d READER_SKIPS_WRITER=%d\n",
               now.k_n, now.k_ttl, now.k_maxt, now.k_rounds[0], now.k_rounds[1], now.k_rounds[2], now.k_extends, now.k_qt, now.losses,
               now.waits, writers, shared, now.reader_skips_writer);
    }
}

/* --- the nodes' state --------------------------------------------------------------------- */
/* Per node: KEYS[1] (holders, scored by expiry) and KEYS[2] (each holder's mode and owner) as
 * one entry per token (client c, round r): the tick at which the node expires its hold, 0 for
 * none; its mode and owner are its client's. KEYS[3] (waiting writers) likewise: the tick its
 * mark lapses, 0 for none. */
byte hexp[MAXN * MAXC * MAXR];
byte mexp[MAXN * MAXC * MAXR];
#define P(n, c, r)  (((n) * MAXC + (c)) * MAXR + (r) - 1)

byte now;

/* The score a hold set or extended now gets: now + ttl by the node's clock, which may run
 * DRIFT faster than the client's (the worst case for exclusion, taken always). */
#define EXPIRY_FROM_NOW  (now + TTL - DRIFT)

/* VALIDITY_LEFT and BELIEVES: common.pml. */

mtype:kind = { ACQUIRE, QUIET, RELEASE, EXTEND, UNMARK };
#define DENIED   0
#define GRANTED  1
#define FAILED   2
#define REFUSED  3   /* {-1, 0}: the owner only reads and asks to write (upgrade_refused) */

/* --- the clients' state (rw_client.pml) ---------------------------------------------------- */
#define IDLE       0
#define COUNTING   1
#define HOLDING    2
#define EXTENDING  3
byte phase[MAXC];
byte round[MAXC];       /* the round's token is (client, round) */
byte retries[MAXC];     /* bit per round: sent with ARGV[7], the previous round's token */
bool again[MAXC];       /* the last round was lost and the acquisition goes on: a retry next */
bool mistake[MAXC];     /* this round met upgrade_refused: the acquisition ends with it */
byte t0[MAXC];
byte answered[MAXC];    /* bit per node */
byte granted_by[MAXC];  /* bit per node */
byte denied_by[MAXC];   /* bit per node */
byte n_granted[MAXC];
byte n_denied[MAXC];
byte n_failed[MAXC];
bool held[MAXC];
byte valid_until[MAXC];
byte ext_t0[MAXC];
byte ext_granted[MAXC];
byte ext_other[MAXC];
byte ext_left[MAXC];

/* Two clients whose holds exclude each other: one writes, and they are not one owner's. */
#define APART(a, b)  ((mode[a] == WRITE || mode[b] == WRITE) && \
                      !(owner[a] != NO_OWNER && owner[a] == owner[b]))

hidden byte readers_and_writer_apart;

#include "rw_network.pml"
#include "rw_client.pml"
#include "rw_node.pml"

/* One clock for everyone; a node drops a hold or a mark the tick its score is reached (the
 * scripts treat a member scored <= TIME as gone: rw_acquire.lua lines 36-40, rw_extend.lua
 * line 16, rw_release.lua line 41). */
proctype clock() {
    byte e;
end:
    do
    :: atomic {
        now < MAXT -> now++;
        e = 0;
        do
        :: e < MAXN * MAXC * MAXR ->
            if
            :: hexp[e] != 0 && hexp[e] <= now -> hexp[e] = 0
            :: else -> skip
            fi;
            if
            :: mexp[e] != 0 && mexp[e] <= now -> mexp[e] = 0
            :: else -> skip
            fi;
            e++
        :: else -> break
        od;
        e = 0
       }
    od
}

init {
    byte n;
    atomic {
        init_knobs();
        run clock();
        n = 0;
        do
        :: n < NN -> run node(n); n++
        :: else -> break
        od;
        n = 0;
        do
        :: n < MAXC -> run client(n); n++
        :: else -> break
        od;
        n = 0
    }
}
