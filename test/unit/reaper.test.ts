import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { killByHome } from '../../src/process/index.js';
import { createWorkspaces } from '../../src/workspace/index.js';
import { isAlive, waitGone } from '../support/procs.js';

const base = mkdtempSync(join(tmpdir(), 'olp-reaper-'));
after(() => rmSync(base, { recursive: true, force: true }));

/** A `sleep` in a session of its own (out of any group olp could kill) with the given HOME. */
function escaped(home: string): number {
  const child = spawn('sleep', ['300'], {
    detached: true,
    stdio: 'ignore',
    env: { PATH: process.env.PATH ?? '', HOME: home },
  });
  child.unref();
  return child.pid!;
}

describe('killing by HOME', () => {
  it('kills exactly the processes carrying the home, by exact match or prefix', async () => {
    const a = escaped(join(base, 'run', 'k', 'r1', 'home'));
    const b = escaped(join(base, 'run', 'k', 'r2', 'home'));
    const other = escaped(join(base, 'run-other', 'home'));
    try {
      assert.deepEqual(killByHome({ homes: [join(base, 'run', 'k', 'r1', 'home')] }), [a]);
      assert.deepEqual(await waitGone([a]), []);
      assert.ok(isAlive(b));
      assert.deepEqual(killByHome({ under: [join(base, 'run')] }), [b]);
      assert.deepEqual(await waitGone([b]), []);
      assert.ok(isAlive(other), 'a HOME that only shares a string prefix is not touched');
    } finally {
      process.kill(other, 'SIGKILL');
    }
  });

  it("the start-up sweep stops a leftover run's process that left its process group", async () => {
    const ws = createWorkspaces(join(base, 'state'));
    const w = ws.create({ keyId: 'k1', requestId: 'req1' });
    const pid = escaped(w.home);
    const swept = ws.sweep();
    assert.deepEqual(swept, { workspaces: 1, processes: 1 });
    assert.deepEqual(await waitGone([pid]), []);
  });
});
