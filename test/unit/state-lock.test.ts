// One olp per state dir: the lock, who holds it, and that it is gone with its holder.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { findLockHolder, lockStateDir, StateDirLocked } from '../../src/store/index.js';

const base = mkdtempSync(join(tmpdir(), 'olp-lock-'));
after(() => rmSync(base, { recursive: true, force: true }));

describe('the state dir lock', () => {
  it('a second taker is refused with the holder; released, it can be taken again', () => {
    const dir = join(base, 'a');
    assert.equal(findLockHolder(dir), null);
    const lock = lockStateDir(dir);
    lock.publish({ port: 8080, url: 'http://127.0.0.1:8080', version: '1.2.3' });
    assert.throws(
      () => lockStateDir(dir),
      (err: unknown) =>
        err instanceof StateDirLocked &&
        err.holder?.pid === process.pid &&
        err.holder.port === 8080 &&
        /in use by another olp \(pid \d+, port 8080: http:\/\/127\.0\.0\.1:8080\/v1\)/.test(err.message),
    );
    assert.equal(findLockHolder(dir)?.holder?.version, '1.2.3');
    lock.release();
    assert.equal(existsSync(join(dir, 'serve.json')), false);
    assert.equal(findLockHolder(dir), null);
    lockStateDir(dir).release();
  });

  it('a holder keeps the lock with its handle dropped; killed with SIGKILL, it leaves none behind (the kernel drops it)', async () => {
    const dir = join(base, 'killed');
    const lockModule = new URL('../../src/store/index.js', import.meta.url).href;
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        '--input-type=module',
        '-e',
        // The handle is dropped and the garbage collected: the lock is held until release or exit.
        `const { lockStateDir } = await import(${JSON.stringify(lockModule)}); lockStateDir(${JSON.stringify(dir)}); gc(); await new Promise((r) => setTimeout(r, 20)); gc(); console.log('held'); setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      await new Promise((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
      assert.equal(findLockHolder(dir)?.holder?.pid, child.pid);
      assert.throws(() => lockStateDir(dir), StateDirLocked);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    assert.equal(findLockHolder(dir), null, 'a stale serve.json is not read as a holder');
    lockStateDir(dir).release();
  });
});
