/* SPDX-License-Identifier: BSL-1.0 */
/* multi.pml: a model of the lock of several resources at once (client::async_acquire_all,
 * src/lock/kinds/multi.cpp), checked by check_model (multi.runs). Two resources A and B; N = 3
 * nodes (N = 1 a knob), each an independent master holding every resource's key; 2 or 3
 * clients with overlapping sets: client 0 {A, B}, client 1 {B} (SET_1: {A}, {B} or {A, B}),
 * client 2 {A}. The rounds, quorum, validity, drift, extends, losses and the cleanup of a failed
 * round are the plain model's (client.pml, node.pml), the node's scripts are these:
 *   acquire  src/scripts/multi_acquire.lua  lines 21-27 (every key first: free, ours, or our
 *            previous round's; else refused, nothing written), lines 28-38 (then every key SET
 *            to the token with the ttl)
 *   release  src/scripts/multi_release.lua  lines 13-22 (every key that holds the token is
 *            deleted): a lease's release and a failed round's cleanup (multi.cpp round_cleanup)
 *   extend   src/scripts/multi_extend.lua   lines 11-19 (every key holds the token, else nothing;
 *            then PEXPIRE GT on each)
 * Order among the names: none in the scripts (every key is looked at before any is written),
 * so {A, B} and {B, A} send the same request; the model keeps a set.
 * Properties (assertions):
 *   mutual_exclusion  per resource: no two clients whose sets share a resource believe they
 *                     hold at once (check_exclusion, at every grant and extend)
 *   all_or_none       on every node, after every script and every expiry, a client's token holds
 *                     every key of its set there or none, all of one round (check_node); and
 *                     once every request has run (no loss) and every client is done, no key of a
 *                     failed or released round remains (proctype settled)
 * Outside the model: fences (a counter per resource, multi_fence_writeback.lua: the plain
 * model's fence rules, per resource), the restart quarantine and late requests (the plain
 * model's), waiting and release messages (they decide only when a round starts, which the
 * scheduler varies anyway), a Redis Cluster's split by slot (slot_steps.hpp: one script per
 * slot, taken one after another, so a node may hold part of a set for a round trip; not
 * modelled), multi_check.lua (reads only), hand-over and adopt. A set of one name is the plain
 * kind in the library (SET NX, takeover.lua); here it runs multi_acquire.lua, whose rule for one
 * key is the same compare-and-set.
 * Negative controls (knobs): PARTIAL, NO_CLEANUP (all_or_none), NO_DRIFT_MARGIN
 * (mutual_exclusion).
 * Here: the knobs, the state, the network, the properties, the clock and init; the client in
 * multi_client.pml, the node and its scripts in multi_node.pml. */

#include "common.pml"

#define NMAX      3     /* nodes at most; k_n of them run */
#define CMAX      3     /* clients at most; k_clients of them run */
#define RES       2     /* resources: A = 0, B = 1 */
#define BIT(x)    (1 << (x))
#define NN        k_n
#define Q         (k_n / 2 + 1)         /* src/lock/quorum.hpp quorum_of */
#define MAY_FAIL  (k_n - Q)
#define DRIFT     1
#define NOBODY    255
#define DENIED    0
#define GRANTED   1
#define FAILED    2
#define NRES(s)   (((s) & 1) + (((s) >> 1) & 1))   /* resources in a set */

mtype:kind = { ACQUIRE, RELEASE, EXTEND };

/* --- the knobs (init_knobs) ------------------------------------------------------------- */
byte k_n;          /* N: 1 or 3 */
byte k_clients;    /* CLIENTS: 2 or 3 */
byte k_ttl;        /* TTL */
byte k_maxt;       /* MAXT: the clock stops here */
byte k_margin;     /* drift_allowance: DRIFT; 0 with NO_DRIFT_MARGIN */
byte k_extends;    /* EXTENDS: extends per lease */
byte k_losses;     /* LOSSES: requests or replies lost over the run */
byte rounds_of[CMAX];   /* ROUNDS (client 0), ROUNDS_1, ROUNDS_2 */
byte set_of[CMAX];      /* each client's resources, a bit each: A = 1, B = 2 */
bool partial;      /* control: a node's script writes the free keys, skips the taken ones */
bool no_cleanup;   /* control: a failed round sends no cleanup */
#define TTL     k_ttl
#define MAXT    k_maxt
#define MARGIN  k_margin

/* --- time (time.pml's rules) ------------------------------------------------------------ */
byte now;
#define EXPIRY_FROM_NOW       (now + TTL - DRIFT)
/* VALIDITY_LEFT and BELIEVES: common.pml. */

