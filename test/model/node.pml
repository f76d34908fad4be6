/* node.pml: a Redis node running the lock's scripts, each command atomic as a script is.
 * The token of a round is (client, round); ONE_TOKEN (negative control) gives every round of a
 * client the same token, as acquires did before 2026-11-24 (docs/safety.md "A token per
 * attempt"): a script then cannot tell the rounds apart, while the ghost key_r still can. */

#ifdef ONE_TOKEN
#define HOLDS(n, c, r)           (key_c[n] == (c))
#define HOLDS_PREVIOUS(n, c, r)  false
#else
#define HOLDS(n, c, r)           (key_c[n] == (c) && key_r[n] == (r))
/* acquire_round::previous_token: a key still holding the acquisition's previous round */
#define HOLDS_PREVIOUS(n, c, r)  (key_c[n] == (c) && key_r[n] + 1 == (r))
#endif

bool reply_lost;   /* set while a node serves a request whose reply the network loses */

inline answer(c, k, n, r, v, f) {
    if
    :: reply_lost -> reply(c, k, n, r, FAILED, 0)
    :: else -> reply(c, k, n, r, v, f)
    fi
}

/* src/scripts/acquire_fenced.lua (fenced) and the plain kind's SET NX PX GET followed by
 * takeover.lua (src/lock/kinds/plain.cpp), folded into one step: the takeover is a
 * compare-and-set, so nothing can slip between them that it would not refuse. */
inline node_acquire(n, c, r) {
    if
    :: key_c[n] == NOBODY ->
        key_c[n] = c; key_r[n] = r; key_exp[n] = EXPIRY_FROM_NOW;
#ifdef FENCED
        counter[n]++;
#endif
        answer(c, ACQUIRE, n, r, GRANTED, counter[n])
    :: key_c[n] != NOBODY && (HOLDS(n, c, r) || HOLDS_PREVIOUS(n, c, r)) ->
        key_r[n] = r; key_exp[n] = EXPIRY_FROM_NOW;
        answer(c, ACQUIRE, n, r, GRANTED, counter[n])
    :: else -> answer(c, ACQUIRE, n, r, DENIED, 0)
    fi
}

/* src/scripts/release.lua: deletes only its own token. Property 3 (the per-round token rule):
 * what it deletes is the grant of the round that sent it, never another round's. */
inline node_release(n, c, r) {
    if
    :: key_c[n] != NOBODY && HOLDS(n, c, r) ->
        assert(key_c[n] == c && key_r[n] == r);
        key_c[n] = NOBODY; key_r[n] = 0; key_exp[n] = 0
    :: else -> skip
    fi
}

/* src/scripts/extend.lua: a new ttl from now, only for its own token; never recreates a key. */
inline node_extend(n, c, r) {
    if
    :: key_c[n] != NOBODY && HOLDS(n, c, r) ->
        key_exp[n] = EXPIRY_FROM_NOW;
        answer(c, EXTEND, n, r, GRANTED, 0)
    :: else -> answer(c, EXTEND, n, r, DENIED, 0)
    fi
}

/* src/scripts/fence_writeback.lua: raise the counter to the settled fence, only while the
 * round's token still holds the lock here. */
inline node_writeback(n, c, r, f) {
    if
    :: key_c[n] != NOBODY && HOLDS(n, c, r) ->
        if
        :: counter[n] < f -> counter[n] = f
        :: else -> skip
        fi;
        answer(c, WRITEBACK, n, r, GRANTED, 0)
    :: else -> answer(c, WRITEBACK, n, r, DENIED, 0)
    fi
}

/* One request of kind `m` to node n runs now (`run`), or is lost (`lose`). */
#define RUN_ONE(m, first, kind, script)                                                            \
    :: atomic {                                                                             \
        IN_FLIGHT(m, first, n) != 0 -> TAKE(m, first, n, c, r); f = wb_f[CN(c, n)]; script;               \
        c = 0; r = 0; f = 0                                                                 \
       }                                                                                    \
    :: atomic {                                                                             \
        losses > 0 && IN_FLIGHT(m, first, n) != 0 -> losses--; TAKE(m, first, n, c, r); f = wb_f[CN(c, n)]; \
        if                                                                                  \
        :: reply_lost = true; script; reply_lost = false                                    \
        :: kind != RELEASE -> reply(c, kind, n, r, FAILED, 0)                               \
        :: kind == RELEASE -> skip                                                          \
        fi;                                                                                 \
        c = 0; r = 0; f = 0                                                                 \
       }

proctype node(byte n) {
    byte c, r, f, i;   /* i: the loops of client.pml's inlines, which a reply runs here */
end:
    do
    RUN_ONE(acq_m, true, ACQUIRE, node_acquire(n, c, r))
    RUN_ONE(rel_m, false, RELEASE, node_release(n, c, r))
    RUN_ONE(ext_m, false, EXTEND, node_extend(n, c, r))
    RUN_ONE(wb_m, false, WRITEBACK, node_writeback(n, c, r, f))
    od
}
