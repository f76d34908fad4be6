/* SPDX-License-Identifier: BSL-1.0 */
/* reentrant.pml: a model of the reentrant lock (src/lock/kinds/reentrant.cpp), checked by
 * check_model (reentrant.runs). N = 3 nodes (N = 1 a knob), 2 owners (clients). Each owner has
 * an outer acquisition and may enter again while it holds it (the inner acquisition); each
 * acquisition is a lease of its own: its own rounds, tokens, validity, extends and release, in
 * any order. The rounds, quorum, validity, drift, extends, losses and the cleanup of a failed
 * round are the plain model's (client.pml, node.pml); the node's scripts are these, on the
 * hash at the lock key (owner "o", a field "a:<token>" per acquisition round):
 *   acquire  src/scripts/acquire_reentrant.lua  lines 29-38 (no key: the owner and our field,
 *            the ttl), 39-45 (another owner: refused), 46-48 (HDEL of the previous round's
 *            field, ARGV[4]), 49 (HSETNX our field), 51-53 (never shortens the ttl)
 *   release  src/scripts/release_reentrant.lua  lines 11-16 (another owner, or not our field:
 *            nothing), 18-19 (HDEL; the last field gone: DEL): a lease's release and a failed
 *            round's cleanup (reentrant.cpp round_cleanup)
 *   extend   src/scripts/extend_reentrant.lua   lines 10-16 (our owner and field: the ttl at
 *            least ttl from now; else 0)
 * Property (assertion): mutual_exclusion: no two owners believe they hold at once, an owner
 * believing while any of its leases has validity left (check_exclusion, at every grant and
 * extend). The fields, not a counter: depth is the number of fields.
 * Outside the model: fences (the hold's "f", reentrant_holds.cpp live_fence: fenced
 * reentrant locks), the restart quarantine and late requests (the plain model's), waiting,
 * hand-over; acquisitions of one owner that overlap otherwise than nested (the inner one here
 * starts while the outer is held), or come from two clients (an owner id passed along: the same
 * node rules); a plain lock meeting the hash (WRONGTYPE: refused).
 * NESTED (a knob, not a control): the outer released only after the inner, as nested scopes do;
 * without it the two leases are released in either order.
 * Negative controls (knobs): DEL_ALWAYS (release deletes the lock whatever acquisitions remain),
 * COUNTER (a depth counter instead of a field per acquisition round), NO_DRIFT_MARGIN; each
 * breaks mutual_exclusion. */

#include "common.pml"

#define NMAX      3
#define CLIENTS   2     /* owners */
#define LEASES    4     /* lease l: owner l / 2, acquisition l % 2 (0 outer, 1 inner) */
#define L(c, a)   ((c) * 2 + (a))
#define OWNER(l)  ((l) / 2)
#define ACQ(l)    ((l) % 2)
#define BIT(x)    (1 << (x))
/* An acquisition's round r (1 or 2): its token's field bit on a node, and its request bit */
#define TB(a, r)  ((a) * 2 + (r) - 1)
#define NN        k_n
#define Q         (k_n / 2 + 1)
#define MAY_FAIL  (k_n - Q)
#define DRIFT     1
#define NOBODY    255
#define DENIED    0
#define GRANTED   1
#define FAILED    2

mtype:kind = { ACQUIRE, RELEASE, EXTEND };

/* --- the knobs (init) ----------------------------------------------------------------------- */
byte k_n;          /* N: 1 or 3 */
byte k_ttl;        /* TTL */
byte k_maxt;       /* MAXT */
byte k_margin;     /* drift_allowance: DRIFT; 0 with NO_DRIFT_MARGIN */
byte k_extends;    /* EXTENDS: per lease */
byte k_losses;     /* LOSSES */
byte rounds_of[LEASES];  /* ROUNDS, INNER (owner 0's outer and inner), ROUNDS_1, INNER_1: at most 2 */
bool del_always;   /* control: release_reentrant deletes the lock once it held our field */
bool counter;      /* control: a depth counter instead of the fields */
bool nested;       /* NESTED: the outer released only after the inner (not a control) */
#define TTL     k_ttl
#define MAXT    k_maxt
#define MARGIN  k_margin

