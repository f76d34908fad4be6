/* SPDX-License-Identifier: BSL-1.0 */
/* fair_node.pml: a Redis node running src/scripts/fair.lua (all of it but the fenced lock,
 * lines 24, 48, 143-149, 225-229, 239-241, and the 'once' refusal, lines 253-258: every model
 * client waits), one call per atomic step as Redis runs a script. The line numbers below are
 * fair.lua's. What is abstracted:
 *  - tidy() and tidy_after_removals() (lines 65-88) as their effect: the queue's keys go with
 *    the last waiter, the counter with them (a call that leaves nobody queued zeroes it). Their
 *    PEXPIREAT at the latest deadline + 1 only drops places whose deadline passed, which the
 *    next call evicts anyway (lines 57-62), before it reads anything.
 *  - a place's token is the client's number; ZRANGE orders equal tickets by member, here by
 *    that number.
 *  - the wake messages (wake_head, hand_over's SPUBLISH of a release's payload) are not sent:
 *    the model's client may start its next round at any time anyway. "granted <round>" is. */

/* The lock's key set for `d` ticks from now: the node expires it DRIFT early (time.pml). A key
 * that would expire now is gone at once. */
inline set_lock(n, p, r, h, d) {
    if
    :: now + d - DRIFT > now ->
        lk_p[n] = p; lk_r[n] = r; lk_h[n] = h; lk_exp[n] = now + d - DRIFT
    :: else ->
        lk_p[n] = NOBODY; lk_r[n] = 0; lk_h[n] = false; lk_exp[n] = 0
    fi
}

inline del_lock(n) {
    lk_p[n] = NOBODY; lk_r[n] = 0; lk_h[n] = false; lk_exp[n] = 0
}

/* lines 90-96 leave_queue (and the ZREM/HDEL of lines 59-61, 135-137) */
inline drop_place(n, p) {
    q_t[NP(n, p)] = 0; q_dl[NP(n, p)] = 0; h_r[NP(n, p)] = 0; h_dl[NP(n, p)] = 0
}

/* lines 57-62: every call first evicts the places whose deadline passed */
inline evict(n) {
    e = 0;
    do
    :: e < CLIENTS ->
        if
        :: q_t[NP(n, e)] != 0 && q_dl[NP(n, e)] <= now -> drop_place(n, e)
        :: else -> skip
        fi;
        e++
    :: else -> break
    od;
    e = 0
}

/* lines 65-88, see above: the counter goes with the last waiter */
inline tidy(n) {
    if
    :: q_t[NP(n, 0)] == 0 && q_t[NP(n, 1)] == 0 && q_t[NP(n, 2)] == 0 -> ctr[n] = 0
    :: else -> skip
    fi
}

/* ZRANGE queue 0 0: the place with the lowest ticket, NOBODY if none */
inline find_head(n) {
    hd = NOBODY; e = 0;
    do
    :: e < CLIENTS ->
        if
        :: q_t[NP(n, e)] != 0 && (hd == NOBODY || q_t[NP(n, e)] < q_t[NP(n, hd)]) -> hd = e
        :: else -> skip
        fi;
        e++
    :: else -> break
    od;
    e = 0
}

/* lines 156-162 keep_place: the counter stays above every ticket queued; ZADD NX keeps an
 * existing place's ticket; the deadline is refreshed. */
inline keep_place(n, p, t) {
    if
    :: ctr[n] < t -> ctr[n] = t
    :: else -> skip
    fi;
    if
    :: q_t[NP(n, p)] == 0 -> q_t[NP(n, p)] = t
    :: else -> skip
    fi;
    q_dl[NP(n, p)] = now + QT
}

/* lines 112-141 hand_over: the lock is free (or was the caller's) and the head is not the
 * caller: the head's hand-off takes it, for min(ttl, its deadline - now), the round that
 * registered it hears "granted <round>"; px < 1: no hand-off (the head is woken, not modelled). */
inline hand_over(n, p) {
    find_head(n);
    if
    :: hd != NOBODY && hd != p && h_r[NP(n, hd)] != 0 && h_dl[NP(n, hd)] > now ->
        px = h_dl[NP(n, hd)] - now;
        if
        :: px > TTL -> px = TTL
        :: else -> skip
        fi;
        set_lock(n, hd, h_r[NP(n, hd)], true, px);
        hmsg[CN(hd, n)] = h_r[NP(n, hd)];
        drop_place(n, hd);
        handed_now = true
    :: else -> skip
    fi;
    hd = NOBODY; px = 0
}

/* lines 167-193: our_round(holder) is lk_r when the lock holds a value of place p, written or
 * handed over to p (a hand-off "<head>:<head>.<n>" names its head twice); `ours` is the
 * caller's own value ('release': any value of its place); `earlier` a value of an earlier
 * round of this acquisition. same_place_takes (the negative control): any hand-off to the place
 * is `earlier` too, whichever round asks. */
#define HOLDER_ROUND(n, p)   (lk_p[n] == (p) -> lk_r[n] : 0)
#define HOLDS_VALUE(n, p, r) (lk_p[n] == (p) && !lk_h[n] && lk_r[n] == (r))

/* lines 220-280: 'acquire' by round r of place p with ticket `t` (ARGV[5]; 0: 'local' on a
 * single node, 'none' on several, fair.cpp acquire). The answer: v, and the ticket tk. */
