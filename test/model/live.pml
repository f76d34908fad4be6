/* SPDX-License-Identifier: BSL-1.0 */
/* live.pml: property 4, under weak fairness (pan -a -f): a free lock with a quorum of nodes up is
 * eventually granted. The liveness runs (check_model) take one client (the lock is free but for
 * it), a fault (a lost request or reply; a restart of node 0 and its quarantine), `sync` (no
 * round outlasts its validity) and more than one round; and two clients without faults, one of
 * which gets it. The fault budgets are finite, so every fault ends; the clock stops at MAXT. */
ltl eventually_granted { <> (held[0] || held[1]) }
