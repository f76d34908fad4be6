/* SPDX-License-Identifier: BSL-1.0 */
/* client.pml: a client of the lock: the restart quarantine it keeps per node, its acquire rounds,
 * its lease (extend, fenced write, release), and the protected resource it writes to. The model
 * runs the pure pieces' rules; the state machine that drives them (acquire_fsm.cpp) only decide
 * when a message is sent, which the model leaves to the scheduler. */


/* What a reply decided, done once in one place (decide): each step below is expanded once
 * per caller of on_reply, not once per branch that reaches it. `d` is a local of the process
 * that runs the reply. */
#define NEXT_NONE    0
#define NEXT_SETTLE  1   /* a quorum granted: settle the fence (count) */
#define NEXT_GRANT   2   /* a quorum has the fence: the lease, if validity is left (grant) */
#define NEXT_LOSE    3   /* the round is lost: clean up (lose_round) */

/* failover_mark.lua on node n, in client c's handshake: mark a promoted master once, starting
 * the quarantine of max_ttl + drift (the longest recorded: every client's is TTL + MARGIN
 * here); every client that connects while it runs waits for it. */
inline failover_mark(c, n) {
    if
    :: failover && !no_failover_mark && n == 0 && promoted ->
        if
        :: !marked -> marked = true; failover_until = now + TTL + MARGIN
        :: else -> skip
        fi;
        if
        :: failover_until > now && q_until[CN(c, n)] < failover_until -> q_until[CN(c, n)] = failover_until
        :: else -> skip
        fi
    :: else -> skip
    fi
}

/* --- restart quarantine: src/lock/node_health.cpp node_health::on_server_info ------------ */
/* A connection's handshake read INFO server: run_id and uptime. */
inline on_server_info(c, n) {
    if
    :: no_quarantine -> skip
    :: else ->
        /* a run_id other than the one seen before: no vote until max_ttl + drift from now */
        if
        :: seen_run[CN(c, n)] != 0 && seen_run[CN(c, n)] != run_id[n] &&
           q_until[CN(c, n)] < now + TTL + MARGIN -> q_until[CN(c, n)] = now + TTL + MARGIN
        :: else -> skip
        fi;
        /* the uptime rule: no vote until start + 1 s + max_ttl + drift (whole seconds of uptime) */
        if
        :: !run_id_rule_only && q_until[CN(c, n)] < started[n] + SEC + TTL + MARGIN ->
            q_until[CN(c, n)] = started[n] + SEC + TTL + MARGIN
        :: else -> skip
        fi
    fi;
    failover_mark(c, n);
    seen_run[CN(c, n)] = run_id[n];
    known[CN(c, n)] = true;
    conn_run[CN(c, n)] = run_id[n]
}

/* node_health::votes, asked by client_state::admit when a grant is counted */
#define VOTES(c, n)  (no_quarantine || (known[CN(c, n)] && now >= q_until[CN(c, n)]))

/* Property 1, checked where a client's belief begins (a grant, an extend): beliefs only end
 * otherwise, so this is [] !(BELIEVES(0) && BELIEVES(1)). */
inline check_exclusion(c) {
    PROPERTY(mutual_exclusion, !BELIEVES(1 - c))
}

/* --- the protected resource: src/scripts/fenced_set.lua ---------------------------------- */
/* Property 2: it never accepts a fence lower than one it accepted. NO_FENCES: a resource that
 * does not check (the negative control). */
inline fenced_set(f) {
    if
    :: !no_fences && f < res_seen -> skip    /* refused: stale_fence */
    :: else ->
        PROPERTY(resource_fence_order, f >= max_accepted_fence);
        if
        :: f > max_accepted_fence -> max_accepted_fence = f
        :: else -> skip
        fi;
        if
        :: f > res_seen -> res_seen = f
        :: else -> skip
        fi
    fi
}

