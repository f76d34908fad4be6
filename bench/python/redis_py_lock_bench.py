#!/usr/bin/python3
# SPDX-License-Identifier: BSL-1.0
"""redis-py's Lock beside ours (docs/comparison.md): uncontended acquire + release pairs at
concurrency 1 on one node, and the hand-off latency of its blocking acquire (which polls every
`sleep` seconds, 0.1 by default).

  bench/python/redis_py_lock_bench.py --port P [--seconds 2] [--json]

Uses Debian's python3-redis (redis-py 4.3). Prints one line, or one JSON object with --json.
"""
import argparse
import json
import random
import threading
import time

import redis


def pairs(r, seconds):
    latencies = []
    n = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        lock = r.lock(f"pybench:{n}", timeout=10)
        t0 = time.monotonic()
        if not lock.acquire(blocking=False):
            raise RuntimeError("an uncontended acquire failed")
        latencies.append((time.monotonic() - t0) * 1e6)
        lock.release()
        n += 1
    latencies.sort()
    return n / seconds, latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99)]


def handoff(r, rounds, sleep):
    """The holder releases at t; the waiter, blocked in acquire(), holds at t'. Returns t' - t."""
    gaps = []
    for i in range(rounds):
        name = f"pyhandoff:{i}"
        holder = r.lock(name, timeout=10)
        holder.acquire()
        held_at = []

        def wait():
            waiter = r.lock(name, timeout=10, sleep=sleep)
            waiter.acquire(blocking=True, blocking_timeout=5)
            held_at.append(time.monotonic())
            waiter.release()

        t = threading.Thread(target=wait)
        t.start()
        # The waiter is polling; release at a random point of its polling period.
        time.sleep(0.02 + random.uniform(0, sleep))
        released_at = time.monotonic()
        holder.release()
        t.join()
        gaps.append((held_at[0] - released_at) * 1e6)
    gaps.sort()
    return gaps[len(gaps) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    r = redis.Redis(host="127.0.0.1", port=a.port)
    r.ping()
    rate, p50, p99 = pairs(r, a.seconds)
    handoff_default = handoff(r, 20, 0.1)
    handoff_fast = handoff(r, 20, 0.01)
    result = {"library": f"redis-py {redis.__version__}", "nodes": 1, "concurrency": 1,
              "pairs_per_s": rate, "acquire_p50_us": p50, "acquire_p99_us": p99,
              "handoff_p50_us_sleep_100ms": handoff_default, "handoff_p50_us_sleep_10ms": handoff_fast}
    if a.json:
        print(json.dumps(result))
    else:
        print(f"redis-py {redis.__version__} N=1 C=1: {rate:.0f} pairs/s, acquire p50 {p50:.1f} us, "
              f"p99 {p99:.1f} us; hand-off p50 {handoff_default:.0f} us (sleep 0.1 s), "
              f"{handoff_fast:.0f} us (sleep 0.01 s)")


if __name__ == "__main__":
    main()
