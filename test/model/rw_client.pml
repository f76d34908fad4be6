/* SPDX-License-Identifier: BSL-1.0 */
/* rw_client.pml: a client of the read-write lock: its rounds, a writer's mark between them,
 * its lease (extend, release), as a lock's client (client.pml) without quarantine or fences.
 * The state machine that drives them (acquire_fsm.cpp) only decide when a message is sent, which the
 * model leaves to the scheduler: a client may begin its next round, extend or release at any
 * step. */

#define NEXT_NONE   0
#define NEXT_GRANT  1
#define NEXT_LOSE   2

/* The property, checked where client c's belief begins (a grant, an extend): beliefs only end
 * otherwise (the clock), so this is [] (no two clients apart both believe). */
inline check_apart(c) {
    i = 0;
    do
    :: i < MAXC ->
        if
        :: i != c && BELIEVES(i) && APART(c, i) -> bad = true
        :: else -> skip
        fi;
        i++
    :: else -> break
    od;
    i = 0;
    PROPERTY(readers_and_writer_apart, !bad);
    bad = false
}

/* read_write.cpp kept_between_rounds: a writer that waits leaves a mark between its rounds */
#define MARKS(c)  (mode[c] == WRITE && waits)

inline clear_round(c) {
    answered[c] = 0; granted_by[c] = 0; denied_by[c] = 0;
    n_granted[c] = 0; n_denied[c] = 0; n_failed[c] = 0;
    mistake[c] = false
}

/* acquire_fsm::start_round + acquire_round::begin: a new token, t0 before the first send; a
 * retry of the acquisition names its previous round's token (read_write.cpp acquire, ARGV[7]) */
inline begin_round(c) {
    round[c]++;
    if
    :: again[c] -> retries[c] = retries[c] | BIT(round[c])
    :: else -> skip
    fi;
    t0[c] = now;
    phase[c] = COUNTING;
    i = 0;
    do
    :: i < NN -> send(c, i, ACQUIRE, round[c]); i++
    :: else -> break
    od;
    i = 0
}

/* acquire_fsm_waits.cpp fail_round. The acquisition goes on (rounds left, no caller's mistake):
 * the round's cleanup, "quiet" (read_write.cpp round_cleanup: the mark stays for the next
 * round, which moves it), to every node that did not deny (acquire_round::nodes_to_release).
 * It ends (upgrade_refused, is_callers_mistake; or no round left): acquire_fsm::leave, "leave"
 * (the hold and the mark) to every node for a writer that marks (waits_between_rounds), to
 * nodes_to_release otherwise. Cleanups' replies are not waited for: the next round may
 * overtake them (after their timeout, in the real code). */
inline lose_round(c) {
    i = 0;
    do
    :: i < NN ->
        if
        :: (mistake[c] || round[c] >= ROUNDS(c)) && (MARKS(c) || !(denied_by[c] & BIT(i))) ->
            send(c, i, RELEASE, round[c])
        :: !(mistake[c] || round[c] >= ROUNDS(c)) && !(denied_by[c] & BIT(i)) ->
            send(c, i, QUIET, round[c])
        :: else -> skip
        fi;
        i++
    :: else -> break
    od;
    i = 0;
    if
    :: mistake[c] || round[c] >= ROUNDS(c) -> again[c] = false
    :: else -> again[c] = true
    fi;
    clear_round(c);
    phase[c] = IDLE
}

/* acquire_fsm::grant: a quorum that came after the validity ran out is validity_expired, a lost
 * round. acquire_fsm::succeed: a writer that marks takes its mark from the nodes that refused
 * the round and those yet to answer (read_write.cpp leave_queue: "unmark"; the real code sends
 * it to the latter when they refuse, the model to all of them, after the acquire there). */
