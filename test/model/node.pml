/* SPDX-License-Identifier: BSL-1.0 */
/* node.pml: a Redis node running the lock's scripts, each command atomic as a script is.
 * The token of a round is (client, round); one_token (negative control) gives every round of a
 * client the same token, as acquires did before 2026-11-24 (docs/safety.md "A token per
 * attempt"): a script then cannot tell the rounds apart, while the ghost key_r still can. */

#define HOLDS(n, c, r)           (key_c[n] == (c) && (one_token || key_r[n] == (r)))
/* acquire_round::previous_token: a key still holding the acquisition's previous round */
#define HOLDS_PREVIOUS(n, c, r)  (!one_token && key_c[n] == (c) && key_r[n] + 1 == (r) && \
                                  !((c) == 0 && key_r[n] == handed_round))
/* (client 0's rounds after a hand-over are another acquisition's: the written-out round is not
 * their previous one) */

/* The scripts below set the answer (v, and the counter's value fv for an acquire; for an
 * extend fv is the ttl it asked for, so that its reply reaches only the extend that sent it); the node
 * sends it once, in one place (proctype node): every reply reaches client.pml's on_reply
 * through the same code, whichever script ran. */

/* src/scripts/acquire_fenced.lua (fenced) and the plain kind's SET NX PX GET followed by
 * takeover.lua (src/lock/kinds/plain.cpp), folded into one step: the takeover is a
 * compare-and-set, so nothing can slip between them that it would not refuse. */
inline node_acquire(n, c, r, v, fv) {
    if
    :: key_c[n] == NOBODY ->
        key_c[n] = c; key_r[n] = r; key_exp[n] = EXPIRY_FROM_NOW;
        if
        :: fenced -> counter[n]++
        :: else -> skip
        fi;
        v = GRANTED; fv = counter[n]
    :: key_c[n] != NOBODY && (HOLDS(n, c, r) || HOLDS_PREVIOUS(n, c, r)) ->
        key_r[n] = r; key_exp[n] = EXPIRY_FROM_NOW;
        v = GRANTED; fv = counter[n]
    :: else -> v = DENIED
    fi
}

/* src/scripts/release.lua: deletes only its own token. Property 3 (the per-round token rule):
 * what it deletes is the grant of the round that sent it, never another round's. */
inline node_release(n, c, r) {
    if
    :: key_c[n] != NOBODY && HOLDS(n, c, r) ->
        PROPERTY(own_round_release, key_c[n] == c && key_r[n] == r);
        key_c[n] = NOBODY; key_r[n] = 0; key_exp[n] = 0
    :: else -> skip
    fi
}

/* src/scripts/extend.lua: a new ttl from now, only for its own token; never recreates a key,
 * never shortens it (PEXPIRE ... GT); no_gt (negative control): PEXPIRE without GT. */
inline node_extend(n, c, r, ttl, v) {
    if
    :: key_c[n] != NOBODY && HOLDS(n, c, r) ->
        if
        :: no_gt || EXPIRY_AFTER(ttl) > key_exp[n] -> key_exp[n] = EXPIRY_AFTER(ttl)
        :: else -> skip
        fi;
        v = GRANTED
    :: else -> v = DENIED
    fi
}

/* src/scripts/fence_writeback.lua: raise the counter to the settled fence, only while the
 * round's token still holds the lock here. */
inline node_writeback(n, c, r, f, v) {
    if
    :: key_c[n] != NOBODY && HOLDS(n, c, r) ->
        if
        :: counter[n] < f -> counter[n] = f
        :: else -> skip
        fi;
        v = GRANTED
    :: else -> v = DENIED
    fi
}

/* src/scripts/handover.lua, shape 'string': where the written-out token (client 0's
 * handed_round) holds, the adopter's own token (c, r) takes its place, the expiry never
 * shortened; adopt_keeps_token (negative control): the token stays, as adoptions did before. */
inline node_adopt(n, c, r, v) {
    if
    :: key_c[n] != NOBODY && HOLDS(n, 0, handed_round) ->
        if
        :: !adopt_keeps_token -> key_c[n] = c; key_r[n] = r
        :: else -> skip
        fi;
        if
        :: EXPIRY_FROM_NOW > key_exp[n] -> key_exp[n] = EXPIRY_FROM_NOW
        :: else -> skip
        fi;
        v = GRANTED
    :: else -> v = DENIED
    fi
}

#define RAN       0   /* the request ran and its reply arrives */
#define NOT_RUN   1   /* lost on its way: it never runs */
#define NO_REPLY  2   /* it ran; its reply is lost */

/* A node runs one request in flight to it at a time, each in one atomic step, as Redis runs a
 * script: any kind, any client, any round that network.pml lets run now. A bounded number of
 * them (`losses`) are lost: the request, or its reply; the caller's node timeout then answers
 * `failed`. Nobody waits for a release's reply. */
proctype node(byte n) {
    byte c, r, f, k, v, fv, fault;
    byte i, d;   /* the loops and the decision of client.pml's inlines, which a reply runs here */
end:
    do
    :: atomic {
        if   /* executable only while some request to n is ready to run */
        :: IN_FLIGHT(acq_m, true, n) -> k = ACQUIRE; TAKE(acq_m, true, n, c, r)
        :: IN_FLIGHT(adopt_m, true, n) -> k = ADOPT; TAKE(adopt_m, true, n, c, r)
        :: IN_FLIGHT(rel_m, false, n) -> k = RELEASE; TAKE(rel_m, false, n, c, r)
        :: IN_FLIGHT(ext_m, false, n) -> k = EXTEND; TAKE(ext_m, false, n, c, r); f = TTL
        :: IN_FLIGHT(ext_short_m, false, n) -> k = EXTEND; TAKE(ext_short_m, false, n, c, r); f = TTL_SHORT
        :: IN_FLIGHT(wb_m, false, n) -> k = WRITEBACK; TAKE(wb_m, false, n, c, r); f = wb_f[CN(c, n)]
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
            :: k == ACQUIRE -> node_acquire(n, c, r, v, fv)
            :: k == RELEASE -> node_release(n, c, r)
            :: k == EXTEND -> node_extend(n, c, r, f, v); fv = f
            :: k == WRITEBACK -> node_writeback(n, c, r, f, v)
            :: k == ADOPT -> node_adopt(n, c, r, v)
            fi
        fi;
        if
        :: fault != RAN -> v = FAILED; fv = (k == EXTEND -> f : 0)
        :: else -> skip
        fi;
        if
        :: k != RELEASE -> reply(c, k, n, r, v, fv)
        :: else -> skip
        fi;
        c = 0; r = 0; f = 0; k = 0; v = 0; fv = 0; fault = 0
       }
    od
}
