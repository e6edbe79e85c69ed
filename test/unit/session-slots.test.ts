// How a key's session pool grows with its conversations going on at once, and which slot a new
// conversation takes from it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createSessionPool, leastValuable, slotBound, type Lease } from '../../src/sessions/index.js';
import { openStore, type SlotRecord } from '../../src/store/index.js';
import type { Turn } from '../../src/transcript/index.js';

const MIN = 60_000;

function slot(n: number, o: Partial<SlotRecord> = {}): SlotRecord {
  return {
    keyId: 'k',
    backend: 'claude',
    slot: n,
    sessionId: `s${n}`,
    createdAt: 0,
    lastUsedAt: 0,
    turns: 1,
    msgCount: 2,
    fingerprint: `f${n}`,
    systemHash: null,
    dirty: false,
    lastReason: 'initial',
    rotations: 1,
    usageBase: null,
    ...o,
  };
}

describe('which free slot a new conversation takes', () => {
  const t = 100 * MIN;
  const active = 5 * MIN;
  const ago = (ms: number) => ({ lastUsedAt: t - ms });
  const grow = slot(9, { sessionId: null, lastUsedAt: null, fingerprint: null, msgCount: 0 });
  const cases: { name: string; slots: SlotRecord[]; grow?: SlotRecord; want: number }[] = [
    {
      name: 'the one idle longest',
      slots: [slot(0, ago(10_000)), slot(1, ago(40_000)), slot(2, ago(20_000))],
      want: 1,
    },
    {
      name: 'among similarly idle ones (the same power of two of seconds), the shortest history',
      slots: [slot(0, { ...ago(40_000), msgCount: 30 }), slot(1, { ...ago(35_000), msgCount: 4 })],
      want: 1,
    },
    {
      name: 'a much longer idle one before a shorter history',
      slots: [slot(0, { ...ago(4 * MIN), msgCount: 300 }), slot(1, { ...ago(10_000), msgCount: 2 })],
      want: 0,
    },
    {
      name: 'alike in idle time and history: the least recently used',
      slots: [slot(0, { ...ago(33_000), msgCount: 4 }), slot(1, { ...ago(40_000), msgCount: 4 })],
      want: 1,
    },
    {
      name: 'a slot never used before any with a session',
      slots: [slot(0, ago(10 * MIN)), slot(1, { sessionId: null, lastUsedAt: null, fingerprint: null })],
      want: 1,
    },
    {
      name: 'a slot whose last turn failed before an idle one',
      slots: [slot(0, ago(10 * MIN)), slot(1, { ...ago(1000), dirty: true, msgCount: 50 })],
      want: 1,
    },
    {
      name: 'an operator-rotated slot (no session) first',
      slots: [slot(0, ago(3 * MIN)), slot(1, { ...ago(1000), sessionId: null, lastReason: 'operator' })],
      want: 1,
    },
    {
      name: 'a new slot rather than one whose conversation goes on',
      slots: [slot(0, ago(4 * MIN)), slot(1, ago(1000))],
      grow,
      want: 9,
    },
    {
      name: 'a slot idle past the active time rather than a new one',
      slots: [slot(0, ago(1000)), slot(1, ago(active))],
      grow,
      want: 1,
    },
    {
      name: 'an empty slot rather than a new one',
      slots: [slot(0, ago(1000)), slot(1, { sessionId: null, lastUsedAt: null, fingerprint: null })],
      grow,
      want: 1,
    },
    { name: 'none free: the new one', slots: [], grow, want: 9 },
  ];
  for (const c of cases)
    it(c.name, () => {
      assert.equal(leastValuable(c.slots, t, active, c.grow)?.slot, c.want);
      assert.equal(leastValuable([...c.slots].reverse(), t, active, c.grow)?.slot, c.want, 'whatever the order');
    });
  it('none free and no room: none', () => {
    assert.equal(leastValuable([], t, active), undefined);
  });
});

describe('how far a key’s pool grows', () => {
  const cases: [size: number, max: number, concurrency: number | null, want: number][] = [
    [3, 16, null, 16],
    [3, 16, 8, 8],
    [3, 16, 2, 3],
    [3, 16, 40, 16],
    [3, 1, null, 3],
    [5, 3, 4, 5],
  ];
  for (const [size, max, concurrency, want] of cases)
    it(`--session-pool ${size}, --max-session-slots ${max}, --concurrency ${concurrency ?? 'none'}: ${want}`, () => {
      assert.equal(slotBound(size, max, concurrency), want);
    });
});

