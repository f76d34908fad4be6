/* SPDX-License-Identifier: BSL-1.0 */
/* semaphore.pml: a model of redlock-asio's semaphore (lock_options::permits = K), checked by
 * check_model (its runs: semaphore.runs). K permits per node, NN nodes (knob N: 1 to 3), up to
 * 4 clients (3 by default), each with its rounds (a token per round), its lease, its extends,
 * its release; a network that reorders (and loses, with LOSSES); one clock, keys expiring
 * DRIFT early.
 * It follows the scripts, one atomic step each (sem_node.pml):
 *   src/scripts/semaphore_acquire.lua  lines 22-74 (sem_acquire)
 *   src/scripts/semaphore_release.lua  lines 10-27 (sem_release)
 *   src/scripts/semaphore_extend.lua   lines 10-25 (sem_extend)
 * and the client side (sem_client.pml) as src/lock/kinds/semaphore.cpp drives it through the
 * same rounds as a lock: acquire_round.cpp (tally, validity, nodes_to_release),
 * acquire_fsm.cpp (grant), acquire_fsm_waits.cpp (a lost round's cleanup), lease_ops.cpp (extend,
 * release).
 * Property (an assertion, checked where a client's belief begins: a grant, an extend):
 *   permits_within_bound  the clients that believe they hold a permit (a lease with validity
 *                         left by their own clock) are never more than floor(K * N / Q);
 *                         at N = 1 that is K exactly (docs/safety.md "Semaphores").
 * The negative controls (knobs, semaphore.runs): OFF_BY_ONE (the script admits K + 1 per node),
 * BOUND_K (the property claims K at N = 3: the docs' three holders of two permits),
 * NO_DRIFT_MARGIN (the validity without drift_allowance).
 * Outside the model: restarts (the quarantine is the lock's, redlock.pml checks it), callers
 * that disagree on K (permits_mismatch), a key of another kind (WRONGTYPE, a read-write lock's
 * holders), replicas, the pub/sub wake-ups (they only decide when a round is sent, which the
 * scheduler decides here), hand-over, a request counted failed by its node timeout before it
 * runs (redlock.pml's LATE; here a request still runs after its round was decided). */

#include "common.pml"

#define MAXC     4      /* clients at most: the arrays' size; CLIENTS of them run */
#define MAXN     3      /* nodes at most; N of them run */
#define MAXR     2      /* rounds of a client over the run (network: a bit per round) */
#define BIT(x)   (1 << (x))

/* Time, in abstract ticks, as time.pml of the lock's model. */
#define DRIFT    1      /* a node may expire a permit this much earlier than the client's clock */

/* --- the knobs (their defaults in init_knobs) --------------------------------------------- */
byte k_n;          /* N: nodes, 1 to 3 */
byte k_k;          /* K: permits (ARGV[3]) */
byte k_clients;    /* CLIENTS: clients that run, 1..MAXC */
byte k_ttl;        /* TTL: every permit's ttl (ARGV[2]) */
byte k_maxt;       /* MAXT: the clock stops here */
byte k_margin;     /* drift_allowance: DRIFT (0 only with NO_DRIFT_MARGIN) */
byte k_rounds;     /* ROUNDS: rounds of each client but client 0 over the run (retries and new
                    * acquisitions) */
byte k_rounds_0;   /* ROUNDS_0: client 0's, ROUNDS unless set */
byte k_extends;    /* EXTENDS: extends per lease */
byte losses;       /* LOSSES: requests or replies the network may lose over the run */
bool off_by_one;   /* OFF_BY_ONE (negative control): the script admits K + 1 per node */
bool bound_k;      /* BOUND_K (negative control): the property claims K holders at most, the
                    * bound of N = 1, at any N */
