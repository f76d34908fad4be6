/* SPDX-License-Identifier: BSL-1.0 */
/* multi_node.pml: a node of multi.pml: the scripts, and the node that runs one request per
 * atomic step. */

/* --- the scripts ---------------------------------------------------------------------------- */
/* The key holds the token (c, r), or ARGV[4], the previous round's (acquire_round::previous_token) */
#define OURS(n, x, c, r)  (key_c[KI(n, x)] == (c) && (key_r[KI(n, x)] == (r) || key_r[KI(n, x)] + 1 == (r)))

/* multi_acquire.lua. PARTIAL (control): one loop that writes each key it may and skips a taken
 * one, answering refused if it skipped any: a node holds part of an acquisition. */
inline node_acquire(n, c, r, v) {
    v = GRANTED;
    t_x = 0;
    do   /* lines 21-27: every key first */
    :: t_x < RES ->
        if
        :: (set_of[c] & BIT(t_x)) && key_c[KI(n, t_x)] != NOBODY && !OURS(n, t_x, c, r) -> v = DENIED
        :: else -> skip
        fi;
        t_x++
    :: else -> break
    od;
    t_x = 0;
    do   /* lines 28-38: then SET token PX ttl on every key */
    :: t_x < RES ->
        if
        :: (set_of[c] & BIT(t_x)) &&
           (v == GRANTED || (partial && (key_c[KI(n, t_x)] == NOBODY || OURS(n, t_x, c, r)))) ->
            key_c[KI(n, t_x)] = c; key_r[KI(n, t_x)] = r; key_exp[KI(n, t_x)] = EXPIRY_FROM_NOW
        :: else -> skip
        fi;
        t_x++
    :: else -> break
    od;
    t_x = 0
}

/* multi_release.lua lines 13-22: every key that holds the token is deleted. */
inline node_release(n, c, r) {
    t_x = 0;
    do
    :: t_x < RES ->
        if
        :: (set_of[c] & BIT(t_x)) && key_c[KI(n, t_x)] == c && key_r[KI(n, t_x)] == r ->
            key_c[KI(n, t_x)] = NOBODY; key_r[KI(n, t_x)] = 0; key_exp[KI(n, t_x)] = 0
        :: else -> skip
        fi;
        t_x++
    :: else -> break
    od;
    t_x = 0
}

/* multi_extend.lua: lines 11-15 every key holds the token, or 0 and nothing extended; lines
 * 16-18 PEXPIRE GT on each (never shortens). */
inline node_extend(n, c, r, v) {
    v = GRANTED;
    t_x = 0;
    do
    :: t_x < RES ->
        if
        :: (set_of[c] & BIT(t_x)) && !(key_c[KI(n, t_x)] == c && key_r[KI(n, t_x)] == r) -> v = DENIED
        :: else -> skip
        fi;
        t_x++
    :: else -> break
    od;
    t_x = 0;
    do
    :: t_x < RES ->
        if
        :: v == GRANTED && (set_of[c] & BIT(t_x)) && key_exp[KI(n, t_x)] < EXPIRY_FROM_NOW ->
            key_exp[KI(n, t_x)] = EXPIRY_FROM_NOW
        :: else -> skip
        fi;
        t_x++
    :: else -> break
    od;
    t_x = 0
}

/* --- a node: one request per atomic step (node.pml's rules) --------------------------------- */
#define RAN       0
#define NOT_RUN   1
#define NO_REPLY  2

proctype node(byte n) {
    byte c, r, k, v, fault;
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
            :: k == ACQUIRE -> node_acquire(n, c, r, v)
            :: k == RELEASE -> node_release(n, c, r)
            :: k == EXTEND -> node_extend(n, c, r, v)
            fi
        fi;
        printf("MSC: t=%d node %d runs ", now, n); printm(k); printf(" of client %d round %d: fault %d, answer %d; keys A=(%d,%d) B=(%d,%d)\n",
               c, r, fault, v, key_c[KI(n, 0)], key_r[KI(n, 0)], key_c[KI(n, 1)], key_r[KI(n, 1)]);
        check_node(n);
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
