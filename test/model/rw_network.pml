/* SPDX-License-Identifier: BSL-1.0 */
/* rw_network.pml: the read-write model's requests in flight, as network.pml of the lock's model:
 * a bit per round in a set per (client, node, kind). A node runs them in any order across
 * rounds, in order within a round (whatever else a round sends to a node runs after its
 * acquire there); a bounded number (`losses`) are lost, the request or its reply, and the
 * caller's node timeout counts `failed`. A reply is counted in the step that runs its request. */

byte acq_m[MAXC * MAXN];    /* ACQUIRE of the rounds whose bits are set */
byte quiet_m[MAXC * MAXN];  /* rw_release.lua "quiet": a lost round's cleanup, the hold only */
byte rel_m[MAXC * MAXN];    /* rw_release.lua with no ARGV[2] (a lease's release) or "leave"
                             * (an acquisition's end): the hold and the mark */
byte ext_m[MAXC * MAXN];    /* EXTEND */
byte unm_m[MAXC * MAXN];    /* rw_release.lua "unmark": a won round's mark, the mark only */
#define CN(c, n) ((c) * MAXN + (n))

inline send(c, n, k, r) {
    if
    :: k == ACQUIRE -> acq_m[CN(c, n)] = acq_m[CN(c, n)] | BIT(r)
    :: k == QUIET -> quiet_m[CN(c, n)] = quiet_m[CN(c, n)] | BIT(r)
    :: k == RELEASE -> rel_m[CN(c, n)] = rel_m[CN(c, n)] | BIT(r)
    :: k == EXTEND -> ext_m[CN(c, n)] = ext_m[CN(c, n)] | BIT(r)
    :: k == UNMARK -> unm_m[CN(c, n)] = unm_m[CN(c, n)] | BIT(r)
    fi
}

#define AFTER_ACQUIRE(c, n, r)  ((acq_m[CN(c, n)] & BIT(r)) == 0)
#define READY_ROUND(m, first, c, n, r)  ((m[CN(c, n)] & BIT(r)) && (first || AFTER_ACQUIRE(c, n, r)))
#define READY(m, first, c, n)  (READY_ROUND(m, first, c, n, 1) || READY_ROUND(m, first, c, n, 2))
#define IN_FLIGHT(m, first, n) (READY(m, first, 0, n) || READY(m, first, 1, n) || READY(m, first, 2, n))

/* Takes one request of the set `m` to node n: its client c and round r. */
#define TAKE(m, first, n, c, r)                                     \
    if                                                              \
    :: READY(m, first, 0, n) -> c = 0                               \
    :: READY(m, first, 1, n) -> c = 1                               \
    :: READY(m, first, 2, n) -> c = 2                               \
    fi;                                                             \
    if                                                              \
    :: READY_ROUND(m, first, c, n, 1) -> r = 1                      \
    :: READY_ROUND(m, first, c, n, 2) -> r = 2                      \
    fi;                                                             \
    m[CN(c, n)] = m[CN(c, n)] & ~BIT(r)
