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
const turnOfTheLoop = () => new Promise((r) => setImmediate(() => setImmediate(() => setImmediate(r))));

describe('store caches', () => {
  const daemon = openStore(dir);
  const cli = openStore(dir); // a second connection, as `olp sessions` or `olp keys` opens
  const { key, token } = daemon.keys.add('mum');

  it("the daemon's own slot writes show at once; another process's rotation within the watch", async () => {
    const [first] = daemon.slots.pool(key.id, 'claude', 3);
    assert.equal(first!.sessionId, null);
    daemon.slots.save({
      ...first!,
      sessionId: 'a1b2c3d4-0000-4000-8000-000000000001',
      fingerprint: 'f',
      msgCount: 2,
      turns: 1,
    });
    assert.equal(daemon.slots.pool(key.id, 'claude', 3)[0]!.sessionId, 'a1b2c3d4-0000-4000-8000-000000000001');
    // What the pool hands out is a copy: changing it changes nothing.
    daemon.slots.pool(key.id, 'claude', 3)[0]!.sessionId = 'changed';
    assert.equal(daemon.slots.pool(key.id, 'claude', 3)[0]!.sessionId, 'a1b2c3d4-0000-4000-8000-000000000001');

    await turnOfTheLoop(); // the save is written behind (see the next test)
    assert.equal(cli.slots.rotate(key.id), 3);
    await later();
    const rotated = daemon.slots.pool(key.id, 'claude', 3)[0]!;
    assert.deepEqual([rotated.sessionId, rotated.lastReason], [null, 'operator']);
  });

  it("a slot's state is written behind: with the next ledger row, or a loop turn later, or before any other write of the slots", async () => {
    const other = (slot: number) =>
      cli.slots.list().find((r) => r.keyId === key.id && r.backend === 'codex' && r.slot === slot)!;
    const pool = daemon.slots.pool(key.id, 'codex', 2);
    // With the request's ledger row, in its transaction.
    daemon.slots.save({ ...pool[0]!, sessionId: 'thread-aaaa-0001', turns: 1 });
    assert.equal(other(0).sessionId, null, 'not written yet');
    daemon.usage.record({
      requestId: 'req_behind',
      ts: Date.now(),
      keyId: key.id,
      keyName: 'mum',
      backend: 'codex',
      model: 'gpt-5.5',
      servedModel: 'gpt-5.5',
      outcome: 'ok',
      errorCode: null,
      status: 200,
      queueMs: 0,
      ttftMs: 1,
      durationMs: 2,
      promptTokens: 1,
      completionTokens: 1,
      cachedTokens: 0,
      reasoningTokens: 0,
      rawUsage: null,
      partial: false,
      costUsd: null,
      sessionId: 'thread-aaaa-0001',
      sessionMode: 'fresh',
      rotationReason: 'initial',
    });
    assert.equal(other(0).sessionId, 'thread-aaaa-0001');
    // Alone: a turn of the loop later.
    daemon.slots.save({ ...pool[1]!, sessionId: 'thread-bbbb-0002', turns: 1 });
    await turnOfTheLoop();
    assert.equal(other(1).sessionId, 'thread-bbbb-0002');
    // Before the next lease of a slot, which marks it in the table.
    daemon.slots.save({ ...pool[1]!, sessionId: 'thread-cccc-0003', turns: 2 });
    daemon.slots.markLeased(pool[1]!, true);
    assert.equal(other(1).sessionId, 'thread-cccc-0003');
    daemon.slots.markLeased(pool[1]!, false);
    // A slot write that fails does not take the ledger row along (the slot stays marked leased).
    daemon.slots.save({ ...pool[0]!, turns: { not: 'a number' } as unknown as number });
    daemon.usage.record({
      requestId: 'req_behind_2',
      ts: Date.now(),
      keyId: key.id,
      keyName: 'mum',
      backend: 'codex',
      model: 'gpt-5.5',
      servedModel: 'gpt-5.5',
      outcome: 'ok',
      errorCode: null,
      status: 200,
      queueMs: 0,
      ttftMs: 1,
      durationMs: 2,
      promptTokens: 1,
      completionTokens: 1,
      cachedTokens: 0,
      reasoningTokens: 0,
      rawUsage: null,
      partial: false,
      costUsd: null,
      sessionId: null,
      sessionMode: 'fresh',
      rotationReason: 'initial',
    });
    assert.equal(cli.usage.get('req_behind_2')?.request_id, 'req_behind_2', 'the ledger row is written');
    // And when the store closes.
    const last = openStore(dir);
    const [slot] = last.slots.pool(key.id, 'codex', 2);
    last.slots.save({ ...slot!, sessionId: 'thread-dddd-0004', turns: 3 });
    last.close();
    assert.equal(other(0).sessionId, 'thread-dddd-0004');
  });

  it("another process's key revocation applies within the watch", async () => {
    assert.equal(daemon.keys.authenticate(token)?.name, 'mum');
    assert.equal(cli.keys.revoke('mum'), true);
    await later();
    assert.equal(daemon.keys.authenticate(token), undefined);
  });
});
