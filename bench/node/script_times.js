#!/usr/bin/env node
// SPDX-License-Identifier: BSL-1.0
// The server time of each script call, from the server's SLOWLOG, for bench/run_lock_bench:
//
//   node script_times.js --port P
//
// INFO commandstats counts every EVALSHA under one name, whatever the script; the slowlog keeps
// each call's arguments beside its duration (the time inside the command, the log's own entry
// made after it). The caller sets slowlog-log-slower-than 0 and a slowlog-max-len that holds the
// run, and resets the log before it. Prints one JSON line: a list of
// {"sha", "argv1", "calls", "mean_us", "p50_us"}, one per script (sha) and operation (a first
// script argument that is a short lower-case word, as fair.lua's acquire, release, ...; "" for
// any other), most calls first.
'use strict';

const Redis = require('ioredis');

function usage(msg) {
  process.stderr.write(`script_times: ${msg}\nusage: node script_times.js --port P\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
if (args.length !== 2 || args[0] !== '--port') usage('give --port');
const port = Number(args[1]);
if (!Number.isInteger(port) || port <= 0 || port > 65535) usage(`bad port ${args[1]}`);

(async () => {
  const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  // Each entry: [id, unix time, duration us, [args...], client address, client name].
  const entries = await redis.call('SLOWLOG', 'GET', '-1');
  await redis.quit();
  const groups = new Map();
  for (const entry of entries) {
    const argv = entry[3];
    if (!Array.isArray(argv) || String(argv[0]).toUpperCase() !== 'EVALSHA') continue;
    const sha = String(argv[1]);
    const numkeys = Number(argv[2]);
    // An operation's name (fair.lua's first argument), not a token: tokens are long, or hold digits.
    const first = argv.length > 3 + numkeys ? String(argv[3 + numkeys]) : '';
    const argv1 = /^[a-z_]{1,16}$/.test(first) ? first : '';
    const key = `${sha} ${argv1}`;
    if (!groups.has(key)) groups.set(key, { sha, argv1, durations: [] });
    groups.get(key).durations.push(Number(entry[2]));
  }
  const out = [...groups.values()].map((g) => {
    const d = g.durations.sort((a, b) => a - b);
    const mean = d.reduce((a, b) => a + b, 0) / d.length;
    return { sha: g.sha, argv1: g.argv1, calls: d.length, mean_us: Number(mean.toFixed(2)),
             p50_us: d[Math.floor((d.length - 1) / 2)] };
  }).sort((a, b) => b.calls - a.calls);
  process.stdout.write(`${JSON.stringify(out)}\n`);
})().catch((e) => {
  process.stderr.write(`script_times: ${e.message}\n`);
  process.exit(1);
});