/* --- nodes: a key per resource, its token (client, round) -------------------------------- */
#define KI(n, x)  ((n) * RES + (x))
byte key_c[NMAX * RES];
byte key_r[NMAX * RES];
byte key_exp[NMAX * RES];
byte losses;       /* losses left */

/* --- clients (acquire_round.cpp, lease_state.hpp) ---------------------------------------- */
#define IDLE      0
#define COUNTING  1
#define HOLDING   2
#define EXTENDING 3
byte phase[CMAX];
byte round[CMAX];
byte t0[CMAX];
byte answered[CMAX];
byte denied_by[CMAX];
byte n_granted[CMAX];
byte n_denied[CMAX];
byte n_failed[CMAX];
bool held[CMAX];
byte valid_until[CMAX];
byte ext_t0[CMAX];
byte ext_granted[CMAX];
byte ext_other[CMAX];
byte ext_left[CMAX];

/* --- the network (network.pml's rules): a bit per round, per (client, node, kind) -------- */
#define CN(c, n)  ((c) * NMAX + (n))
byte acq_m[CMAX * NMAX];
byte rel_m[CMAX * NMAX];
byte ext_m[CMAX * NMAX];
byte inflight;     /* requests in flight: a function of the sets above, adds no state */

/* --- ghosts and temporaries ---------------------------------------------------------------- */
hidden byte mutual_exclusion;
hidden byte all_or_none;
/* Temporaries of one atomic step, set before every use: hidden, they add no state. */
hidden byte t_i, t_x, t_y, t_d, t_hc, t_hr;
hidden byte t_ok;

#define NEXT_NONE   0
#define NEXT_GRANT  1
#define NEXT_LOSE   2

/* --- network ------------------------------------------------------------------------------ */
inline send(c, n, k, r) {
    if
    :: k == ACQUIRE -> acq_m[CN(c, n)] = acq_m[CN(c, n)] | BIT(r)
    :: k == RELEASE -> rel_m[CN(c, n)] = rel_m[CN(c, n)] | BIT(r)
    :: k == EXTEND -> ext_m[CN(c, n)] = ext_m[CN(c, n)] | BIT(r)
    fi;
    inflight++
}
/* In order within a round (one connection), rounds overtake each other. */
#define AFTER_ACQUIRE(c, n, r)          ((acq_m[CN(c, n)] & BIT(r)) == 0)
#define READY_ROUND(m, first, c, n, r)  ((m[CN(c, n)] & BIT(r)) && (first || AFTER_ACQUIRE(c, n, r)))
#define READY(m, first, c, n)  (READY_ROUND(m, first, c, n, 1) || READY_ROUND(m, first, c, n, 2) || READY_ROUND(m, first, c, n, 3))
#define IN_FLIGHT(m, first, n) (READY(m, first, 0, n) || READY(m, first, 1, n) || READY(m, first, 2, n))
#define TAKE(m, first, n, c, r)                                     \
    if                                                              \
    :: READY(m, first, 0, n) -> c = 0                               \
    :: READY(m, first, 1, n) -> c = 1                               \
    :: READY(m, first, 2, n) -> c = 2                               \
    fi;                                                             \
    if                                                              \
    :: READY_ROUND(m, first, c, n, 1) -> r = 1                      \
    :: READY_ROUND(m, first, c, n, 2) -> r = 2                      \
    :: READY_ROUND(m, first, c, n, 3) -> r = 3                      \
    fi;                                                             \
    m[CN(c, n)] = m[CN(c, n)] & ~BIT(r);                            \
    inflight--

/* --- the properties ------------------------------------------------------------------------ */
/* mutual_exclusion, per resource: checked where a belief begins (a grant, an extend). */
inline check_exclusion(c) {
    t_y = 0;
    do
    :: t_y < CMAX ->
        if
        :: t_y != c && (set_of[t_y] & set_of[c]) -> PROPERTY(mutual_exclusion, !BELIEVES(t_y))
        :: else -> skip
        fi;
        t_y++
    :: else -> break
    od;
    t_y = 0
}

/* all_or_none on node n: each client's token holds all its set's keys there, of one round, or
 * none of them. */
