/* SPDX-License-Identifier: BSL-1.0 */
/* fair_params.pml: the fair lock's model (fair.pml): its fixed shape, the knobs one run sets,
 * and the global state (the nodes' keys and queues, the clients' rounds and leases, the
 * requests in flight). Globals, not locals, so that one process's assertion can read another's
 * lease. The keys and arguments follow src/scripts/fair.lua lines 17-48 (KEYS, ARGV) and
 * src/lock/kinds/fair.cpp (what a client sends); the knobs are read as params.pml's are. */

#include "common.pml"

#define NMAX       3    /* nodes at most; NODES (a knob) is 1 or 3 */
#define CLIENTS    3    /* one acquisition each: its place is the client's number */
#define BIT(n)     (1 << (n))
#define NOBODY     255

/* Time, in abstract ticks, as time.pml: a node expires a key DRIFT ticks early, always. */
#define DRIFT      1
#define NODE_TIMEOUT 2  /* a node that has not answered a round by then counts as failed */

/* vote (src/lock/quorum.hpp enum vote) */
#define DENIED   0
#define GRANTED  1
#define FAILED   2

/* The calls of fair.lua (ARGV[1]): 'acquire' is a round's request; 'withdraw' and 'requeue'
 * its cleanup (fair.cpp round_cleanup: 'requeue' once the acquisition has a ticket);
 * 'release' the end of a lease or of the acquisition (fair.cpp release, acquire_fsm::leave);
 * 'dequeue' the refusers of a round that won (acquire_fsm::succeed, on_answer). */
mtype:call = { ACQUIRE, WITHDRAW, REQUEUE, RELEASE, DEQUEUE };

/* --- the knobs (their defaults in init_knobs) --------------------------------------------- */
byte k_nodes;      /* NODES: 1 ('local' tickets) or 3 ('none', then the largest of a quorum) */
byte k_q;          /* quorum_of(NODES) (src/lock/quorum.hpp) */
byte k_ttl;        /* TTL: ARGV[7], every round's ttl */
byte k_qt;         /* QUEUE_TIMEOUT: ARGV[6], how long a place is kept without a refresh */
byte k_maxt;       /* MAXT: the clock stops here */
byte k_rounds[CLIENTS];  /* ROUNDS, ROUNDS_1, ROUNDS_2: each acquisition's rounds (0: none; at most 3) */
byte losses;       /* LOSSES: requests or replies the network may lose over the run */
byte late;         /* LATE: a bit per client: its calls may fail while their requests are on their way */
/* The negative control: the old hand-off rule. A lock handed over to a place is taken by any
 * round of that place, an earlier round's late request too (docs/safety.md "A late round and
 * a fair hand-off"). */
bool same_place_takes;
#define NODES     k_nodes
#define Q         k_q
#define MAY_FAIL  (NODES - Q)
#define TTL       k_ttl
#define QT        k_qt
#define MAXT      k_maxt
#define MARGIN    DRIFT   /* drift_allowance(ttl, drift_factor) */

inline init_knobs() {
    c_code {
        now.k_nodes = model_knob("NODES", 1, 1, 3);
        if (now.k_nodes == 2) { printf("model: MODEL_NODES is 1 or 3\n"); exit(2); }
        now.k_q = now.k_nodes / 2 + 1;
        now.k_ttl = model_knob("TTL", 3, 2, 10);
        now.k_qt = model_knob("QUEUE_TIMEOUT", 3, 1, 10);
        now.k_maxt = model_knob("MAXT", 4, 1, 20);
        now.k_rounds[0] = model_knob("ROUNDS", 2, 0, 3);
        now.k_rounds[1] = model_knob("ROUNDS_1", 1, 0, 3);
        now.k_rounds[2] = model_knob("ROUNDS_2", 1, 0, 3);
        now.losses = model_knob("LOSSES", 0, 0, 3);
        now.late = model_knob("LATE", 0, 0, 7);
        now.same_place_takes = model_knob("SAME_PLACE_TAKES", 0, 0, 1);
        printf("model knobs: NODES=%d TTL=%d QUEUE_TIMEOUT=%d MAXT=%d ROUNDS=%d ROUNDS_1=%d ROUNDS_2=%d "
               "LOSSES=%d LATE=%d SAME_PLACE_TAKES=%d\n",
               now.k_nodes, now.k_ttl, now.k_qt, now.k_maxt, now.k_rounds[0], now.k_rounds[1],
               now.k_rounds[2], now.losses, now.late, now.same_place_takes);
    }
}

