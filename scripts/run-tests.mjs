#!/usr/bin/env node
// Runs the compiled test suite with Node's test runner (Node 20 has no glob support in --test).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const testDir = join(root, 'dist', 'test');
// Arguments: substrings of the test files to run (all when none); `--skip=SUBSTRING` leaves some out.
const args = process.argv.slice(2);
const only = args.filter((a) => !a.startsWith('--skip='));
const skipped = args.filter((a) => a.startsWith('--skip=')).map((a) => a.slice('--skip='.length));

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return find(full);
    return name.endsWith('.test.js') ? [full] : [];
  });
}

let files = find(testDir).sort();
if (only.length > 0) files = files.filter((f) => only.some((o) => relative(root, f).includes(o)));
if (skipped.length > 0) files = files.filter((f) => !skipped.some((s) => relative(root, f).includes(s)));
if (files.length === 0) {
  console.error('no test files found; run `npm run build` first');
  process.exit(1);
}
const started = Date.now();
const r = spawnSync(
  process.execPath,
  [
    '--import',
    join(testDir, 'support', 'strict.js'),
    '--test',
    '--test-concurrency=2',
    '--test-reporter=spec',
    '--test-timeout=180000',
    // A file whose tests are done but that something keeps alive ends instead of hanging the suite.
    '--test-force-exit',
    ...files,
  ],
  { stdio: 'inherit', cwd: root },
);
console.error(`test suite finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(r.status ?? 1);