#define NN        k_n
#define K         k_k
#define CLIENTS   k_clients
#define TTL       k_ttl
#define MAXT      k_maxt
#define MARGIN    k_margin
#define ROUNDS(c) ((c) == 0 -> k_rounds_0 : k_rounds)
#define EXTENDS   k_extends
#define Q         (NN / 2 + 1)          /* src/lock/quorum.hpp quorum_of */
#define MAY_FAIL  (NN - Q)
#define BOUND     (bound_k -> K : (K * NN) / Q)  /* floor(K * N / Q): docs/safety.md "Semaphores" */
/* the count the script compares with: ARGV[3], or one more in the negative control */
#define LIMIT     (K + off_by_one)

inline init_knobs() {
    c_code {
        now.k_n = model_knob("N", 3, 1, 3);
        now.k_k = model_knob("K", 1, 1, 3);
        now.k_clients = model_knob("CLIENTS", 3, 1, 4);
        now.k_ttl = model_knob("TTL", 2, 2, 6);
        now.k_maxt = model_knob("MAXT", 3, 1, 10);
        now.k_rounds = model_knob("ROUNDS", 1, 0, 2);
        now.k_rounds_0 = model_knob("ROUNDS_0", now.k_rounds, 0, 2);
        now.k_extends = model_knob("EXTENDS", 0, 0, 2);
        now.losses = model_knob("LOSSES", 0, 0, 3);
        now.off_by_one = model_knob("OFF_BY_ONE", 0, 0, 1);
        now.bound_k = model_knob("BOUND_K", 0, 0, 1);
        now.k_margin = model_knob("NO_DRIFT_MARGIN", 0, 0, 1) ? 0 : 1;
        printf("model knobs: N=%d K=%d CLIENTS=%d TTL=%d MAXT=%d MARGIN=%d ROUNDS=%d ROUNDS_0=%d EXTENDS=%d "
               "LOSSES=%d OFF_BY_ONE=%d BOUND_K=%d (bound %d)\n",
               now.k_n, now.k_k, now.k_clients, now.k_ttl, now.k_maxt, now.k_margin, now.k_rounds, now.k_rounds_0,
               now.k_extends, now.losses, now.off_by_one, now.bound_k,
               now.bound_k ? now.k_k : (now.k_k * now.k_n) / (now.k_n / 2 + 1));
    }
}

/* --- the nodes' state: one sorted set per node ------------------------------------------- */
/* A member per token (client c, round r: a token per round, acquire_round::begin), its score
 * the tick at which the node expires it; 0: no such member. "#permits" (scored -K) is the
 * same on every set here (callers agree on K), so it is left out. */
byte pexp[MAXN * MAXC * MAXR];
#define P(n, c, r)  (((n) * MAXC + (c)) * MAXR + (r) - 1)

byte now;

/* The score a permit set or extended now gets: now + ttl by the node's clock, which may run
 * DRIFT faster than the client's (the worst case for the bound, taken always). */
#define EXPIRY_FROM_NOW  (now + TTL - DRIFT)

/* VALIDITY_LEFT and BELIEVES: common.pml. */

mtype:kind = { ACQUIRE, RELEASE, EXTEND };
#define DENIED   0
#define GRANTED  1
#define FAILED   2

/* --- the clients' state (sem_client.pml) ------------------------------------------------- */
#define IDLE       0
#define COUNTING   1
#define HOLDING    2
#define EXTENDING  3
byte phase[MAXC];
byte round[MAXC];       /* the round's token is (client, round) */
byte retries[MAXC];     /* bit per round: sent with ARGV[4], the previous round's token */
bool again[MAXC];       /* the last round was lost: the next one is a retry of its acquisition */
byte t0[MAXC];
byte answered[MAXC];    /* bit per node */
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


hidden byte permits_within_bound;

#include "sem_network.pml"
#include "sem_client.pml"
#include "sem_node.pml"

/* One clock for everyone; a node drops a permit the tick its score is reached (Redis and the
 * scripts treat a member whose score is <= TIME as gone: ZREMRANGEBYSCORE 0 now, line 53). */
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
            :: pexp[e] != 0 && pexp[e] <= now -> pexp[e] = 0
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
        :: n < CLIENTS -> run client(n); n++
        :: else -> break
        od;
        n = 0
    }
}
