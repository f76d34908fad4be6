/* SPDX-License-Identifier: BSL-1.0 */
/* fair_client.pml: a client's fair acquisition: its rounds (src/lock/acquire/acquire_fsm.cpp
 * start_round, on_answer, note_place, grant and succeed, dequeue, leave), the ticket
 * (src/lock/acquire/acquire_round.cpp note_ticket), a failed round's cleanup and the hand-off it
 * takes between rounds (src/lock/acquire/acquire_fsm_waits.cpp fail_round, on_handoff;
 * acquire_round.cpp hand_over, take_handoff, refused; wait_policy.cpp judge_handoff), its lease
 * and release (src/lock/kinds/fair.cpp: the calls). The round's
 * value is "<place>.<n>" (fair.cpp round_value); a hand-off's "<place>:<place>.<n>".
 * Abstracted: the sleeps between rounds and the wake messages (a round may start whenever the
 * cleanups are done: any sleep), extends, the quarantine (no restarts), replicas, min_validity
 * (0), the acquisition's deadline (its rounds are bounded instead), fences (a fenced lock has no
 * hand-off). */

/* Property 1, checked where a client's belief begins (a grant, a hand-off taken): beliefs
 * only end otherwise, so this is [] at most one BELIEVES. */
inline check_exclusion(c) {
    PROPERTY(mutual_exclusion, (c == 0 || !BELIEVES(0)) && (c == 1 || !BELIEVES(1)) && (c == 2 || !BELIEVES(2)))
}

inline send_all(c, k, r) {
    i = 0;
    do
    :: i < NODES -> send(c, i, k, r); i++
    :: else -> break
    od;
    i = 0
}

/* acquire_fsm::dequeue to the nodes of `mask` (the refusers: they may still queue us) */
inline dequeue_nodes(c, mask) {
    i = 0;
    do
    :: i < NODES ->
        if
        :: mask & BIT(i) -> send(c, i, DEQUEUE, rnd[c])
        :: else -> skip
        fi;
        i++
    :: else -> break
    od;
    i = 0
}

/* acquire_fsm::start_round: the n-th round's value, t0 before the first send */
inline begin_round(c) {
    rnd[c]++;
    printf("t=%d client %d begins round %d, final %d\n", now, c, rnd[c], final[c]);
    t0[c] = now;
    answered[c] = 0; granted_by[c] = 0; denied_by[c] = 0; n_granted[c] = 0; n_other[c] = 0;
    heard[c] = 0; tmax[c] = 0; handed[c] = 0;
    phase[c] = COUNTING;
    send_all(c, ACQUIRE, rnd[c])
}

/* acquire_fsm::succeed: the refusers leave the queue (leaves_refusers: once it has a ticket);
 * the lease, valid until `until` */
inline succeed(c, refused, until, handoff) {
    if
    :: ticket[c] != 0 -> dequeue_nodes(c, refused)
    :: else -> skip
    fi;
    printf("t=%d client %d holds, round %d, hand-off %d, valid until %d\n", now, c, rnd[c], handoff, until);
    held[c] = true;
    valid_until[c] = until;
    by_handoff[c] = handoff;
    check_exclusion(c);
    succeeded[c] = true;
    t0[c] = 0; denied_by[c] = 0; n_granted[c] = 0; n_other[c] = 0; heard[c] = 0; tmax[c] = 0;
    handed[c] = 0; final[c] = false;
    phase[c] = HOLDING
}

/* The acquisition is over (released, or left): only what a straggler's reply reads is kept
 * (a lease's round, its calls completed, the ticket a cleanup in flight sends). */
inline forget(c) {
    if
    :: !succeeded[c] -> answered[c] = 0; rnd[c] = 0
    :: else -> skip
    fi;
    t0[c] = 0; granted_by[c] = 0; denied_by[c] = 0; n_granted[c] = 0; n_other[c] = 0;
    heard[c] = 0; tmax[c] = 0; handed[c] = 0; cl_wait[c] = 0; final[c] = false;
    held[c] = false; valid_until[c] = 0; by_handoff[c] = false;
    phase[c] = DONE
}