/* --- an acquire round: src/lock/acquire_round.cpp ---------------------------------------- */
inline clear_round(c) {
    answered[c] = 0; granted_by[c] = 0; denied_by[c] = 0;
    n_granted[c] = 0; n_denied[c] = 0; n_failed[c] = 0;
    i = 0;
    do
    :: i < N -> node_fence[CN(c, i)] = 0; i++
    :: else -> break
    od;
    i = 0;
    confirmed[c] = 0; wb_pending[c] = 0
}

/* acquire_fsm::start_round + acquire_round::begin: a new token, t0 before the first send */
inline begin_round(c) {
    round[c]++;
    t0[c] = now;
    fence[c] = 0;
    phase[c] = COUNTING;
    i = 0;
    do
    :: i < N -> send(c, i, ACQUIRE, round[c], 0); i++
    :: else -> break
    od;
    i = 0
}

/* acquire_fsm_waits.cpp acquire_fsm::fail_round / acquire_fsm::leave: the cleanup goes to every
 * node that did not deny (acquire_round::nodes_to_release): one that failed or has not
 * answered may have run the command. Its replies are not waited for here: the model lets
 * the next round overtake it, which the real code allows after a cleanup's timeout. */
inline lose_round(c) {
    i = 0;
    do
    :: i < N ->
        if
        :: denied_by[c] & BIT(i) -> skip
        :: else -> send(c, i, RELEASE, round[c], 0)
        fi;
        i++
    :: else -> break
    od;
    i = 0;
    clear_round(c);
    fence[c] = 0;
    phase[c] = IDLE
}

/* acquire_fsm::grant: the late-round rule: a quorum that came after the validity ran out is a
 * failure (validity_expired), released like any failed round. */
inline grant(c) {
    if
    :: VALIDITY_LEFT(t0[c]) > 0 ->
        held[c] = true;
        valid_until[c] = t0[c] + TTL - MARGIN;
        check_exclusion(c);
        /* Property 2's premise: fences strictly increase from grant to grant */
        if
        :: fenced -> PROPERTY(fences_increase, fence[c] > max_granted_fence); max_granted_fence = fence[c]
        :: else -> skip
        fi;
        ext_left[c] = (c == 0 -> EXTENDS : EXTENDS_1);
        wrote[c] = false;
        clear_round(c);
        phase[c] = HOLDING;
        d = NEXT_NONE
    :: else -> d = NEXT_LOSE
    fi
}

/* fence_settlement::settle over the granting nodes: the largest fence of the quorum; nodes
 * behind it are written back until a quorum has it. */
inline settle_fence(c) {
    i = 0;
    do
    :: i < N ->
        if
        :: (granted_by[c] & BIT(i)) && node_fence[CN(c, i)] > fence[c] -> fence[c] = node_fence[CN(c, i)]
        :: else -> skip
        fi;
        i++
    :: else -> break
    od;
    i = 0;
    do
    :: i < N ->
        if
        :: (granted_by[c] & BIT(i)) && node_fence[CN(c, i)] == fence[c] -> confirmed[c]++
        :: (granted_by[c] & BIT(i)) && node_fence[CN(c, i)] != fence[c] ->
            wb_pending[c]++; send(c, i, WRITEBACK, round[c], fence[c])
        :: else -> skip
        fi;
        i++
    :: else -> break
    od;
    i = 0;
    if
    :: confirmed[c] >= Q -> d = NEXT_GRANT
    :: else -> phase[c] = WRITING; d = NEXT_NONE
    fi
}

/* acquire_fsm::count: client_state::admit (a quarantined node's grant counts as failed), then
 * acquire_round::count and vote_tally::add, which decides as soon as the outcome is certain. */
