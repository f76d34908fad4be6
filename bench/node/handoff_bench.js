#!/usr/bin/env node
// SPDX-License-Identifier: BSL-1.0
// bench/handoff_bench.cpp with node-redlock v4 and ioredis v5, which wait by polling:
//
//   node handoff_bench.js --nodes URI[,URI...] --retry-delay MS [--handoffs K] [--contenders C] [--seconds S]
//
// Hand-off: a holder Redlock acquires, a waiter Redlock (its own ioredis clients, retryDelay MS,
// no jitter, retries until it gets it) starts lock(), 2 ms later the holder unlocks; latency runs
// from just before unlock() until the waiter's lock() resolves, K times. Contended: C async
// workers of the waiter loop lock() -> unlock() on one resource for S seconds. Prints one JSON line.
'use strict';

const Redis = require('ioredis');
const Redlock = require('redlock');

function usage(msg) {
  if (msg) process.stderr.write(`handoff_bench: ${msg}\n`);
  process.stderr.write('usage: node handoff_bench.js --nodes URI[,URI...] --retry-delay MS [--handoffs K] '
    + '[--contenders C] [--seconds S]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { nodes: [], retryDelay: 0, handoffs: 200, contenders: 50, seconds: 2 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--nodes') o.nodes = next().split(',').filter((s) => s.length > 0);
    else if (a === '--retry-delay') o.retryDelay = Number(next());
    else if (a === '--handoffs') o.handoffs = Number(next());
    else if (a === '--contenders') o.contenders = Number(next());
    else if (a === '--seconds') o.seconds = Number(next());
    else usage(`unknown argument ${a}`);
  }
  if (o.nodes.length === 0) usage('--nodes is required');
  if (!(o.retryDelay > 0)) usage('--retry-delay must be positive');
  if (!(Number.isInteger(o.handoffs) && o.handoffs > 0)) usage('--handoffs must be a positive integer');
  if (!(Number.isInteger(o.contenders) && o.contenders > 0)) usage('--contenders must be a positive integer');
  if (!(o.seconds > 0 && o.seconds <= 600)) usage('--seconds must be in (0, 600]');
  return o;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function quantileUs(sorted, q) {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] / 1000;
}

async function connect(nodes) {
  const clients = nodes.map(
    (uri) => new Redis(uri, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 1 }));
  await Promise.all(clients.map((c) => c.connect()));
  return clients;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const holderClients = await connect(o.nodes);
  const waiterClients = await connect(o.nodes);
  const holder = new Redlock(holderClients, { retryCount: 0, driftFactor: 0.01 });
  const waiter = new Redlock(waiterClients,
    { retryCount: 1000000, retryDelay: o.retryDelay, retryJitter: 0, driftFactor: 0.01 });
  let failures = 0;

  const samples = [];
  for (let i = 0; i < o.handoffs; i++) {
    let held;
    try {
      held = await holder.lock('bench:handoff', 10000);
    } catch (e) {
      failures++;
      continue;
    }
    let gotAt = 0n;
    const waiting = waiter.lock('bench:handoff', 10000).then((l) => { gotAt = process.hrtime.bigint(); return l; });
    await sleep(2);
    const releasedAt = process.hrtime.bigint();
    await held.unlock();
    const got = await waiting;
    samples.push(Number(gotAt - releasedAt));
    await got.unlock();
  }
  samples.sort((a, b) => a - b);

  let holds = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(o.seconds * 1e9));
  const worker = async () => {
    while (process.hrtime.bigint() < deadline) {
      try {
        const l = await waiter.lock('bench:contended', 10000);
        holds++;
        await l.unlock();
      } catch (e) {
        failures++;
      }
    }
  };
  await Promise.all(Array.from({ length: o.contenders }, worker));
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;

  process.stdout.write(`${JSON.stringify({
    nodes: o.nodes.length,
    waiting: `node-redlock retryDelay ${o.retryDelay} ms`,
    handoffs: samples.length,
    handoff_p50_us: quantileUs(samples, 0.5),
    handoff_p99_us: quantileUs(samples, 0.99),
    contenders: o.contenders,
    holds_per_s: holds / elapsed,
    failures,
  })}\n`);
  for (const c of [...holderClients, ...waiterClients]) c.disconnect();
}

main().catch((e) => {
  process.stderr.write(`handoff_bench: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
