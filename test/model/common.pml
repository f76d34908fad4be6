/* SPDX-License-Identifier: BSL-1.0 */
/* common.pml: what every model of test/model shares: how a property is checked, and how a run's
 * knobs are read. */

/* A property, checked where it may break: a hidden byte of its name (declared by the model),
 * so that pan reports "assertion violated <name>" and check_model can tell which property a
 * negative control broke. Hidden: not in the state vector, it adds no states. */
#define PROPERTY(name, e)  name = (e); assert(name)

/* Time, for every model: each defines `now`, TTL and MARGIN (the drift allowance) and, per
 * client or lease, `held` and `valid_until`. src/lock/quorum.cpp validity_left with
 * acquire_round::validity's min_validity 0: ttl - elapsed - drift_allowance, counted from t0
 * (before the first send); nothing left: 0. */
#define VALIDITY_LEFT_OF(start, ttl)  ((start) + (ttl) - MARGIN > now -> (start) + (ttl) - MARGIN - now : 0)
#define VALIDITY_LEFT(start)          VALIDITY_LEFT_OF(start, TTL)
/* A client believes it holds: a lease with validity left by its own clock. */
#define BELIEVES(c)  (held[c] && now < valid_until[c])

c_code {
/* MODEL_<name> from the environment, or `fallback`; pan exits on a value out of range, so that
 * a mistyped knob cannot pass for a checked setting. */
static int model_knob(const char* name, int fallback, int low, int high) {
    char var[64];
    snprintf(var, sizeof var, "MODEL_%s", name);
    const char* text = getenv(var);
    if (!text || !*text) return fallback;
    char* end = 0;
    long value = strtol(text, &end, 10);
    if (*end || value < low || value > high) {
        printf("model: %s=%s is not in [%d, %d]\n", var, text, low, high);
        exit(2);
    }
    return (int) value;
}
}