inline fair_acquire(n, p, r, t, v, tk) {
    evict(n);
    ours = HOLDS_VALUE(n, p, r);
    earlier = HOLDER_ROUND(n, p) != 0 && (HOLDER_ROUND(n, p) < r || (same_place_takes && lk_h[n]));
    find_head(n);
    if
    :: ours || earlier || (lk_p[n] == NOBODY && (hd == NOBODY || hd == p)) ->
        /* lines 221-243: granted; out of the queue; a 'none' caller hears the counter */
        set_lock(n, p, r, false, TTL);
        drop_place(n, p);
        tidy(n);
        if
        :: t == 0 && NODES > 1 -> tk = ctr[n]
        :: else -> tk = 0
        fi;
        v = GRANTED
    :: else ->
        v = DENIED;
        if
        :: t == 0 && NODES > 1 ->
            /* lines 260-268: 'none': a number from this node's counter, not queued */
            ctr[n]++; tk = ctr[n]; tidy(n)
        :: else ->
            /* lines 269-279: 'local' (this node's number, kept if queued already), or the
             * acquisition's ticket; the place kept, the hand-off registered by this round */
            if
            :: t == 0 && q_t[NP(n, p)] != 0 -> tk = q_t[NP(n, p)]
            :: t == 0 && q_t[NP(n, p)] == 0 -> ctr[n]++; tk = ctr[n]
            :: else -> tk = t
            fi;
            keep_place(n, p, tk);
            h_r[NP(n, p)] = r; h_dl[NP(n, p)] = now + QT;
            tidy(n)
        fi
    fi;
    hd = NOBODY; ours = false; earlier = false
}

/* lines 195-218: 'withdraw', 'requeue' (round r's cleanup, its value "<p>.<r>"), 'release'
 * (its value any of place p's: `ours` takes any), 'dequeue'. */
inline fair_other(n, k, p, r) {
    evict(n);
    if
    :: k == RELEASE -> ours = HOLDER_ROUND(n, p) != 0
    :: else -> ours = HOLDS_VALUE(n, p, r)
    fi;
    if
    :: k == REQUEUE -> keep_place(n, p, ticket[p])
    :: else -> drop_place(n, p)
    fi;
    handed_now = false;
    if
    :: k != DEQUEUE && (ours || lk_p[n] == NOBODY) -> hand_over(n, p)
    :: else -> skip
    fi;
    if
    :: ours && k != DEQUEUE && !handed_now -> del_lock(n)
    :: else -> skip
    fi;
    tidy(n);
    ours = false; handed_now = false
}

#define RAN       0   /* the request ran and its reply arrives */
#define NOT_RUN   1   /* lost on its way: it never runs */
#define NO_REPLY  2   /* it ran; its reply is lost */

/* A node runs one request in flight to it at a time, each in one atomic step: any kind, any
 * client, any round that fair_net.pml lets run now. A bounded number (`losses`) are lost. */
proctype node(byte n) {
    byte c, r, t, v, tk, fault, e, hd, px;
    mtype:call k;
    bool ours, earlier, handed_now;
    byte i, d;   /* the loops and the decision of fair_client.pml's inlines, which a reply runs here */
end:
    do
    :: atomic {
        if   /* executable only while some request to n is ready to run */
        :: IN_FLIGHT(acq_m, true, n) -> k = ACQUIRE; TAKE(acq_m, true, n, c, r);
            /* ARGV[5] as it was sent: the acquisition's ticket, or none yet */
            if
            :: acq_tk[CN(c, n)] & BIT(r) -> t = ticket[c]; acq_tk[CN(c, n)] = acq_tk[CN(c, n)] & ~BIT(r)
            :: else -> t = 0
            fi
        :: IN_FLIGHT(cln_m, false, n) -> TAKE(cln_m, false, n, c, r);
            if
            :: cln_rq[CN(c, n)] & BIT(r) -> k = REQUEUE; cln_rq[CN(c, n)] = cln_rq[CN(c, n)] & ~BIT(r)
            :: else -> k = WITHDRAW
            fi
        :: IN_FLIGHT(rel_m, false, n) -> k = RELEASE; TAKE(rel_m, false, n, c, r)
        :: IN_FLIGHT(deq_m, false, n) -> k = DEQUEUE; TAKE(deq_m, false, n, c, r)
        fi;
        if
        :: fault = RAN
        :: losses > 0 -> losses--; fault = NOT_RUN
        :: losses > 0 -> losses--; fault = NO_REPLY
        fi;
        /* the script and its reply: deterministic, one transition */
        d_step {
            if
            :: fault == NOT_RUN -> skip
            :: else ->
                if
                :: k == ACQUIRE -> fair_acquire(n, c, r, t, v, tk)
                :: else -> fair_other(n, k, c, r)
                fi
            fi;
            if
            :: fault != RAN -> v = FAILED; tk = 0
            :: else -> skip
            fi;
            /* a trail's story (pan -r prints it; a search does not). call: spin numbers the
             * mtypes backwards: 5 acquire, 4 withdraw, 3 requeue, 2 release, 1 dequeue; lock
             * <place>.<round>, place 255: none */
            printf("t=%d node %d: client %d round %d call %d: fault %d, answer %d ticket %d; lock %d.%d handed %d exp %d\n",
                   now, n, c, r, k, fault, v, tk, lk_p[n], lk_r[n], lk_h[n], lk_exp[n]);
            if
            :: k == ACQUIRE -> on_acquire_reply(c, n, r, v, tk)
            :: k == WITHDRAW || k == REQUEUE -> on_cleanup_reply(c, n, r)
            :: else -> skip   /* nobody waits for a release's or a dequeue's reply */
            fi;
            c = 0; r = 0; t = 0; v = 0; tk = 0; fault = 0; k = ACQUIRE
        }
       }
    od
}