inline count(c, n, v, f) {
    answered[c] = answered[c] | BIT(n);
    if
    :: v == GRANTED && VOTES(c, n) ->
        granted_by[c] = granted_by[c] | BIT(n); n_granted[c]++; node_fence[CN(c, n)] = f
    :: v == DENIED -> denied_by[c] = denied_by[c] | BIT(n); n_denied[c]++
    :: else -> n_failed[c]++
    fi;
    if
    :: n_granted[c] >= Q -> d = NEXT_SETTLE   /* unfenced: every fence is 0, all confirmed */
    :: n_granted[c] < Q && (n_failed[c] > MAY_FAIL || n_denied[c] + n_failed[c] > MAY_FAIL) -> d = NEXT_LOSE
    :: else -> skip
    fi
}

/* --- a lease: src/lock/lease/lease_fsm.cpp, lease_rounds.cpp -------------------------------------- */
/* lease::async_extend(ttl): the watchdog's extends ask for the lease's ttl, a caller may ask
 * for a shorter one (TTL_SHORT). */
inline begin_extend(c) {
    ext_left[c]--;
    ext_t0[c] = now;
    if
    :: ext_ttl[c] = TTL
    :: TTL_SHORT > 0 -> ext_ttl[c] = TTL_SHORT
    fi;
    ext_granted[c] = 0; ext_other[c] = 0; ext_answered[c] = 0;
    phase[c] = EXTENDING;
    i = 0;
    do
    :: i < N -> send(c, i, EXTEND, round[c], ext_ttl[c]); i++
    :: else -> break
    od;
    i = 0
}

/* lease_fsm.cpp lease_fsm::on_decided: an extend confirmed by a quorum moves the validity to
 * ext_t0 + ttl - drift (lower, too, for a shorter ttl), but never revives a lease whose
 * validity already ran out (the watchdog declared it lost). */
inline count_extend(c, n, v) {
    ext_answered[c] = ext_answered[c] | BIT(n);
    if
    :: v == GRANTED && VOTES(c, n) -> ext_granted[c]++
    :: else -> ext_other[c]++
    fi;
    if
    :: ext_granted[c] >= Q ->
        if
        :: now < valid_until[c] && VALIDITY_LEFT_OF(ext_t0[c], ext_ttl[c]) > 0 ->
            valid_until[c] = ext_t0[c] + ext_ttl[c] - MARGIN;
            check_exclusion(c)
        :: else -> skip
        fi;
        ext_granted[c] = 0; ext_other[c] = 0; ext_t0[c] = 0; ext_ttl[c] = 0; ext_answered[c] = 0;
        phase[c] = HOLDING
    :: ext_granted[c] < Q && ext_other[c] > MAY_FAIL ->
        ext_granted[c] = 0; ext_other[c] = 0; ext_t0[c] = 0; ext_ttl[c] = 0; ext_answered[c] = 0;
        phase[c] = HOLDING
    :: else -> skip
    fi
}

/* lease_state::send_release: the token-checked release on every node (an adopter that kept the
 * written-out token releases that one: adopt_keeps_token) */
inline release_lease(c) {
    i = 0;
    do
    :: i < N ->
        if
        :: adopt_keeps_token && c == 1 -> send(0, i, RELEASE, handed_round, 0)
        :: else -> send(c, i, RELEASE, round[c], 0)
        fi;
        i++
    :: else -> break
    od;
    i = 0;
    held[c] = false; valid_until[c] = 0; fence[c] = 0; wrote[c] = false; ext_left[c] = 0;
    phase[c] = IDLE
}

/* --- the hand-over: src/lock/lease_handover.cpp, lease::handover and client::async_adopt --- */
/* lease::handover: client 0 writes its lease out; its critical section is over (docs/locks.md
 * asks for the hand-over then), so its belief ends here; the lease itself lives on: its release
 * still goes out later (handed_release). */
inline hand_over(c) {
    handed_round = round[c];
    handed_release = true;
    held[c] = false; valid_until[c] = 0; fence[c] = 0; wrote[c] = false; ext_left[c] = 0;
    phase[c] = IDLE
}