/* --- time ------------------------------------------------------------------------------------- */
byte now;
#define EXPIRY_FROM_NOW       (now + TTL - DRIFT)
/* VALIDITY_LEFT and BELIEVES (of a lease l): common.pml. */
#define OWNER_BELIEVES(c)     (BELIEVES(L(c, 0)) || BELIEVES(L(c, 1)))

/* --- nodes: the hash ---------------------------------------------------------------------------- */
byte own[NMAX];    /* "o"; NOBODY: no key */
byte fld[NMAX];    /* the "a:<token>" fields, a bit TB(a, r) each; COUNTER: the count */
byte hexp[NMAX];   /* the key's expiry */
byte losses;

/* --- leases (acquire_round.cpp, lease_state.hpp) ------------------------------------------------ */
#define IDLE      0
#define COUNTING  1
#define HOLDING   2
#define EXTENDING 3
byte phase[LEASES];
byte round[LEASES];
byte t0[LEASES];
byte answered[LEASES];
byte denied_by[LEASES];
byte n_granted[LEASES];
byte n_denied[LEASES];
byte n_failed[LEASES];
bool held[LEASES];
byte valid_until[LEASES];
byte ext_t0[LEASES];
byte ext_granted[LEASES];
byte ext_other[LEASES];
byte ext_left[LEASES];

/* --- the network: a bit TB(a, r) per request, per (owner, node, kind) ---------------------------- */
#define CN(c, n)  ((c) * NMAX + (n))
byte acq_m[CLIENTS * NMAX];
byte rel_m[CLIENTS * NMAX];
byte ext_m[CLIENTS * NMAX];

hidden byte mutual_exclusion;
hidden byte t_i, t_d;   /* temporaries of one atomic step, set before every use */

#define NEXT_NONE   0
#define NEXT_GRANT  1
#define NEXT_LOSE   2

inline send(l, n, k) {
    if
    :: k == ACQUIRE -> acq_m[CN(OWNER(l), n)] = acq_m[CN(OWNER(l), n)] | BIT(TB(ACQ(l), round[l]))
    :: k == RELEASE -> rel_m[CN(OWNER(l), n)] = rel_m[CN(OWNER(l), n)] | BIT(TB(ACQ(l), round[l]))
    :: k == EXTEND -> ext_m[CN(OWNER(l), n)] = ext_m[CN(OWNER(l), n)] | BIT(TB(ACQ(l), round[l]))
    fi
}
/* In order within a round (one connection), rounds and acquisitions overtake each other. */
#define AFTER_ACQUIRE(c, n, b)          ((acq_m[CN(c, n)] & BIT(b)) == 0)
#define READY_BIT(m, first, c, n, b)    ((m[CN(c, n)] & BIT(b)) && (first || AFTER_ACQUIRE(c, n, b)))
#define READY(m, first, c, n)  (READY_BIT(m, first, c, n, 0) || READY_BIT(m, first, c, n, 1) || READY_BIT(m, first, c, n, 2) || READY_BIT(m, first, c, n, 3))
#define IN_FLIGHT(m, first, n) (READY(m, first, 0, n) || READY(m, first, 1, n))
#define TAKE(m, first, n, c, b)                                     \
    if                                                              \
    :: READY(m, first, 0, n) -> c = 0                               \
    :: READY(m, first, 1, n) -> c = 1                               \
    fi;                                                             \
    if                                                              \
    :: READY_BIT(m, first, c, n, 0) -> b = 0                        \
    :: READY_BIT(m, first, c, n, 1) -> b = 1                        \
    :: READY_BIT(m, first, c, n, 2) -> b = 2                        \
    :: READY_BIT(m, first, c, n, 3) -> b = 3                        \
    fi;                                                             \
    m[CN(c, n)] = m[CN(c, n)] & ~BIT(b)

inline check_exclusion(l) {
    PROPERTY(mutual_exclusion, !OWNER_BELIEVES(1 - OWNER(l)))
}

/* --- the scripts (owner c, acquisition a, round r) ----------------------------------------------- */
inline del_key(n) {
    own[n] = NOBODY; fld[n] = 0; hexp[n] = 0
}

