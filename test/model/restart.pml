/* SPDX-License-Identifier: BSL-1.0 */
/* restart.pml: node 0 crashes and restarts without persistence (the nodes are symmetric: one
 * node stands for any). Its keys are gone, its run_id is new, its uptime starts again. Its
 * connections close: every request in flight to it fails at its client. The fence counter
 * survives (AOF for the counters, as docs/safety.md asks of fenced locks) unless
 * counter_lost: the negative control for fence monotonicity. */


/* The requests in flight to node 0 are gone with its connections: each caller of the current
 * round is told `failed` (one reply path: a loop over the clients and the kinds). */
inline fail_in_flight() {
    cc = 0;
    do
    :: cc < CLIENTS ->
        r = round[cc];
        gone = (((acq_m[CN(cc, 0)] | adopt_m[CN(cc, 0)]) & BIT(r)) != 0) |
               ((((ext_m[CN(cc, 0)] | ext_short_m[CN(cc, 0)]) & BIT(r)) != 0) << 1) |
               (((wb_m[CN(cc, 0)] & BIT(r)) != 0) << 2);
        acq_m[CN(cc, 0)] = 0; adopt_m[CN(cc, 0)] = 0; rel_m[CN(cc, 0)] = 0; ext_m[CN(cc, 0)] = 0; ext_short_m[CN(cc, 0)] = 0; wb_m[CN(cc, 0)] = 0;
        wb_f[CN(cc, 0)] = 0;
        kk = 0;
        do
        :: kk < 3 ->
            if
            :: gone & BIT(kk) ->
                et = (kk == 1 -> ext_ttl[cc] : 0);   /* an extend's reply names its ttl (node.pml) */
                reply(cc, (kk == 0 -> ACQUIRE : (kk == 1 -> EXTEND : WRITEBACK)), 0, r, FAILED, et)
            :: else -> skip
            fi;
            kk++
        :: else -> break
        od;
        cc++
    :: else -> break
    od;
    cc = 0; kk = 0; r = 0; gone = 0; et = 0
}

proctype restart() {
    byte i, d, cc, kk, r, gone, et;   /* i, d: the loops and the decision of client.pml's inlines, which a reply runs here */
end:
    atomic {
        restarts > 0 ->
        restarts--;
        key_c[0] = NOBODY; key_r[0] = 0; key_exp[0] = 0;
        if
        :: counter_lost -> counter[0] = 0
        :: else -> skip
        fi;
        run_id[0]++;
        started[0] = now;
        fail_in_flight()
    }
}
