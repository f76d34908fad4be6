/* SPDX-License-Identifier: BSL-1.0 */
/* rw_node.pml: a Redis node running the read-write lock's scripts, each in one atomic step, as
 * Redis runs a script. A hold or a mark whose score is reached is already gone (the clock drops
 * it), as every script treats it. */

/* src/scripts/rw_acquire.lua, for the token (c, r) in its client's mode and owner. */
inline rw_acquire(n, c, r, v) {
    /* lines 41-45: ARGV[7], the previous round's token: its hold and its mark go */
    if
    :: retries[c] & BIT(r) -> hexp[P(n, c, r - 1)] = 0; mexp[P(n, c, r - 1)] = 0
    :: else -> skip
    fi;
    if
    :: hexp[P(n, c, r)] != 0 ->
        /* lines 55-58: our own hold (a retry of a round that a node ran twice): again, ttl from now */
        hexp[P(n, c, r)] = EXPIRY_FROM_NOW; v = GRANTED
    :: else ->
        /* lines 60-78: our owner's holds, and whether another's is in our way */
        mine_read = false; mine_write = false; in_way = false;
        i = 0;
        do
        :: i < MAXC * MAXR ->
            oc = i / MAXR;
            if
            :: hexp[n * MAXC * MAXR + i] == 0 -> skip
            :: else ->
                if
                :: owner[c] != NO_OWNER && owner[oc] == owner[c] ->
                    if
                    :: mode[oc] == WRITE -> mine_write = true
                    :: else -> mine_read = true
                    fi
                :: else ->
                    if
                    :: mode[c] == WRITE || (mode[oc] != READ && !reader_skips_writer) -> in_way = true
                    :: else -> skip
                    fi
                fi
            fi;
            i++
        :: else -> break
        od;
        i = 0; oc = 0;
        if
        :: mode[c] == WRITE ->
            if
            :: mine_read && !mine_write -> v = REFUSED                 /* lines 81-83 */
            :: !(mine_read && !mine_write) && !in_way ->                /* lines 84-92 */
                mexp[P(n, c, r)] = 0;
                hexp[P(n, c, r)] = EXPIRY_FROM_NOW; v = GRANTED
            :: !(mine_read && !mine_write) && in_way ->                 /* lines 93-97 */
                if
                :: waits -> mexp[P(n, c, r)] = now + QT
                :: else -> skip
                fi;
                v = DENIED
            fi
        :: else ->
            /* lines 100-110: a reader of an owner that holds nothing here is refused by a
             * writer's hold in its way, or else by any waiting writer's mark */
            if
            :: !(mine_read || mine_write) && !in_way ->
                i = 0;
                do
                :: i < MAXC * MAXR ->
                    if
                    :: mexp[n * MAXC * MAXR + i] != 0 -> in_way = true
                    :: else -> skip
                    fi;
                    i++
                :: else -> break
                od;
                i = 0
            :: else -> skip
            fi;
            if
            :: !(mine_read || mine_write) && in_way -> v = DENIED
            :: else -> hexp[P(n, c, r)] = EXPIRY_FROM_NOW; v = GRANTED  /* lines 111-112 */
            fi
        fi;
        mine_read = false; mine_write = false; in_way = false
    fi
}

/* src/scripts/rw_release.lua: "unmark" (lines 16-19) the mark only; "quiet" the hold only;
 * "leave" and a lease's release (no ARGV[2]) the mark (line 21) and the hold (lines 32-39).
 * What it publishes and answers does not change the state. */
inline rw_release(n, c, r, k) {
    if
    :: k != QUIET -> mexp[P(n, c, r)] = 0
    :: else -> skip
    fi;
    if
    :: k != UNMARK -> hexp[P(n, c, r)] = 0
    :: else -> skip
    fi
}

/* src/scripts/rw_extend.lua: only a live hold of ours; ZADD XX GT, never shorter. */
inline rw_extend(n, c, r, v) {
    if
    :: hexp[P(n, c, r)] != 0 ->
        if
        :: EXPIRY_FROM_NOW > hexp[P(n, c, r)] -> hexp[P(n, c, r)] = EXPIRY_FROM_NOW
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
 * rw_network.pml lets run now; the reply is counted in the same step (on_reply). */
proctype node(byte n) {
    byte c, r, k, v, fault, oc;
    bool mine_read, mine_write, in_way;
    byte i, d;   /* rw_client.pml's inlines, which a reply runs here */
    bool bad;
end:
    do
    :: atomic {
        if
        :: IN_FLIGHT(acq_m, true, n) -> k = ACQUIRE; TAKE(acq_m, true, n, c, r)
        :: IN_FLIGHT(quiet_m, false, n) -> k = QUIET; TAKE(quiet_m, false, n, c, r)
        :: IN_FLIGHT(rel_m, false, n) -> k = RELEASE; TAKE(rel_m, false, n, c, r)
        :: IN_FLIGHT(ext_m, false, n) -> k = EXTEND; TAKE(ext_m, false, n, c, r)
        :: IN_FLIGHT(unm_m, false, n) -> k = UNMARK; TAKE(unm_m, false, n, c, r)
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
            :: k == ACQUIRE -> rw_acquire(n, c, r, v)
            :: k == EXTEND -> rw_extend(n, c, r, v)
            :: else -> rw_release(n, c, r, k)
            fi
        fi;
        if
        :: fault != RAN -> v = FAILED
        :: else -> skip
        fi;
        if
        :: k == ACQUIRE || k == EXTEND -> on_reply(c, k, n, r, v)
        :: else -> skip   /* nobody waits for a release's reply */
        fi;
        c = 0; r = 0; k = 0; v = 0; fault = 0
       }
    od
}
