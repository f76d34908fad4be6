/* SPDX-License-Identifier: BSL-1.0 */
/* fair.pml: a model of the fair lock kind (src/scripts/fair.lua, src/lock/kinds/fair.cpp),
 * checked by check_model with the runs of fair.runs. One node or three (NODES), three clients
 * of one acquisition each (its place: the client's number), a bounded clock, late and lost
 * requests. The queue by ticket, the places' deadlines and evictions, 'none'/'local' tickets
 * and the largest of a quorum, the hand-off registered by a refused round and handed over by a
 * release, withdraw or requeue ("<place>:<place>.<n>"), the per-round values "<place>.<n>" and
 * which call takes or frees which (fair.lua lines 164-193).
 * Property: 1. mutual exclusion, fair_client.pml check_exclusion.
 * Negative control: SAME_PLACE_TAKES (fair_node.pml fair_acquire), the old hand-off rule. */

#include "fair_params.pml"
#include "fair_net.pml"
#include "fair_client.pml"
#include "fair_node.pml"

init {
    byte n;
    atomic {
        init_knobs();
        n = 0;
        do
        :: n < NMAX -> lk_p[n] = NOBODY; n++
        :: else -> break
        od;
        n = 0;
        run clock();
        do
        :: n < NODES -> run node(n); n++
        :: else -> break
        od;
        n = 0;
        run client(0); run client(1); run client(2)
    }
}
