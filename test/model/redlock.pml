/* SPDX-License-Identifier: BSL-1.0 */
/* redlock.pml: a model of redlock-asio's plain and fenced lock, checked by check_model.
 * N = 3 nodes (5 in redlock_n5.pml), 2 clients, a network that loses and reorders, one node
 * restart or one failover to an asynchronous replica, a paused holder, bounded drift, fences
 * and their write-back, the restart and failover quarantines, extends with two ttls, a
 * hand-over.
 * Properties (PROPERTY assertions, named; except the last):
 *   mutual_exclusion         client.pml check_exclusion
 *   fences_increase          client.pml grant
 *   resource_fence_order     client.pml fenced_set (the resource)
 *   own_round_release        node.pml node_release (the per-round token rule)
 *   eventually_granted       live.pml (the liveness runs: pan -a -f)
 * The knobs that select a run: params.pml; the runs and negative controls: redlock.runs. */

#include "params.pml"
#include "state.pml"
#include "time.pml"
#include "network.pml"
#include "client.pml"
#include "node.pml"
#include "restart.pml"
#include "failover.pml"
#include "live.pml"   /* ignored by the safety runs: their pan is compiled with -DNOCLAIM */

init {
    byte n;
    atomic {
        init_knobs();
        n = 0;
        do
        :: n < N ->
            key_c[n] = NOBODY;
            run_id[n] = 1;
            started[n] = -20;   /* up long before the run: no uptime quarantine */
            /* client 0 connected before the run; client 1 connects at its first request */
            conn_run[CN(0, n)] = 1; seen_run[CN(0, n)] = 1; known[CN(0, n)] = true;
            n++
        :: else -> break
        od;
        n = 0;
        run clock();
        run node(0); run node(1); run node(2);
#if N == 5
        run node(3); run node(4);
#endif
        run client(0, ROUNDS); run client(1, ROUNDS_1);
        run restart();
        run fail_over()
    }
}
