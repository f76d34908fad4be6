/* SPDX-License-Identifier: BSL-1.0 */
/* fair_net.pml: the fair model's clock and requests in flight, after test/model/time.pml and
 * network.pml (whose globals the plain model declares), carrying the calls src/lock/kinds/fair.cpp
 * makes of src/scripts/fair.lua (acquire lines 33-41, round_cleanup 58-61, release 64-66,
 * leave_queue 68-71): a bit per (client, node, call, round); a node runs
 * them in any order across rounds, a round's cleanup, release or dequeue after its acquire
 * (one connection, in order); the round's acquire may run after a later round's requests (a
 * connection given up with its bytes on the way: a late round). */

/* The client sends to node n. ACQUIRE and a cleanup note whether the acquisition had its
 * ticket then (ARGV[5]: the number, else 'none'/'local'; the cleanup: 'requeue', else
 * 'withdraw', fair.cpp round_cleanup). */
inline send(c, n, k, r) {
    if
    :: k == ACQUIRE ->
        acq_m[CN(c, n)] = acq_m[CN(c, n)] | BIT(r);
        if
        :: ticket[c] != 0 -> acq_tk[CN(c, n)] = acq_tk[CN(c, n)] | BIT(r)
        :: else -> skip
        fi
    :: k == WITHDRAW || k == REQUEUE ->
        cln_m[CN(c, n)] = cln_m[CN(c, n)] | BIT(r);
        if
        :: k == REQUEUE -> cln_rq[CN(c, n)] = cln_rq[CN(c, n)] | BIT(r)
        :: else -> skip
        fi
    :: k == RELEASE -> rel_m[CN(c, n)] = rel_m[CN(c, n)] | BIT(r)
    :: k == DEQUEUE -> deq_m[CN(c, n)] = deq_m[CN(c, n)] | BIT(r)
    fi
}

#define AFTER_ACQUIRE(c, n, r)  ((acq_m[CN(c, n)] & BIT(r)) == 0)
/* `first`: m is the acquires, which wait for nothing */
#define READY_ROUND(m, first, c, n, r)  ((m[CN(c, n)] & BIT(r)) && (first || AFTER_ACQUIRE(c, n, r)))
#define READY(m, first, c, n)  (READY_ROUND(m, first, c, n, 1) || READY_ROUND(m, first, c, n, 2) || READY_ROUND(m, first, c, n, 3))
#define IN_FLIGHT(m, first, n)  (READY(m, first, 0, n) || READY(m, first, 1, n) || READY(m, first, 2, n))

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
    :: READY_ROUND(m, first, c, n, 3) -> r = 3                      \
    fi;                                                             \
    m[CN(c, n)] = m[CN(c, n)] & ~BIT(r)

/* The one clock (time.pml): a lock key the node expires is gone for every call. The queue's
 * deadlines are not keys: a call evicts the places whose deadline passed (fair_node.pml). */
proctype clock() {
    byte e;
end:
    do
    :: atomic {
        now < MAXT -> now++;
        e = 0;
        do
        :: e < NODES ->
            if
            :: lk_p[e] != NOBODY && lk_exp[e] <= now -> lk_p[e] = NOBODY; lk_r[e] = 0; lk_h[e] = false; lk_exp[e] = 0
            :: else -> skip
            fi;
            e++
        :: else -> break
        od;
        e = 0
       }
    od
}
