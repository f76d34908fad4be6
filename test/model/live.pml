/* live.pml: property 4, under weak fairness (pan -a -f): a free lock with a quorum of nodes up is
 * eventually granted. Client 1 contends once (ROUNDS_1); client 0 retries. The fault budgets
 * are finite, so every fault ends; the clock stops at MAXT, after which a round's validity
 * cannot run out while it counts. */
ltl eventually_granted { <> (held[0] || held[1]) }
