/* SPDX-License-Identifier: BSL-1.0 */
/* time.pml: one discrete clock for everyone. Clock *rates* differ by at most DRIFT ticks over a
 * ttl: a node expires a key up to DRIFT ticks before the client's clock says the ttl is over.
 * The model takes the worst case always (key_exp = set + TTL - DRIFT): for exclusion an early
 * expiry is the only harmful one. Clock jumps are outside the assumptions (docs/safety.md,
 * assumption 1) and outside the model. */

byte now;

/* The time a key set or extended now expires at on its node. */
#define EXPIRY_FROM_NOW  (now + TTL - DRIFT)
#define EXPIRY_AFTER(ttl)  (now + (ttl) - DRIFT)

/* VALIDITY_LEFT, VALIDITY_LEFT_OF and BELIEVES: common.pml. */

/* Redis expires keys lazily or actively; either way an expired key is gone for every command.
 * Dropping it on the tick keeps one representation per state. */
inline expire_keys() {
    byte e = 0;
    do
    :: e < N ->
        if
        :: key_c[e] != NOBODY && key_exp[e] <= now -> key_c[e] = NOBODY; key_r[e] = 0; key_exp[e] = 0
        :: else -> skip
        fi;
        e++
    :: else -> break
    od;
    e = 0;
    if   /* the replica's copy (failover.pml) expires as the master's key does */
    :: rep_c != NOBODY && rep_exp <= now -> rep_c = NOBODY; rep_r = 0; rep_exp = 0
    :: else -> skip
    fi
}

/* A round in flight: counting votes or writing its fence back. */
#define ROUND_IN_FLIGHT(c)  (phase[c] == COUNTING || phase[c] == WRITING)

/* With `sync` (the liveness runs) no tick falls inside a round: every round ends with validity
 * left, which liveness needs (a system whose rounds always take longer than the ttl grants
 * nothing). The safety runs let the clock tick anywhere. */
proctype clock() {
end:
    do
    :: atomic { now < MAXT && (!sync || (!ROUND_IN_FLIGHT(0) && !ROUND_IN_FLIGHT(1))) -> now++; expire_keys() }
    od
}
