#!/usr/bin/env node
// SPDX-License-Identifier: BSL-1.0
// bench/lock_bench.cpp --permits K and bench/handoff_bench.cpp --permits K with the semaphores of
// node's redis-semaphore over ioredis v5, on the same servers in the same run
// (bench/run_semaphore_bench runs both):
//
//   node semaphore_bench.js --kind semaphore|multi|redlock --nodes URI[,URI...] --mode pairs|contended
//                           [--permits K] [--concurrency C] [--seconds S] [--warmup PAIRS] [--retry-interval MS]
//
// --kind: Semaphore (one node), MultiSemaphore (one node, taking 1 of K permits per acquire: the
// same work as Semaphore through its own script) or RedlockSemaphore (one ioredis client per node,
// a quorum of N/2+1). Every acquisition is an object of its own (redis-semaphore's objects are one
// holder each), lockTimeout 10 s as our ttl, and refreshInterval 0: no refresh timer, as ours runs
// no watchdog in these benchmarks.
// pairs: C async workers each loop tryAcquire() then release() of a resource of their own
// ("bench:<worker>:<n>", a new one each pair, K permits), acquireAttemptsLimit 1 as our wait 0,
// for S seconds after a warm-up of PAIRS pairs. Prints lock_bench's JSON fields.
// contended: C workers loop acquire() -> release() on one resource of K permits for S seconds,
// polling every MS ms (retryInterval; redis-semaphore has no other way to wait); prints holds/s
// and the hand-offs, matched as bench/handoff_bench.cpp does: each completed acquire, once the
// first K went to free permits, with the oldest release not matched yet (at most K kept).
// Exit 0 whenever the run completed, 2 on bad arguments, 1 on a crash.
'use strict';

const Redis = require('ioredis');
const { Semaphore, MultiSemaphore, RedlockSemaphore } = require('redis-semaphore');

function usage(msg) {
  if (msg) process.stderr.write(`semaphore_bench: ${msg}\n`);
  process.stderr.write('usage: node semaphore_bench.js --kind semaphore|multi|redlock --nodes URI[,URI...] '
    + '--mode pairs|contended [--permits K] [--concurrency C] [--seconds S] [--warmup PAIRS] '
    + '[--retry-interval MS]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { kind: '', nodes: [], mode: '', permits: 5, concurrency: 50, seconds: 5, warmup: 500, retryInterval: 10 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--kind') o.kind = next();
    else if (a === '--nodes') o.nodes = next().split(',').filter((s) => s.length > 0);
    else if (a === '--mode') o.mode = next();
    else if (a === '--permits') o.permits = Number(next());
    else if (a === '--concurrency') o.concurrency = Number(next());
    else if (a === '--seconds') o.seconds = Number(next());
    else if (a === '--warmup') o.warmup = Number(next());
    else if (a === '--retry-interval') o.retryInterval = Number(next());
    else usage(`unknown argument ${a}`);
  }
  if (!['semaphore', 'multi', 'redlock'].includes(o.kind)) usage('--kind must be semaphore, multi or redlock');
  if (!['pairs', 'contended'].includes(o.mode)) usage('--mode must be pairs or contended');
  if (o.nodes.length === 0) usage('--nodes is required');
  if (o.kind !== 'redlock' && o.nodes.length !== 1) usage(`--kind ${o.kind} takes one node`);
  if (!(Number.isInteger(o.permits) && o.permits > 0)) usage('--permits must be a positive integer');
  if (!(Number.isInteger(o.concurrency) && o.concurrency > 0)) usage('--concurrency must be a positive integer');
  if (!(o.seconds > 0 && o.seconds <= 600)) usage('--seconds must be in (0, 600]');
  if (!(Number.isInteger(o.warmup) && o.warmup >= 0)) usage('--warmup must be a non-negative integer');
  if (!(o.retryInterval > 0)) usage('--retry-interval must be positive');
  return o;
}

// Nearest-rank quantile of sorted samples (nanoseconds), in microseconds.
function quantileUs(sorted, q) {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] / 1000;
}

function makeFactory(o, clients) {
  const common = { lockTimeout: 10000, refreshInterval: 0 };
  const options = o.mode === 'pairs'
    ? { ...common, acquireAttemptsLimit: 1 }
    : { ...common, acquireTimeout: 10000, retryInterval: o.retryInterval };
  if (o.kind === 'semaphore') return (key) => new Semaphore(clients[0], key, o.permits, options);
  if (o.kind === 'multi') return (key) => new MultiSemaphore(clients[0], key, o.permits, 1, options);
  return (key) => new RedlockSemaphore(clients, key, o.permits, options);
}

