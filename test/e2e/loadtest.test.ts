// The load-test script works end to end (a smoke run; the figures themselves are not asserted).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';
import { ROOT } from '../support/paths.js';

it('npm run loadtest: a short mixed run reports figures and finds nothing left behind', () => {
  const r = spawnSync(
    process.execPath,
    [
      join(ROOT, 'dist/scripts/loadtest.js'),
      '--requests',
      '24',
      '--concurrency',
      '6',
      '--abort-ratio',
      '0.3',
      '--json',
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as {
    requests: number;
    statuses: Record<string, number>;
    survivingCliProcesses: number;
    leftoverWorkspaces: number;
    olpPeakRssMb: number;
    latencyMs: { p50: number };
  };
  assert.equal(out.requests, 24);
  assert.deepEqual(
    Object.keys(out.statuses).filter((k) => k !== '200' && k !== 'aborted'),
    [],
  );
  assert.equal(out.survivingCliProcesses, 0);
  assert.equal(out.leftoverWorkspaces, 0);
  assert.ok(out.olpPeakRssMb > 0 && out.latencyMs.p50 > 0);
});

it('refuses a target that is not on loopback', () => {
  const r = spawnSync(
    process.execPath,
    [join(ROOT, 'dist/scripts/loadtest.js'), '--target', 'http://10.0.0.1:8787/v1', '--key', 'x', '--requests', '1'],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 2);
  assert.match(r.stderr, /only loopback targets/);
});
