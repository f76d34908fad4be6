/* SPDX-License-Identifier: BSL-1.0 */
/* params.pml: the fixed shape of the model, and the knobs one run sets.
 *
 * The knobs are read by init from pan's environment (MODEL_<NAME>, see init_knobs below and
 * check_model): every run and negative control is one compiled pan with other settings, not a
 * model compiled again (an optimised compile of pan.c takes 30 s, longer than most runs). Each knob is a global that
 * init sets once, before any other process runs. */

#include "common.pml"

#ifndef N
#define N          3    /* nodes: quorum_of(3) = 2 (src/lock/quorum.hpp quorum_of); redlock_n5.pml: 5 */
#endif
#define CLIENTS    2
#define Q          (N / 2 + 1)
#define MAY_FAIL   (N - Q)
#define BIT(n)     (1 << (n))

/* Time, in abstract ticks (time.pml). One tick is also the second of INFO's uptime. */
#define DRIFT      1    /* how much earlier than the client's clock a node may expire a key */
#define SEC        1    /* INFO reports uptime in whole seconds: node_health adds one */

/* --- the knobs (their defaults in init_knobs) --------------------------------------------- */
byte k_ttl;        /* TTL: every lease's ttl; also max_ttl, the bound the quarantine waits for */
byte k_maxt;       /* MAXT: the clock stops here: the horizon of every run */
byte k_margin;     /* MARGIN: drift_allowance(ttl, drift_factor): DRIFT; 0 with no_drift_margin */
byte k_rounds;     /* ROUNDS: rounds (acquire attempts) of client 0 over the run, retries included */
byte k_rounds_1;   /* ROUNDS_1: the same for client 1; at most 3 (network.pml keeps a bit per round) */
byte k_extends;    /* EXTENDS: extends per lease of client 0 */
byte k_extends_1;  /* EXTENDS_1: the same for client 1 */
byte k_node_timeout; /* NODE_TIMEOUT: a node that has not answered by then counts as failed */
byte k_ttl_short;  /* TTL_SHORT: an extend may ask for this shorter ttl instead (0: never) */
#define TTL       k_ttl
#define MAXT      k_maxt
#define MARGIN    k_margin
#define ROUNDS    k_rounds
#define ROUNDS_1  k_rounds_1
#define EXTENDS   k_extends
#define EXTENDS_1 k_extends_1
#define TTL_SHORT k_ttl_short
#define NODE_TIMEOUT k_node_timeout
byte losses;       /* requests or replies the network may lose over the run (network.pml) */
byte restarts;     /* restarts of node 0 (restart.pml) */
bool fenced;       /* fenced locks: the counter, its write-back, the fenced writes */
bool late;         /* an acquire's request may run after its node timeout counted it failed */
bool late_extends; /* LATE_EXTENDS: the same for an extend's (default: LATE) */
bool sync;         /* the liveness runs' timing assumption: a round ends within the tick it began */
/* The negative controls: each switches one rule off. */
bool no_quarantine;     /* a restarted node votes at once */
bool run_id_rule_only;  /* the quarantine without its uptime rule */
bool counter_lost;      /* the restart loses the fence counter too (no AOF) */
bool no_fences;         /* the resource takes any fence */
bool one_token;         /* every round of a client has the same token */
bool adopt;             /* ADOPT: client 0 hands its lease over, client 1 adopts it */
bool adopt_keeps_token; /* the adopter holds under the written-out token (negative control) */
bool failover;          /* FAILOVER: node 0's master fails over to its replica (failover.pml) */
bool no_failover_mark;  /* the failover quarantine only for clients that saw the switch */
bool no_gt;             /* an extend sets its expiry even when that shortens the key's */

inline init_knobs() {
    c_code {
        now.k_ttl = model_knob("TTL", 2, 1, 10);
        now.k_maxt = model_knob("MAXT", 4, 1, 20);
        now.k_rounds = model_knob("ROUNDS", 1, 0, 3);
        now.k_rounds_1 = model_knob("ROUNDS_1", now.k_rounds, 0, 3);
        now.k_extends = model_knob("EXTENDS", 0, 0, 3);
        now.k_extends_1 = model_knob("EXTENDS_1", now.k_extends, 0, 3);
        now.k_ttl_short = model_knob("TTL_SHORT", 0, 0, 9);
        now.k_node_timeout = model_knob("NODE_TIMEOUT", 2, 1, 10);
        if (now.k_ttl_short >= now.k_ttl) {
            printf("model: MODEL_TTL_SHORT must be below MODEL_TTL\n");
            exit(2);
        }
        now.losses = model_knob("LOSSES", 0, 0, 3);
        now.restarts = model_knob("RESTARTS", 0, 0, 1);
        now.fenced = model_knob("FENCED", 0, 0, 1);
        now.late = model_knob("LATE", 0, 0, 1);
        now.late_extends = model_knob("LATE_EXTENDS", now.late, 0, 1);
        now.sync = model_knob("SYNC", 0, 0, 1);
        if (now.sync && (now.late || now.late_extends)) {
            printf("model: MODEL_SYNC and MODEL_LATE exclude each other (a late request needs time to pass)\n");
            exit(2);
        }
        now.no_quarantine = model_knob("NO_QUARANTINE", 0, 0, 1);
        now.run_id_rule_only = model_knob("RUN_ID_RULE_ONLY", 0, 0, 1);
        now.counter_lost = model_knob("COUNTER_LOST", 0, 0, 1);
        now.no_fences = model_knob("NO_FENCES", 0, 0, 1);
        now.one_token = model_knob("ONE_TOKEN", 0, 0, 1);
        now.no_gt = model_knob("NO_GT", 0, 0, 1);
        now.adopt = model_knob("ADOPT", 0, 0, 1);
        now.failover = model_knob("FAILOVER", 0, 0, 1);
        now.no_failover_mark = model_knob("NO_FAILOVER_MARK", 0, 0, 1);
        if (now.failover && (now.restarts || now.fenced)) {
            printf("model: MODEL_FAILOVER excludes MODEL_RESTARTS and MODEL_FENCED (node 0 is the one that fails)\n");
            exit(2);
        }
        now.adopt_keeps_token = model_knob("ADOPT_KEEPS_TOKEN", 0, 0, 1);
        now.k_margin = model_knob("NO_DRIFT_MARGIN", 0, 0, 1) ? 0 : DRIFT;
        printf("model knobs: TTL=%d MAXT=%d MARGIN=%d ROUNDS=%d ROUNDS_1=%d EXTENDS=%d EXTENDS_1=%d TTL_SHORT=%d NODE_TIMEOUT=%d LOSSES=%d "
               "RESTARTS=%d FENCED=%d LATE=%d LATE_EXTENDS=%d SYNC=%d NO_QUARANTINE=%d RUN_ID_RULE_ONLY=%d "
               "COUNTER_LOST=%d NO_FENCES=%d ONE_TOKEN=%d NO_GT=%d ADOPT=%d ADOPT_KEEPS_TOKEN=%d FAILOVER=%d NO_FAILOVER_MARK=%d\n",
               now.k_ttl, now.k_maxt, now.k_margin, now.k_rounds, now.k_rounds_1, now.k_extends, now.k_extends_1, now.k_ttl_short, now.k_node_timeout, now.losses,
               now.restarts, now.fenced, now.late, now.late_extends, now.sync, now.no_quarantine, now.run_id_rule_only,
               now.counter_lost, now.no_fences, now.one_token, now.no_gt, now.adopt, now.adopt_keeps_token, now.failover, now.no_failover_mark);
    }
}
