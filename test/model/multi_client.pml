/* SPDX-License-Identifier: BSL-1.0 */
/* multi_client.pml: a client of multi.pml: its acquire rounds over a set of resources, its lease,
 * its extends and its release. */

/* --- a client: acquire rounds and a lease (client.pml's rules, unfenced) ------------------- */
inline clear_round(c) {
    answered[c] = 0; denied_by[c] = 0; n_granted[c] = 0; n_denied[c] = 0; n_failed[c] = 0
}

/* acquire_fsm::start_round + acquire_round::begin: a new token, t0 before the first send */
inline begin_round(c) {
    round[c]++;
    printf("MSC: t=%d client %d begins round %d\n", now, c, round[c]);
    t0[c] = now;
    phase[c] = COUNTING;
    t_i = 0;
    do
    :: t_i < NN -> send(c, t_i, ACQUIRE, round[c]); t_i++
    :: else -> break
    od;
    t_i = 0
}

/* acquire_fsm_waits.cpp fail_round / acquire_fsm::leave: the cleanup (multi.cpp round_cleanup:
 * multi_release.lua) to every node that did not deny (acquire_round::nodes_to_release).
 * NO_CLEANUP (control): none. */
inline lose_round(c) {
    printf("MSC: t=%d client %d loses round %d (denied by nodes %d)\n", now, c, round[c], denied_by[c]);
    t_i = 0;
    do
    :: t_i < NN ->
        if
        :: no_cleanup || (denied_by[c] & BIT(t_i)) -> skip
        :: else -> send(c, t_i, RELEASE, round[c])
        fi;
        t_i++
    :: else -> break
    od;
    t_i = 0;
    clear_round(c);
    t0[c] = 0;
    phase[c] = IDLE
}

/* acquire_fsm::grant: a quorum after the validity ran out is a failure (validity_expired) */
inline grant(c) {
    if
    :: VALIDITY_LEFT(t0[c]) > 0 ->
        held[c] = true;
        valid_until[c] = t0[c] + TTL - MARGIN;
        printf("MSC: t=%d client %d holds (round %d) until %d\n", now, c, round[c], valid_until[c]);
        check_exclusion(c);
        ext_left[c] = k_extends;
        clear_round(c);
        t0[c] = 0;
        phase[c] = HOLDING;
        t_d = NEXT_NONE
    :: else -> t_d = NEXT_LOSE
    fi
}

/* acquire_round::count, vote_tally::add (quorum.cpp): decided as soon as certain */
inline count(c, n, v) {
    answered[c] = answered[c] | BIT(n);
    if
    :: v == GRANTED -> n_granted[c]++
    :: v == DENIED -> denied_by[c] = denied_by[c] | BIT(n); n_denied[c]++
    :: else -> n_failed[c]++
    fi;
    if
    :: n_granted[c] >= Q -> t_d = NEXT_GRANT
    :: n_granted[c] < Q && (n_failed[c] > MAY_FAIL || n_denied[c] + n_failed[c] > MAY_FAIL) -> t_d = NEXT_LOSE
    :: else -> skip
    fi
}

inline begin_extend(c) {
    ext_left[c]--;
    ext_t0[c] = now;
    ext_granted[c] = 0; ext_other[c] = 0;
    phase[c] = EXTENDING;
    t_i = 0;
    do
    :: t_i < NN -> send(c, t_i, EXTEND, round[c]); t_i++
    :: else -> break
    od;
    t_i = 0
}

/* An extend confirmed by a quorum moves the validity to ext_t0 + ttl - drift; never revives a
 * lease whose validity ran out. */
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
            check_exclusion(c)
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

/* lease release: multi_release.lua on every node */
inline release_lease(c) {
    printf("MSC: t=%d client %d releases round %d\n", now, c, round[c]);
    t_i = 0;
    do
    :: t_i < NN -> send(c, t_i, RELEASE, round[c]); t_i++
    :: else -> break
    od;
    t_i = 0;
    held[c] = false; valid_until[c] = 0; ext_left[c] = 0;
    phase[c] = IDLE
}

inline on_reply(c, k, n, r, v) {
    t_d = NEXT_NONE;
    if
    :: k == ACQUIRE && r == round[c] && phase[c] == COUNTING && !(answered[c] & BIT(n)) -> count(c, n, v)
    :: k == EXTEND && r == round[c] && phase[c] == EXTENDING -> count_extend(c, v)
    :: else -> skip   /* an answer to a round or call already decided */
    fi;
    if
    :: t_d == NEXT_GRANT -> grant(c)
    :: else -> skip
    fi;
    if
    :: t_d == NEXT_LOSE -> lose_round(c)
    :: else -> skip
    fi;
    t_d = NEXT_NONE
}

proctype client(byte c) {
end:
    do
    :: atomic { phase[c] == IDLE && round[c] < rounds_of[c] -> begin_round(c) }
    :: atomic { phase[c] == HOLDING && ext_left[c] > 0 -> begin_extend(c) }
    :: atomic { phase[c] == HOLDING -> release_lease(c) }
    od
}