/* --- time --------------------------------------------------------------------------------- */
byte now;

/* --- nodes (fair_node.pml) ------------------------------------------------------------------ */
/* KEYS[1], the lock: the place that holds it and the round: "<p>.<r>" written by round r of
 * place p, or, lk_h, "<p>:<p>.<r>", handed over to p as registered by its round r. */
byte lk_p[NMAX];
byte lk_r[NMAX];
bool lk_h[NMAX];
byte lk_exp[NMAX];          /* the tick at which the node expires it */
#define NP(n, p) ((n) * CLIENTS + (p))
/* KEYS[2], KEYS[3]: a place's ticket (0: not queued) and deadline; KEYS[5]: its hand-off, the
 * round that registered it (0: none) and the deadline the place had then (the ttl is TTL). */
byte q_t[NMAX * CLIENTS];
byte q_dl[NMAX * CLIENTS];
byte h_r[NMAX * CLIENTS];
byte h_dl[NMAX * CLIENTS];
byte ctr[NMAX];             /* KEYS[4], the ticket counter */

/* --- clients (fair_client.pml) -------------------------------------------------------------- */
#define SLEEPING    0   /* before its first round, or between rounds (acquire_fsm_waits.cpp) */
#define COUNTING    1   /* a round counting votes */
#define HOLDING     2   /* a lease */
#define DONE        3   /* released, or given up */
byte phase[CLIENTS];
byte rnd[CLIENTS];          /* acquire_round::number(): the round's value is "<place>.<rnd>" */
byte t0[CLIENTS];           /* acquire_round::started() */
byte answered[CLIENTS];     /* bit per node: its call of this round completed (a reply, or failed) */
byte granted_by[CLIENTS];   /* bit per node: granted (acquire_round::granted_) */
byte denied_by[CLIENTS];    /* bit per node: denied (acquire_round::denied_) */
byte n_granted[CLIENTS];
byte n_other[CLIENTS];      /* denied or failed: vote_tally's count against the quorum */
byte heard[CLIENTS];        /* acquire_round::round_heard_ */
byte tmax[CLIENTS];         /* acquire_round::round_ticket_max_ */
byte ticket[CLIENTS];       /* acquire_round::ticket_: the acquisition's, for good once set */
byte handed[CLIENTS];       /* bit per node: handed over to this round (acquire_round::handed_over_) */
byte cl_wait[CLIENTS];      /* bit per node: a cleanup not yet answered (cleanups_pending_) */
bool final[CLIENTS];        /* this round, lost, is the acquisition's last: it leaves (fail_round) */
bool succeeded[CLIENTS];    /* acquire_round::has_succeeded */
bool held[CLIENTS];         /* a lease, valid or not */
byte valid_until[CLIENTS];  /* lease_fsm::valid_until */
bool by_handoff[CLIENTS];   /* the lease's value is the hand-off's, "<place>:<place>.<rnd>" */
/* "granted <round>" published to a place by node n (fair.lua line 139): the round, 0: none.
 * A later message overwrites one not yet read: pub/sub may lose messages. */
byte hmsg[CLIENTS * NMAX];

/* --- the requests in flight: a bit per round, per (client, node) --------------------------- */
#define CN(c, n) ((c) * NMAX + (n))
byte acq_m[CLIENTS * NMAX];     /* ACQUIRE */
byte acq_tk[CLIENTS * NMAX];    /* its bit set: sent with the acquisition's ticket (else 'none'/'local') */
byte cln_m[CLIENTS * NMAX];     /* a failed round's cleanup: WITHDRAW, or REQUEUE if its bit in cln_rq */
byte cln_rq[CLIENTS * NMAX];
byte rel_m[CLIENTS * NMAX];     /* RELEASE */
byte deq_m[CLIENTS * NMAX];     /* DEQUEUE */

/* BELIEVES: common.pml. */

/* --- the properties (PROPERTY, common.pml) ------------------------------------------------- */
hidden byte mutual_exclusion;