/* acquire_fsm_waits.cpp fail_round: the final round (final: the acquisition's deadline passed)
 * leaves (acquire_fsm::leave: 'release' of its
 * value to every node, a waiter's); any other cleans up where it did not meet a denial
 * (nodes_to_release) and waits for those cleanups before its next round. */
inline lose_round(c) {
    printf("t=%d client %d loses round %d, final %d\n", now, c, rnd[c], final[c]);
    if
    :: final[c] ->
        send_all(c, RELEASE, rnd[c]);
        forget(c)
    :: else ->
        cl_wait[c] = 0;
        i = 0;
        do
        :: i < NODES ->
            if
            :: denied_by[c] & BIT(i) -> skip
            :: ticket[c] != 0 -> send(c, i, REQUEUE, rnd[c]); cl_wait[c] = cl_wait[c] | BIT(i)
            :: else -> send(c, i, WITHDRAW, rnd[c]); cl_wait[c] = cl_wait[c] | BIT(i)
            fi;
            i++
        :: else -> break
        od;
        i = 0;
        phase[c] = SLEEPING
    fi
}

/* acquire_fsm::grant: the validity counted from t0 (the late-round rule: none left, a failure) */
inline grant(c) {
    if
    :: t0[c] + TTL - MARGIN > now ->
        succeed(c, answered[c] & ~granted_by[c], t0[c] + TTL - MARGIN, false)
    :: else -> lose_round(c)
    fi
}

/* acquire_fsm::on_answer for round r's call to node n, once per call (its reply, or its
 * failure). A reply to an earlier round is dropped (start_round's callback). */
inline on_acquire_reply(c, n, r, v, tk) {
    if
    :: r == rnd[c] && !(answered[c] & BIT(n)) ->
        answered[c] = answered[c] | BIT(n);
        if
        :: v == GRANTED -> granted_by[c] = granted_by[c] | BIT(n)
        :: else -> granted_by[c] = granted_by[c] & ~BIT(n)
        fi;
        if
        :: phase[c] == HOLDING || phase[c] == DONE ->
            /* done_: a straggler of the round that won, which may still queue us */
            if
            :: succeeded[c] && ticket[c] != 0 && v != GRANTED -> send(c, n, DEQUEUE, r)
            :: else -> skip
            fi
        :: else ->
            /* note_place: acquire_round::note_ticket, also after the round was decided */
            if
            :: v != FAILED && ticket[c] == 0 ->
                heard[c]++;
                if
                :: tk > tmax[c] -> tmax[c] = tk
                :: else -> skip
                fi;
                if
                :: heard[c] >= Q -> ticket[c] = tmax[c]; heard[c] = 0; tmax[c] = 0
                :: else -> skip
                fi
            :: else -> skip
            fi;
            if
            :: phase[c] == COUNTING ->
                /* acquire_round::count, vote_tally::add: decided as soon as certain */
                if
                :: v == GRANTED -> n_granted[c]++
                :: v == DENIED -> denied_by[c] = denied_by[c] | BIT(n); n_other[c]++
                :: v == FAILED -> n_other[c]++
                fi;
                if
                :: n_granted[c] >= Q -> grant(c)
                :: n_granted[c] < Q && n_other[c] > MAY_FAIL -> lose_round(c)
                :: else -> skip
                fi
            :: else -> skip   /* decided: a late grant splits nothing here (late_split) */
            fi
        fi
    :: else -> skip
    fi
}

/* fail_round's cleanup callback: cleanups_pending_ */
inline on_cleanup_reply(c, n, r) {
    if
    :: r == rnd[c] && phase[c] == SLEEPING -> cl_wait[c] = cl_wait[c] & ~BIT(n)
    :: else -> skip
    fi
}

