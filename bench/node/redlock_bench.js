#!/usr/bin/env node
// SPDX-License-Identifier: BSL-1.0
// The loop of bench/lock_bench.cpp with node-redlock v4 and ioredis v5, for a comparison on the
// same servers in the same run (bench/run_lock_bench runs both).
//
//   node redlock_bench.js --nodes URI[,URI...] [--cluster] [--concurrency C] [--seconds S] [--warmup PAIRS]
//
// One ioredis client per node (with --cluster: one ioredis Cluster whose seeds are the nodes, the
// way node-redlock's README has a cluster used: one voter), one Redlock({retryCount: 0,
// driftFactor: 0.01}) over them; C async
// workers, each looping redlock.lock("bench:<worker>:<n>", 10000) then lock.unlock() until S
// seconds have passed, after a warm-up of PAIRS pairs that is not measured. Prints one JSON line:
// pairs/s, exact acquire p50/p99/max in microseconds (process.hrtime around the awaited lock()),
// release p50/p99 (around the awaited unlock()), and the failures. Exit 0 whenever the run
// completed, 2 on bad arguments, 1 on a crash.
'use strict';

const Redis = require('ioredis');
const Redlock = require('redlock');

function usage(msg) {
  if (msg) process.stderr.write(`redlock_bench: ${msg}\n`);
  process.stderr.write(
    'usage: node redlock_bench.js --nodes URI[,URI...] [--cluster] [--concurrency C] [--seconds S] [--warmup PAIRS]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { nodes: [], cluster: false, concurrency: 1, seconds: 5, warmup: 500 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--nodes') o.nodes = next().split(',').filter((s) => s.length > 0);
    else if (a === '--cluster') o.cluster = true;
    else if (a === '--concurrency') o.concurrency = Number(next());
    else if (a === '--seconds') o.seconds = Number(next());
    else if (a === '--warmup') o.warmup = Number(next());
    else usage(`unknown argument ${a}`);
  }
  if (o.nodes.length === 0) usage('--nodes is required');
  if (!(Number.isInteger(o.concurrency) && o.concurrency > 0)) usage('--concurrency must be a positive integer');
  if (!(o.seconds > 0 && o.seconds <= 3600)) usage('--seconds must be in (0, 3600]');
  if (!(Number.isInteger(o.warmup) && o.warmup >= 0)) usage('--warmup must be a non-negative integer');
  return o;
}

// Nearest-rank quantile of sorted samples (nanoseconds), in microseconds.
function quantileUs(sorted, q) {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] / 1000;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const clients = o.cluster
    ? [new Redis.Cluster(o.nodes.map((uri) => {
        const u = new URL(uri);
        return { host: u.hostname, port: Number(u.port) };
      }), { lazyConnect: true, redisOptions: { connectTimeout: 2000, maxRetriesPerRequest: 1 } })]
    : o.nodes.map((uri) => new Redis(uri, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 1 }));
  await Promise.all(clients.map((c) => c.connect()));

  const redlock = new Redlock(clients, { retryCount: 0, driftFactor: 0.01 });
  const errors = {};
  const noteError = (what) => { errors[what] = (errors[what] || 0) + 1; };
  let clientErrors = 0;
  redlock.on('clientError', (err) => {
    clientErrors++;
    noteError(`clientError: ${err && err.message}`);
  });

  const st = {
    measuring: false,
    warmupLeft: o.warmup,
    deadline: 0n,
    samples: [],
    releaseSamples: [],
    pairs: 0,
    acquireFailures: 0,
    releaseFailures: 0,
    warmupPairs: 0,
    warmupFailures: 0,
  };
  const keepGoing = () => (st.measuring ? process.hrtime.bigint() < st.deadline : st.warmupLeft > 0);

  async function worker(id) {
    const prefix = `bench:${id}:`;
    let n = 0;
    while (keepGoing()) {
      if (!st.measuring) st.warmupLeft--;
      const resource = prefix + n++;
      const t0 = process.hrtime.bigint();
      let lock;
      try {
        lock = await redlock.lock(resource, 10000);
      } catch (err) {
        if (st.measuring) st.acquireFailures++; else st.warmupFailures++;
        noteError(`acquire: ${err && err.message}`);
        continue;
      }
      const t1 = process.hrtime.bigint();
      let t2;
      try {
        await lock.unlock();
        t2 = process.hrtime.bigint();
      } catch (err) {
        if (st.measuring) st.releaseFailures++; else st.warmupFailures++;
        noteError(`release: ${err && err.message}`);
        continue;
      }
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
  const end = process.hrtime.bigint();

  await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));

  const elapsed = Number(end - start) / 1e9;
  const sorted = Float64Array.from(st.samples).sort();
  const releaseSorted = Float64Array.from(st.releaseSamples).sort();
  const report = {
    implementation: 'node-redlock',
    redlock_version: require('redlock/package.json').version,
    ioredis_version: require('ioredis/package.json').version,
    node_version: process.version,
    nodes: clients.length,
    cluster: o.cluster,
    concurrency: o.concurrency,
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
    client_errors: clientErrors,
    warmup_pairs: st.warmupPairs,
    warmup_failures: st.warmupFailures,
    errors,
  };
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((err) => {
  process.stderr.write(`redlock_bench: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
