/* params.pml: the knobs of the model. Every bound here is one the driver (check_model) relies
 * on to keep a run within its memory and time; raise one and re-measure. */

#define N          3    /* nodes: quorum_of(3) = 2 (src/lock/quorum.hpp quorum_of) */
#define CLIENTS    2
#define Q          (N / 2 + 1)
#define MAY_FAIL   (N - Q)
#define BIT(n)     (1 << (n))

/* Time, in abstract ticks (time.pml). One tick is also the second of INFO's uptime. */
#ifndef TTL
#define TTL        2    /* every lease's ttl; also max_ttl, the bound the quarantine waits for */
#endif
#define DRIFT      1    /* how much earlier than the client's clock a node may expire a key */
#ifdef NO_DRIFT_MARGIN
#define MARGIN     0    /* negative control: validity without drift_allowance */
#else
#define MARGIN     DRIFT /* drift_allowance(ttl, drift_factor): covers DRIFT */
#endif
#define SEC        1    /* INFO reports uptime in whole seconds: node_health adds one */
#define NODE_TIMEOUT 2  /* a node that has not answered by then counts as failed */

#ifndef MAXT
#define MAXT       4    /* the clock stops here: the horizon of every run */
#endif

/* Rounds (acquire attempts) per client over the whole run, retries included. */
#ifndef ROUNDS
#define ROUNDS     1    /* at most 3: network.pml keeps a bit per round */
#endif
#ifndef ROUNDS_1
#define ROUNDS_1   ROUNDS
#endif

/* Faults the network may inject over the whole run (network.pml). */
#ifndef LOSSES
#define LOSSES     0
#endif
#ifndef RESTARTS
#define RESTARTS   0
#endif
#ifndef EXTENDS
#define EXTENDS    0    /* extends per lease */
#endif

