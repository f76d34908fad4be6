/* SPDX-License-Identifier: BSL-1.0 */
/* network.pml: the requests in flight. A request is a bit in a set per (client, node, kind),
 * one bit per round: a node runs the ones in flight to it in any order (a connection given up
 * with its bytes still on the way and the next round sent on a new one: docs/safety.md "A
 * token per attempt"). A bounded number of them are lost: never run, or run with the reply
 * lost; the caller's node timeout then answers `failed`. A request that runs after the
 * caller's timeout is client.pml's on_timeout (LATE).
 * A reply is counted by its client in the step that runs the request: its delay is folded
 * into the request's (the validity counts from t0 either way; only the time of the decision
 * differs, which the scheduler varies anyway). Bounds, not probabilities: they keep liveness
 * checkable (a fault cannot repeat forever) and the state space finite. */

byte acq_m[CLIENTS * N];    /* ACQUIRE of the rounds whose bits are set */
byte rel_m[CLIENTS * N];    /* RELEASE (a lease's release or a failed round's cleanup) */
byte ext_m[CLIENTS * N];    /* EXTEND with the lease's ttl */
byte ext_short_m[CLIENTS * N];  /* EXTEND with TTL_SHORT: apart, so that the two run in any order */
byte wb_m[CLIENTS * N];     /* WRITEBACK, with the fence wb_f */
byte adopt_m[CLIENTS * N];  /* ADOPT (handover.lua), the adopter's round */
byte wb_f[CLIENTS * N];


/* The client sends on its connection to node n: a new connection first if the node restarted
 * since (the handshake reads INFO server: node_health_board::on_server_info). */
inline send(c, n, k, r, arg) {
    if
    :: conn_run[CN(c, n)] != run_id[n] -> on_server_info(c, n)
    :: else -> skip
    fi;
    if
    :: k == ACQUIRE -> acq_m[CN(c, n)] = acq_m[CN(c, n)] | BIT(r)
    :: k == RELEASE -> rel_m[CN(c, n)] = rel_m[CN(c, n)] | BIT(r)
    :: k == EXTEND && arg != TTL_SHORT -> ext_m[CN(c, n)] = ext_m[CN(c, n)] | BIT(r)
    :: k == EXTEND && arg == TTL_SHORT -> ext_short_m[CN(c, n)] = ext_short_m[CN(c, n)] | BIT(r)
    :: k == ADOPT -> adopt_m[CN(c, n)] = adopt_m[CN(c, n)] | BIT(r)
    :: k == WRITEBACK -> wb_m[CN(c, n)] = wb_m[CN(c, n)] | BIT(r); wb_f[CN(c, n)] = arg
    fi
}

/* The client counts the answer (client.pml on_reply). */
inline reply(c, k, n, r, v, f) {
    on_reply(c, k, n, r, v, f)
}


/* Requests of one round go on one connection, in order: a release, an extend or a write-back
 * of round r runs after round r's acquire at that node. Rounds overtake each other freely. */
#define AFTER_ACQUIRE(c, n, r)  (((acq_m[CN(c, n)] | adopt_m[CN(c, n)]) & BIT(r)) == 0)

/* `first`: m is the acquires, which wait for nothing */
#define READY_ROUND(m, first, c, n, r)  ((m[CN(c, n)] & BIT(r)) && (first || AFTER_ACQUIRE(c, n, r)))
#define READY(m, first, c, n)  (READY_ROUND(m, first, c, n, 1) || READY_ROUND(m, first, c, n, 2) || READY_ROUND(m, first, c, n, 3))
/* Some request of kind `m` to node n may run now. */
#define IN_FLIGHT(m, first, n)  (READY(m, first, 0, n) || READY(m, first, 1, n))

/* Takes one request of the set `m` to node n: its client c and round r. (A macro: an inline
 * cannot take an array.) */
#define TAKE(m, first, n, c, r)                                     \
    if                                                       \
    :: READY(m, first, 0, n) -> c = 0                               \
    :: READY(m, first, 1, n) -> c = 1                               \
    fi;                                                      \
    if                                                       \
    :: READY_ROUND(m, first, c, n, 1) -> r = 1                      \
    :: READY_ROUND(m, first, c, n, 2) -> r = 2                      \
    :: READY_ROUND(m, first, c, n, 3) -> r = 3                      \
    fi;                                                      \
    m[CN(c, n)] = m[CN(c, n)] & ~BIT(r)