/* start_adopt: a round of the adopter's own (a new token, t0 before the first send) whose
 * node step is handover.lua, counted as an acquire is: a quorum within the validity. A failed
 * adoption's cleanup deletes what it took (the code gives it back to the written-out token:
 * that lease's belief has ended either way). */
inline begin_adopt(c) {
    round[c]++;
    t0[c] = now;
    fence[c] = 0;
    phase[c] = COUNTING;
    i = 0;
    do
    :: i < N -> send(c, i, ADOPT, round[c], 0); i++
    :: else -> break
    od;
    i = 0
}

inline decide(c) {
    if
    :: d == NEXT_SETTLE -> settle_fence(c)
    :: else -> skip
    fi;
    if
    :: d == NEXT_GRANT -> grant(c)
    :: else -> skip
    fi;
    if
    :: d == NEXT_LOSE -> lose_round(c)
    :: else -> skip
    fi;
    d = NEXT_NONE
}

inline on_reply(c, k, n, r, v, f) {
    if
    :: (k == ACQUIRE || k == ADOPT) && r == round[c] && phase[c] == COUNTING && !(answered[c] & BIT(n)) -> count(c, n, v, f)
    :: k == WRITEBACK && r == round[c] && phase[c] == WRITING ->
        /* fence_settlement::on_writeback */
        wb_pending[c]--;
        if
        :: v == GRANTED -> confirmed[c]++
        :: else -> skip
        fi;
        if
        :: confirmed[c] >= Q -> d = NEXT_GRANT
        :: confirmed[c] < Q && wb_pending[c] == 0 -> d = NEXT_LOSE    /* short of a quorum */
        :: else -> skip
        fi
    :: k == EXTEND && r == round[c] && phase[c] == EXTENDING && f == ext_ttl[c] && !(ext_answered[c] & BIT(n)) ->
        count_extend(c, n, v)
    :: else -> skip   /* an answer to a round or call already decided */
    fi;
    decide(c)
}

proctype client(byte c; byte rounds) {
    byte n, i, d;
end:
    do
    :: atomic { phase[c] == IDLE && round[c] < rounds -> begin_round(c) }
    :: atomic { adopt && c == 0 && handed_round == 0 && phase[c] == HOLDING -> hand_over(c) }
    :: atomic {   /* the written-out lease's release, sent after the adoption or before it */
        adopt && c == 0 && handed_release ->
        handed_release = false;
        i = 0;
        do
        :: i < N -> send(c, i, RELEASE, handed_round, 0); i++
        :: else -> break
        od;
        i = 0
       }
    :: atomic { adopt && c == 1 && handed_round != 0 && round[c] == 0 -> begin_adopt(c) }
    :: atomic {
        /* the node timeout of a request still on its way: it may run later (a late request) */
        late && phase[c] == COUNTING && now >= t0[c] + NODE_TIMEOUT && answered[c] != BIT(N) - 1 ->
        n = 0;
        do
        :: answered[c] & BIT(n) -> n++
        :: else -> break
        od;
        on_reply(c, ACQUIRE, n, round[c], FAILED, 0);
        n = 0
       }
    :: atomic { phase[c] == HOLDING && ext_left[c] > 0 -> begin_extend(c) }
    :: atomic {
        /* the same for an extend: its request may still run after it counted failed */
        late_extends && phase[c] == EXTENDING && now >= ext_t0[c] + NODE_TIMEOUT && ext_answered[c] != BIT(N) - 1 ->
        n = 0;
        do
        :: ext_answered[c] & BIT(n) -> n++
        :: else -> break
        od;
        on_reply(c, EXTEND, n, round[c], FAILED, ext_ttl[c]);
        n = 0
       }
    /* A write with the lease's fence, also after its validity ran out: the holder paused */
    :: atomic { fenced && (phase[c] == HOLDING || phase[c] == EXTENDING) && !wrote[c] -> wrote[c] = true; fenced_set(fence[c]) }
    :: atomic { phase[c] == HOLDING -> release_lease(c) }
    od
}
