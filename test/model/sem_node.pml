/* SPDX-License-Identifier: BSL-1.0 */
/* sem_node.pml: a Redis node running the semaphore's scripts, each in one atomic step, as Redis
 * runs a script. A permit whose score is reached is already gone (the clock drops it), as
 * every script treats it: semaphore_acquire.lua removes it (lines 51-55) before counting,
 * semaphore_extend.lua and semaphore_release.lua answer 0 for it. */

/* src/scripts/semaphore_acquire.lua. `live`, the script's `held` (lines 41-45): the live permits, the count member
 * aside. ARGV[4] (lines 56-59): a retry gives back its previous round's permit. Line 64: every
 * permit taken and none of them ours: refused. Line 68: ZADD of our token, ttl from now (a
 * retry's own permit, still here, is granted again). The negative control OFF_BY_ONE compares
 * with K + 1. */
inline sem_acquire(n, c, r, v) {
    live = 0;
    i = 0;
    do
    :: i < MAXC * MAXR ->
        if
        :: pexp[n * MAXC * MAXR + i] != 0 -> live++
        :: else -> skip
        fi;
        i++
    :: else -> break
    od;
    i = 0;
    if
    :: (retries[c] & BIT(r)) && pexp[P(n, c, r - 1)] != 0 -> pexp[P(n, c, r - 1)] = 0; live--
    :: else -> skip
    fi;
    if
    :: live >= LIMIT && pexp[P(n, c, r)] == 0 -> v = DENIED
    :: else -> pexp[P(n, c, r)] = EXPIRY_FROM_NOW; v = GRANTED
    fi;
    live = 0
}

/* src/scripts/semaphore_release.lua: removes our token (the last permit takes the key, and
 * "#permits", with it: the same for the count here). A lease's release and a lost round's
 * cleanup ("quiet") differ only in the message they publish. */
inline sem_release(n, c, r) {
    pexp[P(n, c, r)] = 0
}

/* src/scripts/semaphore_extend.lua: only a live permit of ours; ZADD XX GT, never shorter. */
inline sem_extend(n, c, r, v) {
    if
    :: pexp[P(n, c, r)] != 0 ->
        if
        :: EXPIRY_FROM_NOW > pexp[P(n, c, r)] -> pexp[P(n, c, r)] = EXPIRY_FROM_NOW
        :: else -> skip
        fi;
        v = GRANTED
    :: else -> v = DENIED
    fi
}

#define RAN       0   /* the request ran and its reply arrives */
#define NOT_RUN   1   /* lost on its way: it never runs */
#define NO_REPLY  2   /* it ran; its reply is lost */

/* A node runs one request in flight to it at a time, any client's, any round's that
 * sem_network.pml lets run now; the reply is counted in the same step (on_reply). */
proctype node(byte n) {
    byte c, r, k, v, fault, live;
    byte i, d, cnt;   /* sem_client.pml's inlines, which a reply runs here */
end:
    do
    :: atomic {
        if
        :: IN_FLIGHT(acq_m, true, n) -> k = ACQUIRE; TAKE(acq_m, true, n, c, r)
        :: IN_FLIGHT(rel_m, false, n) -> k = RELEASE; TAKE(rel_m, false, n, c, r)
        :: IN_FLIGHT(ext_m, false, n) -> k = EXTEND; TAKE(ext_m, false, n, c, r)
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
            :: k == ACQUIRE -> sem_acquire(n, c, r, v)
            :: k == RELEASE -> sem_release(n, c, r)
            :: k == EXTEND -> sem_extend(n, c, r, v)
            fi
        fi;
        if
        :: fault != RAN -> v = FAILED
        :: else -> skip
        fi;
        if
        :: k != RELEASE -> on_reply(c, k, n, r, v)
        :: else -> skip   /* nobody waits for a release's reply */
        fi;
        c = 0; r = 0; k = 0; v = 0; fault = 0
       }
    od
}
