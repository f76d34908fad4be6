/* restart.pml: node 0 crashes and restarts without persistence (the nodes are symmetric: one
 * node stands for any). Its keys are gone, its run_id is new, its uptime starts again. Its
 * connections close: every request in flight to it fails at its client. The fence counter
 * survives (AOF for the counters, as docs/safety.md asks of fenced locks) unless
 * COUNTER_LOST: the negative control for fence monotonicity. */

byte restarts = RESTARTS;

inline fail_in_flight(c) {
    if
    :: acq_m[CN(c, 0)] & BIT(round[c]) -> reply(c, ACQUIRE, 0, round[c], FAILED, 0)
    :: else -> skip
    fi;
    if
    :: ext_m[CN(c, 0)] & BIT(round[c]) -> reply(c, EXTEND, 0, round[c], FAILED, 0)
    :: else -> skip
    fi;
    if
    :: wb_m[CN(c, 0)] & BIT(round[c]) -> reply(c, WRITEBACK, 0, round[c], FAILED, 0)
    :: else -> skip
    fi;
    acq_m[CN(c, 0)] = 0; rel_m[CN(c, 0)] = 0; ext_m[CN(c, 0)] = 0; wb_m[CN(c, 0)] = 0; wb_f[CN(c, 0)] = 0
}

proctype restart() {
    byte i;
end:
    atomic {
        restarts > 0 ->
        restarts--;
        key_c[0] = NOBODY; key_r[0] = 0; key_exp[0] = 0;
#ifdef COUNTER_LOST
        counter[0] = 0;
#endif
        run_id[0]++;
        started[0] = now;
        fail_in_flight(0);
        fail_in_flight(1)
    }
}