async function pairs(o, make) {
  const errors = {};
  const noteError = (what) => { errors[what] = (errors[what] || 0) + 1; };
  const st = {
    measuring: false, warmupLeft: o.warmup, deadline: 0n, samples: [], releaseSamples: [], pairs: 0,
    acquireFailures: 0, releaseFailures: 0, warmupPairs: 0, warmupFailures: 0,
  };
  const keepGoing = () => (st.measuring ? process.hrtime.bigint() < st.deadline : st.warmupLeft > 0);
  const fail = (which, what) => {
    if (!st.measuring) st.warmupFailures++;
    else if (which === 'acquire') st.acquireFailures++;
    else st.releaseFailures++;
    noteError(`${which}: ${what}`);
  };

  async function worker(id) {
    const prefix = `bench:${id}:`;
    let n = 0;
    while (keepGoing()) {
      if (!st.measuring) st.warmupLeft--;
      const sem = make(prefix + n++);
      const t0 = process.hrtime.bigint();
      let got;
      try {
        got = await sem.tryAcquire();
      } catch (err) {
        fail('acquire', err && err.message);
        continue;
      }
      if (!got) {
        fail('acquire', 'not acquired');
        continue;
      }
      const t1 = process.hrtime.bigint();
      try {
        await sem.release();
      } catch (err) {
        fail('release', err && err.message);
        continue;
      }
      const t2 = process.hrtime.bigint();
      if (st.measuring) {
        st.samples.push(Number(t1 - t0));
        st.releaseSamples.push(Number(t2 - t1));
        st.pairs++;
      } else {
        st.warmupPairs++;
      }
    }
  }
  const runPhase = () => Promise.all(Array.from({ length: o.concurrency }, (_, i) => worker(i)));

  await runPhase();  // warm-up
  st.measuring = true;
  const start = process.hrtime.bigint();
  st.deadline = start + BigInt(Math.round(o.seconds * 1e9));
  await runPhase();
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  const sorted = Float64Array.from(st.samples).sort();
  const releaseSorted = Float64Array.from(st.releaseSamples).sort();
  return {
    seconds: elapsed,
    pairs: st.pairs,
    pairs_per_s: elapsed > 0 ? st.pairs / elapsed : 0,
    acquire_p50_us: quantileUs(sorted, 0.5),
    acquire_p99_us: quantileUs(sorted, 0.99),
    acquire_max_us: sorted.length ? sorted[sorted.length - 1] / 1000 : 0,
    release_p50_us: quantileUs(releaseSorted, 0.5),
    release_p99_us: quantileUs(releaseSorted, 0.99),
    acquire_failures: st.acquireFailures,
    release_failures: st.releaseFailures,
    failures: st.acquireFailures + st.releaseFailures,
    warmup_pairs: st.warmupPairs,
    warmup_failures: st.warmupFailures,
    errors,
  };
}

async function contended(o, make) {
  let holds = 0;
  let failures = 0;
  let freePermits = o.permits;  // taken by the first acquires, without a release to match
  const released = [];  // hrtime of releases not matched with an acquire yet, oldest first
  const samples = [];
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(o.seconds * 1e9));
  const worker = async () => {
    while (process.hrtime.bigint() < deadline) {
      const sem = make('bench:contended');
      try {
        await sem.acquire();
      } catch (err) {
        failures++;
        continue;
      }
      const gotAt = process.hrtime.bigint();
      while (released.length > o.permits) released.shift();
      if (freePermits > 0) freePermits--;
      else if (released.length > 0) samples.push(Number(gotAt - released.shift()));
      holds++;
      released.push(process.hrtime.bigint());
      try {
        await sem.release();
      } catch (err) {
        failures++;
      }
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  const sorted = Float64Array.from(samples).sort();
  return {
    seconds: elapsed,
    contenders: o.concurrency,
    retry_interval_ms: o.retryInterval,
    holds_per_s: holds / elapsed,
    contended_handoffs: samples.length,
    contended_handoff_p50_us: quantileUs(sorted, 0.5),
    contended_handoff_p99_us: quantileUs(sorted, 0.99),
    failures,
  };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const clients = o.nodes.map(
    (uri) => new Redis(uri, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 1 }));
  await Promise.all(clients.map((c) => c.connect()));
  const make = makeFactory(o, clients);
  const figures = o.mode === 'pairs' ? await pairs(o, make) : await contended(o, make);
  await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
  process.stdout.write(`${JSON.stringify({
    implementation: `redis-semaphore ${o.kind}`,
    redis_semaphore_version: require('redis-semaphore/package.json').version,
    ioredis_version: require('ioredis/package.json').version,
    node_version: process.version,
    nodes: clients.length,
    mode: o.mode,
    permits: o.permits,
    concurrency: o.concurrency,
    ...figures,
  })}\n`);
}

main().catch((err) => {
  process.stderr.write(`semaphore_bench: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