/* acquire_reentrant.lua, unfenced */
inline node_acquire(n, c, a, r, v) {
    if
    :: own[n] == NOBODY ->   /* lines 29-38 */
        own[n] = c;
        if
        :: counter -> fld[n] = 1
        :: else -> fld[n] = BIT(TB(a, r))
        fi;
        hexp[n] = EXPIRY_FROM_NOW;
        v = GRANTED
    :: own[n] != NOBODY && own[n] != c -> v = DENIED   /* lines 39-45 */
    :: own[n] == c ->
        if
        :: counter -> fld[n]++   /* the control: one more, whatever the round */
        :: else ->
            if   /* lines 46-48: the previous round's field goes */
            :: r > 1 -> fld[n] = fld[n] & ~BIT(TB(a, r - 1))
            :: else -> skip
            fi;
            fld[n] = fld[n] | BIT(TB(a, r))   /* line 49 */
        fi;
        if   /* lines 51-53 */
        :: hexp[n] < EXPIRY_FROM_NOW -> hexp[n] = EXPIRY_FROM_NOW
        :: else -> skip
        fi;
        v = GRANTED
    fi
}

/* release_reentrant.lua. DEL_ALWAYS (control): the lock is deleted once the field was ours, as
 * a plain release.lua would. COUNTER (control): one less, the key deleted at 0. */
inline node_release(n, c, a, r) {
    if
    :: own[n] != c -> skip   /* line 11 */
    :: own[n] == c && counter ->
        fld[n]--;
        if
        :: fld[n] == 0 -> del_key(n)
        :: else -> skip
        fi
    :: own[n] == c && !counter && !(fld[n] & BIT(TB(a, r))) -> skip   /* line 14 */
    :: own[n] == c && !counter && (fld[n] & BIT(TB(a, r))) ->
        fld[n] = fld[n] & ~BIT(TB(a, r));
        if   /* lines 18-19 */
        :: fld[n] == 0 || del_always -> del_key(n)
        :: else -> skip
        fi
    fi
}

/* extend_reentrant.lua */
inline node_extend(n, c, a, r, v) {
    if
    :: own[n] == c && (counter || (fld[n] & BIT(TB(a, r)))) ->
        if
        :: hexp[n] < EXPIRY_FROM_NOW -> hexp[n] = EXPIRY_FROM_NOW
        :: else -> skip
        fi;
        v = GRANTED
    :: else -> v = DENIED
    fi
}

/* --- a lease l: acquire rounds and the lease (client.pml's rules, unfenced) --------------------- */
inline clear_round(l) {
    answered[l] = 0; denied_by[l] = 0; n_granted[l] = 0; n_denied[l] = 0; n_failed[l] = 0
}

inline begin_round(l) {
    round[l]++;
    printf("MSC: t=%d owner %d acquisition %d begins round %d\n", now, OWNER(l), ACQ(l), round[l]);
    t0[l] = now;
    phase[l] = COUNTING;
    t_i = 0;
    do
    :: t_i < NN -> send(l, t_i, ACQUIRE); t_i++
    :: else -> break
    od;
    t_i = 0
}

/* fail_round / leave: the cleanup (release_reentrant.lua, the round's token) to every node that
 * did not deny (acquire_round::nodes_to_release) */
inline lose_round(l) {
    printf("MSC: t=%d owner %d acquisition %d loses round %d (denied by nodes %d)\n", now, OWNER(l), ACQ(l), round[l], denied_by[l]);
    t_i = 0;
    do
    :: t_i < NN ->
        if
        :: denied_by[l] & BIT(t_i) -> skip
        :: else -> send(l, t_i, RELEASE)
        fi;
        t_i++
    :: else -> break
    od;
    t_i = 0;
    clear_round(l);
    t0[l] = 0;
    phase[l] = IDLE
}

inline grant(l) {
    if
    :: VALIDITY_LEFT(t0[l]) > 0 ->
        held[l] = true;
        valid_until[l] = t0[l] + TTL - MARGIN;
        printf("MSC: t=%d owner %d acquisition %d holds (round %d) until %d\n", now, OWNER(l), ACQ(l), round[l], valid_until[l]);
        check_exclusion(l);
        ext_left[l] = k_extends;
        clear_round(l);
        t0[l] = 0;
        phase[l] = HOLDING;
        t_d = NEXT_NONE
    :: else -> t_d = NEXT_LOSE
    fi
}

