// The caches in front of the database (keys, session slots): this process's writes show at once,
// another process's (`olp keys`, `olp sessions` while olp serves) within the watch's few ms.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openStore } from '../../src/store/index.js';
import { WATCH_MS } from '../../src/store/watch.js';

const dir = mkdtempSync(join(tmpdir(), 'olp-store-cache-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const later = () => new Promise((r) => setTimeout(r, WATCH_MS + 5));

describe('store caches', () => {
  const daemon = openStore(dir);
  const cli = openStore(dir); // a second connection, as `olp sessions` or `olp keys` opens
  const { key, token } = daemon.keys.add('mum');

  it("the daemon's own slot writes show at once; another process's rotation within the watch", async () => {
    const [first] = daemon.slots.pool(key.id, 'claude', 3);
    assert.equal(first!.sessionId, null);
    daemon.slots.save({ ...first!, sessionId: 'a1b2c3d4-0000-4000-8000-000000000001', fingerprint: 'f', msgCount: 2, turns: 1 });
    assert.equal(daemon.slots.pool(key.id, 'claude', 3)[0]!.sessionId, 'a1b2c3d4-0000-4000-8000-000000000001');
    // What the pool hands out is a copy: changing it changes nothing.
    daemon.slots.pool(key.id, 'claude', 3)[0]!.sessionId = 'changed';
    assert.equal(daemon.slots.pool(key.id, 'claude', 3)[0]!.sessionId, 'a1b2c3d4-0000-4000-8000-000000000001');

    assert.equal(cli.slots.rotate(key.id), 3);
    await later();
    const rotated = daemon.slots.pool(key.id, 'claude', 3)[0]!;
    assert.deepEqual([rotated.sessionId, rotated.lastReason], [null, 'operator']);
  });

  it("another process's key revocation applies within the watch", async () => {
    assert.equal(daemon.keys.authenticate(token)?.name, 'mum');
    assert.equal(cli.keys.revoke('mum'), true);
    await later();
    assert.equal(daemon.keys.authenticate(token), undefined);
  });
});