inline grant(c) {
    if
    :: VALIDITY_LEFT(t0[c]) > 0 ->
        held[c] = true;
        valid_until[c] = t0[c] + TTL - MARGIN;
        check_apart(c);
        if
        :: MARKS(c) ->
            i = 0;
            do
            :: i < NN ->
                if
                :: (denied_by[c] & BIT(i)) || !(answered[c] & BIT(i)) -> send(c, i, UNMARK, round[c])
                :: else -> skip
                fi;
                i++
            :: else -> break
            od;
            i = 0
        :: else -> skip
        fi;
        ext_left[c] = EXTENDS;
        clear_round(c);
        again[c] = false;
        phase[c] = HOLDING;
        d = NEXT_NONE
    :: else -> d = NEXT_LOSE
    fi
}

/* acquire_fsm.cpp: {-1, 0} is a failed vote with upgrade_refused, a caller's mistake */
inline count(c, n, v) {
    answered[c] = answered[c] | BIT(n);
    if
    :: v == GRANTED -> granted_by[c] = granted_by[c] | BIT(n); n_granted[c]++
    :: v == DENIED -> denied_by[c] = denied_by[c] | BIT(n); n_denied[c]++
    :: v == REFUSED -> mistake[c] = true; n_failed[c]++
    :: v == FAILED -> n_failed[c]++
    fi;
    if
    :: n_granted[c] >= Q -> d = NEXT_GRANT
    :: n_granted[c] < Q && n_denied[c] + n_failed[c] > MAY_FAIL -> d = NEXT_LOSE
    :: else -> skip
    fi
}

/* --- a lease: src/lock/lease/lease_fsm.cpp, lease_rounds.cpp -------------------------------------- */
inline begin_extend(c) {
    ext_left[c]--;
    ext_t0[c] = now;
    ext_granted[c] = 0; ext_other[c] = 0;
    phase[c] = EXTENDING;
    i = 0;
    do
    :: i < NN -> send(c, i, EXTEND, round[c]); i++
    :: else -> break
    od;
    i = 0
}

/* An extend confirmed by a quorum moves the validity to ext_t0 + ttl - drift, never reviving a
 * lease whose validity already ran out. */
inline count_extend(c, v) {
    if
    :: v == GRANTED -> ext_granted[c]++
    :: else -> ext_other[c]++
    fi;
    if
    :: ext_granted[c] >= Q ->
        if
        :: now < valid_until[c] && ext_t0[c] + TTL - MARGIN > valid_until[c] ->
            valid_until[c] = ext_t0[c] + TTL - MARGIN;
            check_apart(c)
        :: else -> skip
        fi;
        ext_granted[c] = 0; ext_other[c] = 0; ext_t0[c] = 0;
        phase[c] = HOLDING
    :: ext_granted[c] < Q && ext_other[c] > MAY_FAIL ->
        ext_granted[c] = 0; ext_other[c] = 0; ext_t0[c] = 0;
        phase[c] = HOLDING
    :: else -> skip
    fi
}

/* lease_state::send_release: the token's release on every node (read_write.cpp release,
 * announced: no ARGV[2], the hold and any mark) */
inline release_lease(c) {
    i = 0;
    do
    :: i < NN -> send(c, i, RELEASE, round[c]); i++
    :: else -> break
    od;
    i = 0;
    held[c] = false; valid_until[c] = 0; ext_left[c] = 0;
    phase[c] = IDLE
}

inline on_reply(c, k, n, r, v) {
    d = NEXT_NONE;
    if
    :: k == ACQUIRE && r == round[c] && phase[c] == COUNTING && !(answered[c] & BIT(n)) -> count(c, n, v)
    :: k == EXTEND && r == round[c] && phase[c] == EXTENDING -> count_extend(c, v)
    :: else -> skip   /* an answer to a round or call already decided */
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

proctype client(byte c) {
    byte i;
end:
    do
    :: atomic { phase[c] == IDLE && round[c] < ROUNDS(c) -> begin_round(c) }
    :: atomic { phase[c] == HOLDING && ext_left[c] > 0 -> begin_extend(c) }
    :: atomic { phase[c] == HOLDING -> release_lease(c) }
    od
}