inline count(l, n, v) {
    answered[l] = answered[l] | BIT(n);
    if
    :: v == GRANTED -> n_granted[l]++
    :: v == DENIED -> denied_by[l] = denied_by[l] | BIT(n); n_denied[l]++
    :: else -> n_failed[l]++
    fi;
    if
    :: n_granted[l] >= Q -> t_d = NEXT_GRANT
    :: n_granted[l] < Q && (n_failed[l] > MAY_FAIL || n_denied[l] + n_failed[l] > MAY_FAIL) -> t_d = NEXT_LOSE
    :: else -> skip
    fi
}

inline begin_extend(l) {
    ext_left[l]--;
    ext_t0[l] = now;
    ext_granted[l] = 0; ext_other[l] = 0;
    phase[l] = EXTENDING;
    t_i = 0;
    do
    :: t_i < NN -> send(l, t_i, EXTEND); t_i++
    :: else -> break
    od;
    t_i = 0
}

inline count_extend(l, v) {
    if
    :: v == GRANTED -> ext_granted[l]++
    :: else -> ext_other[l]++
    fi;
    if
    :: ext_granted[l] >= Q ->
        if
        :: now < valid_until[l] && ext_t0[l] + TTL - MARGIN > valid_until[l] ->
            valid_until[l] = ext_t0[l] + TTL - MARGIN;
            check_exclusion(l)
        :: else -> skip
        fi;
        ext_granted[l] = 0; ext_other[l] = 0; ext_t0[l] = 0;
        phase[l] = HOLDING
    :: ext_granted[l] < Q && ext_other[l] > MAY_FAIL ->
        ext_granted[l] = 0; ext_other[l] = 0; ext_t0[l] = 0;
        phase[l] = HOLDING
    :: else -> skip
    fi
}

/* lease release: release_reentrant.lua with the lease's token on every node */
inline release_lease(l) {
    printf("MSC: t=%d owner %d acquisition %d releases round %d\n", now, OWNER(l), ACQ(l), round[l]);
    t_i = 0;
    do
    :: t_i < NN -> send(l, t_i, RELEASE); t_i++
    :: else -> break
    od;
    t_i = 0;
    held[l] = false; valid_until[l] = 0; ext_left[l] = 0;
    phase[l] = IDLE
}

inline on_reply(l, k, n, r, v) {
    t_d = NEXT_NONE;
    if
    :: k == ACQUIRE && r == round[l] && phase[l] == COUNTING && !(answered[l] & BIT(n)) -> count(l, n, v)
    :: k == EXTEND && r == round[l] && phase[l] == EXTENDING -> count_extend(l, v)
    :: else -> skip
    fi;
    if
    :: t_d == NEXT_GRANT -> grant(l)
    :: else -> skip
    fi;
    if
    :: t_d == NEXT_LOSE -> lose_round(l)
    :: else -> skip
    fi;
    t_d = NEXT_NONE
}

/* An owner: its outer acquisition, and an inner one entered while the outer is held; either
 * released first (NESTED: the outer only once the inner is over, as scopes do). */
proctype owner(byte c) {
end:
    do
    :: atomic { phase[L(c, 0)] == IDLE && round[L(c, 0)] < rounds_of[L(c, 0)] -> begin_round(L(c, 0)) }
    :: atomic { phase[L(c, 1)] == IDLE && round[L(c, 1)] < rounds_of[L(c, 1)] && phase[L(c, 0)] == HOLDING ->
                begin_round(L(c, 1)) }
    :: atomic { phase[L(c, 0)] == HOLDING && ext_left[L(c, 0)] > 0 -> begin_extend(L(c, 0)) }
    :: atomic { phase[L(c, 1)] == HOLDING && ext_left[L(c, 1)] > 0 -> begin_extend(L(c, 1)) }
    :: atomic { phase[L(c, 0)] == HOLDING && (!nested || phase[L(c, 1)] == IDLE) -> release_lease(L(c, 0)) }
    :: atomic { phase[L(c, 1)] == HOLDING -> release_lease(L(c, 1)) }
    od
}