describe('a key’s pool follows its conversations', () => {
  const dir = mkdtempSync(join(tmpdir(), 'olp-slots-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const store = openStore(dir);
  after(() => store.close());
  let clock = 1_000_000;
  const pool = (maxSlots = 16) =>
    createSessionPool({
      store: store.slots,
      size: 3,
      maxSlots,
      activeMs: 5 * MIN,
      lifetimeMs: 8 * 60 * MIN,
      turnCap: 200,
      idleMs: 120 * MIN,
      waitMs: 0,
      now: () => clock,
    });
  const signal = new AbortController().signal;
  const owner = (keyId: string, concurrency: number | null = null) => ({ keyId, policy: { concurrency } });

  /** Leases a slot for a conversation's next turn; the caller commits and releases. */
  async function take(p: ReturnType<typeof pool>, who: ReturnType<typeof owner>, turns: Turn[]): Promise<Lease> {
    return p.acquire(who, 'claude', { system: null, turns }, signal);
  }
  function finish(lease: Lease, turns: Turn[]): void {
    lease.commit({ ok: true, reply: `reply ${turns.length}` });
    lease.release();
    turns.push({ role: 'assistant', text: `reply ${turns.length}` }, { role: 'user', text: `more ${turns.length}` });
  }

  it('eight conversations going on, one after another: eight slots, and every later turn resumes its own', async () => {
    const { key } = store.keys.add('eight');
    const p = pool();
    const chats: Turn[][] = Array.from({ length: 8 }, (_, i) => [{ role: 'user', text: `chat ${i}` }]);
    for (let round = 0; round < 3; round++)
      for (const turns of chats) {
        clock += 1000;
        const lease = await take(p, owner(key.id), turns);
        if (round === 0) assert.deepEqual([lease.plan.mode, lease.plan.reason], ['fresh', 'initial']);
        else assert.equal(lease.plan.mode, 'resumed');
        finish(lease, turns);
      }
    assert.deepEqual(
      store.slots
        .list()
        .filter((s) => s.keyId === key.id)
        .map((s) => s.slot),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
    // Past the active time, a ninth conversation rotates the least valuable slot instead.
    clock += 6 * MIN;
    assert.equal(p.nextFresh(key.id, 'claude'), 0, 'the spare goes where the next new conversation will');
    const ninth = await take(p, owner(key.id), [{ role: 'user', text: 'chat 8' }]);
    assert.deepEqual([ninth.plan.slot, ninth.plan.mode, ninth.plan.reason], [0, 'fresh', 'divergent']);
    assert.equal(ninth.plan.previousSessionId !== undefined, true, 'the rotated session’s files go as before');
    ninth.release();
  });

  it('all slots busy: a new one, up to the bound; then the wait, and no session', async () => {
    const { key } = store.keys.add('busy');
    const p = pool(5);
    const leases: Lease[] = [];
    for (let i = 0; i < 5; i++) {
      const lease = await take(p, owner(key.id), [{ role: 'user', text: `at once ${i}` }]);
      assert.deepEqual([lease.plan.mode, lease.plan.slot], ['fresh', i]);
      leases.push(lease);
    }
    const sixth = await take(p, owner(key.id), [{ role: 'user', text: 'one too many' }]);
    assert.equal(sixth.plan.mode, 'ephemeral', '--max-session-slots holds');
    for (const l of leases) l.release();
  });

  it("a key's --concurrency bounds its pool, never below --session-pool", async () => {
    const { key } = store.keys.add('two-at-once');
    const p = pool();
    const chats: Turn[][] = Array.from({ length: 5 }, (_, i) => [{ role: 'user', text: `chat ${i}` }]);
    for (const turns of chats) {
      clock += 1000;
      finish(await take(p, owner(key.id, 2), turns), turns);
    }
    assert.equal(store.slots.list().filter((s) => s.keyId === key.id).length, 3);
    // The same key with a higher limit grows on.
    finish(await take(p, owner(key.id, 4), [{ role: 'user', text: 'chat 5' }]), []);
    assert.equal(store.slots.list().filter((s) => s.keyId === key.id).length, 4);
    // Lowered again: the slot above it is not used.
    for (let i = 0; i < 6; i++) {
      clock += 1000;
      const lease = await take(p, owner(key.id, 2), [{ role: 'user', text: `later ${i}` }]);
      assert.ok(lease.plan.slot! < 3);
      finish(lease, []);
    }
  });
});
