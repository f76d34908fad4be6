/* SPDX-License-Identifier: BSL-1.0 */
/* failover.pml: node 0 is a master with a replica that it replicates to asynchronously; the
 * master dies and the replica is promoted, with whatever it had received (the nodes are
 * symmetric: node 0 stands for any, as in restart.pml). The promoted server is another process:
 * a new run_id, up long before, so the restart quarantine's uptime rule does not hold it back,
 * and its run_id rule does only for a client that knew the old master. The connections to
 * node 0 close: every request in flight to it fails at its client (restart.pml fail_in_flight).
 * The failover quarantine (src/scripts/failover_mark.lua, run in each master connection's
 * setup: client.pml on_server_info) is kept with the data: the first handshake after the
 * promotion finds the master unmarked (lines 62-71: its replication ID is new) and starts a
 * quarantine of max_ttl + drift in a key every later client reads (lines 72-74). The negative
 * control no_failover_mark leaves only what a client itself saw (the run_id rule). Its state
 * is in state.pml, the mark in client.pml (failover_mark), where a handshake runs it.
 * Replication copies the master's key, expiry included, as a replica applies the stream: the
 * replica may hold any state the master had since the last copy. */

proctype fail_over() {
    byte i, d, cc, kk, r, gone, et;   /* as restart(): the replies it fails run client.pml's inlines */
end:
    do
    :: atomic {   /* the replication stream catches up */
        failover && !promoted && (rep_c != key_c[0] || rep_r != key_r[0] || rep_exp != key_exp[0]) ->
        rep_c = key_c[0]; rep_r = key_r[0]; rep_exp = key_exp[0]
       }
    :: atomic {   /* the master dies, the replica is promoted with what it has */
        failover && !promoted ->
        promoted = true;
        key_c[0] = rep_c; key_r[0] = rep_r; key_exp[0] = rep_exp;
        rep_c = NOBODY; rep_r = 0; rep_exp = 0;
        run_id[0]++;
        fail_in_flight()
       }
    od
}
