#!/usr/bin/env node
// Runs the compiled test suite with Node's test runner (Node 20 has no glob support in --test).
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const testDir = join(root, 'dist', 'test');
// Arguments: substrings of the test files to run (all when none); `--skip=SUBSTRING` leaves some out;
// `--times` adds each file's time, slowest first, and each tier's, after the results.
const args = process.argv.slice(2);
const times = args.includes('--times');
const only = args.filter((a) => !a.startsWith('--skip=') && a !== '--times');
const skipped = args.filter((a) => a.startsWith('--skip=')).map((a) => a.slice('--skip='.length));

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return find(full);
    return name.endsWith('.test.js') ? [full] : [];
  });
}

// The slowest files start first (the real CLIs, then the clients, then end-to-end, HTTP and unit
// tests): started last, as in alphabetical order, a real-CLI file of two minutes ran on alone at
// the end while the other runners sat idle.
const TIER_ORDER = ['real', 'clients', 'e2e', 'http', 'unit'];
const tierRank = (f) => {
  const i = TIER_ORDER.findIndex((t) => relative(testDir, f).startsWith(`${t}/`));
  return i === -1 ? TIER_ORDER.length : i;
};
let files = find(testDir).sort((a, b) => tierRank(a) - tierRank(b) || a.localeCompare(b));
if (only.length > 0) files = files.filter((f) => only.some((o) => relative(root, f).includes(o)));
if (skipped.length > 0) files = files.filter((f) => !skipped.some((s) => relative(root, f).includes(s)));
if (files.length === 0) {
  console.error('no test files found; run `npm run build` first');
  process.exit(1);
}
// Test files run this many at a time: most of a file's time is spent waiting on the CLIs it
// spawns, so one more than the cores keeps them busy (OLP_TEST_CONCURRENCY sets it).
const CONCURRENCY = Number(process.env.OLP_TEST_CONCURRENCY ?? availableParallelism() + 1);
process.env.OLP_TEST_CONCURRENCY = String(CONCURRENCY);
const started = Date.now();
// A test file that something keeps alive after its tests (a child a failed test never stopped)
// would hold the runner forever: past this, the suite is stopped and fails, saying so.
const SUITE_LIMIT_MS = Number(process.env.OLP_TEST_SUITE_LIMIT_MIN ?? 30) * 60_000;
const child = spawn(
  process.execPath,
  [
    '--import',
    join(testDir, 'support', 'strict.js'),
    '--test',
    `--test-concurrency=${CONCURRENCY}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    ...(times
      ? [`--test-reporter=${join(root, 'scripts', 'test-file-times.mjs')}`, '--test-reporter-destination=stdout']
      : []),
    // Each test, and each file as a whole (Node's runner applies it to both): the longest files
    // take 2–3 minutes on a quiet 2-core machine and several times that beside a full load, and a
    // test waits on events, not on this; a hung one fails here, far inside the suite's limit.
    '--test-timeout=900000',
    ...files,
  ],
  { stdio: 'inherit', cwd: root, detached: true },
);
const stopAll = () => {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {}
};
const limit = setTimeout(() => {
  console.error(`test suite still running after ${SUITE_LIMIT_MS / 60_000} min: stopped (a test file did not end)`);
  stopAll();
}, SUITE_LIMIT_MS);
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    stopAll();
    process.exit(1);
  });
child.on('exit', (code) => {
  clearTimeout(limit);
  stopAll(); // what the test files left running
  console.error(`test suite finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(code ?? 1);
});