#define RAN       0
#define NOT_RUN   1
#define NO_REPLY  2

proctype node(byte n) {
    byte c, b, k, v, fault;
end:
    do
    :: atomic {
        if
        :: IN_FLIGHT(acq_m, true, n) -> k = ACQUIRE; TAKE(acq_m, true, n, c, b)
        :: IN_FLIGHT(rel_m, false, n) -> k = RELEASE; TAKE(rel_m, false, n, c, b)
        :: IN_FLIGHT(ext_m, false, n) -> k = EXTEND; TAKE(ext_m, false, n, c, b)
        fi;
        if
        :: fault = RAN
        :: losses > 0 -> losses--; fault = NOT_RUN
        :: losses > 0 -> losses--; fault = NO_REPLY
        fi;
        if
        :: fault == NOT_RUN -> skip
        :: else ->
            if
            :: k == ACQUIRE -> node_acquire(n, c, b / 2, b % 2 + 1, v)
            :: k == RELEASE -> node_release(n, c, b / 2, b % 2 + 1)
            :: k == EXTEND -> node_extend(n, c, b / 2, b % 2 + 1, v)
            fi
        fi;
        printf("MSC: t=%d node %d runs ", now, n); printm(k); printf(" of owner %d acquisition %d round %d: fault %d, answer %d; hash o=%d fields=%d exp=%d\n",
               c, b / 2, b % 2 + 1, fault, v, own[n], fld[n], hexp[n]);
        if
        :: fault != RAN -> v = FAILED
        :: else -> skip
        fi;
        if
        :: k != RELEASE -> on_reply(L(c, b / 2), k, n, b % 2 + 1, v)
        :: else -> skip
        fi;
        c = 0; b = 0; k = 0; v = 0; fault = 0
       }
    od
}

proctype clock() {
end:
    do
    :: atomic {
        now < MAXT -> now++;
        printf("MSC: tick %d\n", now);
        t_i = 0;
        do
        :: t_i < NMAX ->
            if
            :: own[t_i] != NOBODY && hexp[t_i] <= now -> del_key(t_i)
            :: else -> skip
            fi;
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
            now.k_ttl = model_knob("TTL", 2, 1, 10);
            now.k_maxt = model_knob("MAXT", 3, 1, 20);
            now.k_extends = model_knob("EXTENDS", 0, 0, 2);
            now.k_losses = model_knob("LOSSES", 0, 0, 3);
            now.losses = now.k_losses;
            now.rounds_of[0] = model_knob("ROUNDS", 1, 0, 2);
            now.rounds_of[1] = model_knob("INNER", 1, 0, 2);
            now.rounds_of[2] = model_knob("ROUNDS_1", 1, 0, 2);
            now.rounds_of[3] = model_knob("INNER_1", 0, 0, 2);
            now.del_always = model_knob("DEL_ALWAYS", 0, 0, 1);
            now.counter = model_knob("COUNTER", 0, 0, 1);
            now.nested = model_knob("NESTED", 0, 0, 1);
            now.k_margin = model_knob("NO_DRIFT_MARGIN", 0, 0, 1) ? 0 : DRIFT;
            printf("model knobs: N=%d TTL=%d MAXT=%d MARGIN=%d EXTENDS=%d LOSSES=%d ROUNDS=%d "
                   "INNER=%d ROUNDS_1=%d INNER_1=%d DEL_ALWAYS=%d COUNTER=%d NESTED=%d\n",
                   now.k_n, now.k_ttl, now.k_maxt, now.k_margin, now.k_extends, now.k_losses,
                   now.rounds_of[0], now.rounds_of[1], now.rounds_of[2], now.rounds_of[3],
                   now.del_always, now.counter, now.nested);
        };
        t_i = 0;
        do
        :: t_i < NMAX -> own[t_i] = NOBODY; t_i++
        :: else -> break
        od;
        t_i = 0;
        run clock();
        run node(0);
        if
        :: k_n == 3 -> run node(1); run node(2)
        :: else -> skip
        fi;
        run owner(0); run owner(1)
    }
}