/* acquire_fsm::on_handoff: node n handed the lock over to round r's registration. Taken only
 * asleep, with the cleanups done, for the current round's token; at a quorum of nodes, with
 * validity left of min(ttl, queue_timeout) from the round's t0 (judge_handoff). Anything else
 * is on_released or wait_for_more: a wake-up, which the model's next round needs not. */
inline on_handoff(c, n, r) {
    if
    :: phase[c] == SLEEPING && cl_wait[c] == 0 && r == rnd[c] && rnd[c] > 0 && !(handed[c] & BIT(n)) ->
        handed[c] = handed[c] | BIT(n);
        hcount = 0; i = 0;
        do
        :: i < NODES ->
            if
            :: handed[c] & BIT(i) -> hcount++
            :: else -> skip
            fi;
            i++
        :: else -> break
        od;
        i = 0;
        if
        :: hcount >= Q ->
            term = (TTL < QT -> TTL : QT);
            if
            :: t0[c] + term - MARGIN > now ->
                /* take_handoff: the refusers are the nodes that did not hand over */
                succeed(c, (BIT(NODES) - 1) & ~handed[c], t0[c] + term - MARGIN, true)
            :: else -> skip   /* try_round */
            fi
        :: else -> skip       /* wait_for_more */
        fi;
        hcount = 0; term = 0
    :: else -> skip
    fi
}

proctype client(byte c) {
    byte n, i, hcount, term;
end:
    do
    /* The next round. The last one within the horizon either is final (lost, it leaves) or
     * not (lost, it sleeps past the horizon: its next round, or its leave, comes after MAXT). */
    :: atomic {
        phase[c] == SLEEPING && rnd[c] < k_rounds[c] && cl_wait[c] == 0 ->
        if
        :: final[c] = (rnd[c] + 1 >= k_rounds[c])
        :: rnd[c] + 1 >= k_rounds[c] -> final[c] = false
        fi;
        d_step { begin_round(c) }
       }
    /* LATE: a call fails (its connection given up: a health check, a node timeout) while its
     * request is still on its way; the request may run later. */
    :: atomic {
        (late & BIT(c)) && phase[c] == COUNTING && answered[c] != BIT(NODES) - 1 ->
        if
        :: !(answered[c] & BIT(0)) -> n = 0
        :: NODES > 1 && !(answered[c] & BIT(1)) -> n = 1
        :: NODES > 2 && !(answered[c] & BIT(2)) -> n = 2
        fi;
        d_step { printf("t=%d client %d: its call to node %d fails\n", now, c, n); on_acquire_reply(c, n, rnd[c], FAILED, 0); n = 0 }
       }
    :: atomic { (late & BIT(c)) && phase[c] == SLEEPING && cl_wait[c] != 0 -> printf("t=%d client %d: its cleanups fail\n", now, c); cl_wait[c] = 0 }
    /* a "granted <round>" message of node n */
    :: atomic {
        hmsg[CN(c, 0)] != 0 || hmsg[CN(c, 1)] != 0 || hmsg[CN(c, 2)] != 0 ->
        if
        :: hmsg[CN(c, 0)] != 0 -> n = 0
        :: hmsg[CN(c, 1)] != 0 -> n = 1
        :: hmsg[CN(c, 2)] != 0 -> n = 2
        fi;
        d_step {
            printf("t=%d client %d hears node %d's granted %d.%d\n", now, c, n, c, hmsg[CN(c, n)]);
            on_handoff(c, n, hmsg[CN(c, n)]); hmsg[CN(c, n)] = 0; n = 0
        }
       }
    /* the lease's release: 'release' of its value, any of the place's, to every node */
    :: d_step { phase[c] == HOLDING -> printf("t=%d client %d releases\n", now, c); send_all(c, RELEASE, rnd[c]); forget(c) }
    od
}
