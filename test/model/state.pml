/* SPDX-License-Identifier: BSL-1.0 */
/* state.pml: the global state: the nodes' keys and counters, the clients' leases, the protected
 * resource, and the ghost variables the properties read. Globals, not locals, so that the
 * assertions of one process can see another's lease. */

mtype:kind = { ACQUIRE, RELEASE, EXTEND, WRITEBACK, ADOPT };

/* vote (src/lock/quorum.hpp enum vote) */
#define DENIED   0
#define GRANTED  1
#define FAILED   2

/* --- nodes (node.pml) ------------------------------------------------------------------- */
/* The lock key: the token that holds it, as (client, round); key_c == NOBODY: no key. */
#define NOBODY 255
byte key_c[N];
byte key_r[N];
byte key_exp[N];        /* the tick at which the node expires it */
byte counter[N];        /* "{<name>}:fence": INCR'd by acquire_fenced.lua, no expiry */
byte run_id[N];         /* a new one on every restart */
short started[N];       /* the tick the server process started; long ago for the initial ones */

/* --- clients (client.pml) ---------------------------------------------------------------- */
#define IDLE        0
#define COUNTING    1   /* acquire_round: counting votes */
#define WRITING     2   /* acquire_round: won, writing the fence back (fence_settlement) */
#define HOLDING     3   /* a lease */
#define EXTENDING   4   /* a lease with an extend in flight */
byte phase[CLIENTS];
byte round[CLIENTS];    /* acquire_round::number(): the round's token is (client, round) */
byte t0[CLIENTS];       /* acquire_round::started(): before the first send */
byte answered[CLIENTS]; /* bit per node: counted in this round */
byte granted_by[CLIENTS];   /* bit per node: granted (and admitted) in this round */
byte denied_by[CLIENTS];    /* bit per node: denied in this round (acquire_round::denied_) */
byte n_granted[CLIENTS];
byte n_denied[CLIENTS];
byte n_failed[CLIENTS];
byte node_fence[CLIENTS * N];   /* the counter each granting node returned */
byte fence[CLIENTS];        /* fence_settlement::fence() */
byte confirmed[CLIENTS];    /* fence_settlement::confirmed_ */
byte wb_pending[CLIENTS];   /* fence_settlement::pending_ */
bool held[CLIENTS];         /* a lease (lease_state), valid or not */
byte valid_until[CLIENTS];  /* lease_state::valid_until */
byte ext_t0[CLIENTS];
byte ext_ttl[CLIENTS];      /* the ttl the extend in flight asked for */
byte ext_answered[CLIENTS];   /* bit per node: counted in the extend in flight */
byte ext_granted[CLIENTS];
byte ext_other[CLIENTS];
byte ext_left[CLIENTS];
bool wrote[CLIENTS];

/* The hand-over (ADOPT): the round of client 0's lease that lease::handover wrote out; 0: none. */
byte handed_round;
bool handed_release;    /* its release is still to be sent */

/* What each client knows of each node (node_health, src/lock/node_health.hpp). */
byte conn_run[CLIENTS * N];     /* the run_id its connection reached; 0: not connected */
byte seen_run[CLIENTS * N];     /* node_health::run_id_; 0: empty */
byte q_until[CLIENTS * N];      /* node_health::quarantined_until_ */
bool known[CLIENTS * N];        /* node_health::known_ */
#define CN(c, n) ((c) * N + (n))

/* --- node 0's replica and its promotion (failover.pml) ----------------------------------- */
byte rep_c = NOBODY;    /* the replica's copy of node 0's key: token (client, round), expiry */
byte rep_r;
byte rep_exp;
bool promoted;          /* the failover happened */
bool marked;            /* failover_mark.lua marked the promoted master */
byte failover_until;    /* its quarantine key expires then; 0: none */

/* --- the protected resource (fenced_set.lua) --------------------------------------------- */
byte res_seen;          /* KEYS[2]: the highest fence seen */

/* --- ghosts: read only by assertions ----------------------------------------------------- */
/* The properties (PROPERTY, params.pml): 1. mutual_exclusion, 2. fences_increase (grants) and
 * resource_fence_order (the resource), 3. own_round_release; 4 is the ltl eventually_granted. */
hidden byte mutual_exclusion;
hidden byte fences_increase;
hidden byte resource_fence_order;
hidden byte own_round_release;
byte max_granted_fence; /* the largest fence any lease was granted with */
byte max_accepted_fence;/* the largest fence the resource accepted a write with */