inline check_node(n) {
    t_y = 0;
    do
    :: t_y < CMAX ->
        t_hc = 0; t_hr = 0; t_ok = true;
        t_x = 0;
        do
        :: t_x < RES ->
            if
            :: key_c[KI(n, t_x)] == t_y ->
                t_hc++;
                if
                :: t_hr == 0 -> t_hr = key_r[KI(n, t_x)]
                :: t_hr != 0 && t_hr != key_r[KI(n, t_x)] -> t_ok = false
                :: else -> skip
                fi
            :: else -> skip
            fi;
            t_x++
        :: else -> break
        od;
        PROPERTY(all_or_none, t_ok && (t_hc == 0 || t_hc == NRES(set_of[t_y])));
        t_y++
    :: else -> break
    od;
    t_x = 0; t_y = 0; t_hc = 0; t_hr = 0
}

#include "multi_client.pml"
#include "multi_node.pml"

/* --- the clock (time.pml): keys expire DRIFT early ------------------------------------------ */
proctype clock() {
end:
    do
    :: atomic {
        now < MAXT -> now++;
        printf("MSC: tick %d\n", now);
        t_i = 0;
        do
        :: t_i < NMAX * RES ->
            if
            :: key_c[t_i] != NOBODY && key_exp[t_i] <= now -> key_c[t_i] = NOBODY; key_r[t_i] = 0; key_exp[t_i] = 0
            :: else -> skip
            fi;
            t_i++
        :: else -> break
        od;
        t_i = 0;
        /* a token's keys on a node share their expiry: it stays all or none */
        check_node(0); check_node(1); check_node(2)
       }
    od
}

/* --- all_or_none, the cleanups: once nothing is in flight, nothing was lost and every client
 * is done, a key held belongs to a lease of its round still held. */
#define DONE(c)  (round[c] >= rounds_of[c] && (phase[c] == IDLE || phase[c] == HOLDING))
#define QUIET    (inflight == 0 && losses == k_losses && DONE(0) && DONE(1) && DONE(2))
proctype settled() {
end:
    do
    :: atomic {
        QUIET ->
        t_i = 0;
        do
        :: t_i < NMAX * RES ->
            PROPERTY(all_or_none, key_c[t_i] == NOBODY ||
                     (held[key_c[t_i]] && key_r[t_i] == round[key_c[t_i]]));
            t_i++
        :: else -> break
        od;
        t_i = 0
       }
    od
}

init {
    atomic {
        c_code {
            now.k_n = model_knob("N", 3, 1, 3);
            if (now.k_n == 2) { printf("model: MODEL_N is 1 or 3\n"); exit(2); }
            now.k_clients = model_knob("CLIENTS", 2, 2, 3);
            now.k_ttl = model_knob("TTL", 2, 1, 10);
            now.k_maxt = model_knob("MAXT", 3, 1, 20);
            now.k_extends = model_knob("EXTENDS", 0, 0, 2);
            now.k_losses = model_knob("LOSSES", 0, 0, 3);
            now.losses = now.k_losses;
            now.rounds_of[0] = model_knob("ROUNDS", 1, 0, 3);
            now.rounds_of[1] = model_knob("ROUNDS_1", 1, 0, 3);
            now.rounds_of[2] = now.k_clients == 3 ? model_knob("ROUNDS_2", 1, 0, 3) : 0;
            now.set_of[0] = 3;
            now.set_of[1] = model_knob("SET_1", 2, 1, 3);
            now.set_of[2] = 1;
            now.partial = model_knob("PARTIAL", 0, 0, 1);
            now.no_cleanup = model_knob("NO_CLEANUP", 0, 0, 1);
            now.k_margin = model_knob("NO_DRIFT_MARGIN", 0, 0, 1) ? 0 : DRIFT;
            printf("model knobs: N=%d CLIENTS=%d TTL=%d MAXT=%d MARGIN=%d EXTENDS=%d LOSSES=%d "
                   "ROUNDS=%d ROUNDS_1=%d ROUNDS_2=%d SET_1=%d PARTIAL=%d NO_CLEANUP=%d\n",
                   now.k_n, now.k_clients, now.k_ttl, now.k_maxt, now.k_margin, now.k_extends,
                   now.k_losses, now.rounds_of[0], now.rounds_of[1], now.rounds_of[2], now.set_of[1],
                   now.partial, now.no_cleanup);
        };
        t_i = 0;
        do
        :: t_i < NMAX * RES -> key_c[t_i] = NOBODY; t_i++
        :: else -> break
        od;
        t_i = 0;
        run clock();
        run node(0);
        if
        :: k_n == 3 -> run node(1); run node(2)
        :: else -> skip
        fi;
        run client(0); run client(1);
        if
        :: k_clients == 3 -> run client(2)
        :: else -> skip
        fi;
        run settled()
    }
}
