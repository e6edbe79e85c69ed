// Which rotations fork the CLI's session, how a re-sent conversation is fitted to the model's
// window, and how the token rate is learnt from the provider's counts.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ProxyError } from '../../src/errors/index.js';
import { createSessionPool, type Lease } from '../../src/sessions/index.js';
import { openStore } from '../../src/store/index.js';
import {
  createTokenCalibration,
  fitContext,
  TRIM_FRACTION,
  tryFitContext,
  type Transcript,
  type Turn,
} from '../../src/transcript/index.js';

const dir = mkdtempSync(join(tmpdir(), 'olp-rotation-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('rotation: fork or re-send', () => {
  const store = openStore(dir);
  let clock = 1_000_000;
  const pool = (forks: boolean, turnCap = 2) =>
    createSessionPool({
      store: store.slots,
      size: 1,
      maxSlots: 1,
      activeMs: 300_000,
      lifetimeMs: 3_600_000,
      turnCap,
      idleMs: 600_000,
      waitMs: 0,
      forks: (b) =>
        forks && b === 'claude' ? { keepsSource: false } : forks && b === 'codex' ? { keepsSource: true } : undefined,
      now: () => clock,
    });
  const signal = new AbortController().signal;
  const owner = (keyId: string) => ({ keyId, policy: { concurrency: null } });

  /** Runs one turn of a conversation through the pool: the plan, then the lease commits `reply` (or a failure). */
  async function step(
    p: ReturnType<typeof pool>,
    keyId: string,
    turns: Turn[],
    system: string | null,
    ok = true,
    backend = 'claude',
  ): Promise<Lease['plan']> {
    const lease = await p.acquire(owner(keyId), backend, { system, turns }, signal);
    const plan = lease.plan;
    lease.commit(ok ? { ok: true, reply: `reply ${turns.length}` } : { ok: false, aborted: false });
    lease.release();
    if (ok) turns.push({ role: 'assistant', text: `reply ${turns.length}` });
    return plan;
  }

  it('past the turn cap, the lifetime or the idle gap the slot forks, sending only the new turns; a changed system prompt re-sends', async () => {
    const { key } = store.keys.add('forks');
    const p = pool(true);
    const turns: Turn[] = [{ role: 'user', text: 'one' }];
    const first = await step(p, key.id, turns, 'sys');
    assert.equal(first.mode, 'fresh');
    turns.push({ role: 'user', text: 'two' });
    assert.equal((await step(p, key.id, turns, 'sys')).mode, 'resumed');
    turns.push({ role: 'user', text: 'three' });
    const capped = await step(p, key.id, turns, 'sys');
    assert.deepEqual(
      [capped.mode, capped.reason, capped.forkOf, capped.text],
      ['fresh', 'turn_cap', first.sessionId, 'three'],
    );
    assert.notEqual(capped.sessionId, first.sessionId);
    assert.equal(
      capped.previousSessionId,
      undefined,
      'the forked session’s files are not deleted before the fork reads them',
    );
    turns.push({ role: 'user', text: 'four' });
    const changed = await step(p, key.id, turns, 'another system prompt');
    assert.deepEqual(
      [changed.reason, changed.forkOf, changed.previousSessionId],
      ['system_changed', undefined, capped.sessionId],
    );
    assert.match(changed.text, /<conversation>[\s\S]*four/);
    clock += 700_000;
    turns.push({ role: 'user', text: 'five' });
    const idle = await step(p, key.id, turns, 'another system prompt');
    assert.deepEqual([idle.reason, idle.forkOf], ['idle', changed.sessionId]);
    clock += 3_600_001;
    turns.push({ role: 'user', text: 'six' });
    const old = await step(p, key.id, turns, 'another system prompt');
    assert.deepEqual([old.reason, old.forkOf], ['lifetime', idle.sessionId]);
  });

  it('after a failed turn, for a conversation no slot holds, and where the CLI cannot fork, the whole conversation is re-sent', async () => {
    const { key } = store.keys.add('no-forks');
    const p = pool(true, 100);
    const turns: Turn[] = [{ role: 'user', text: 'one' }];
    await step(p, key.id, turns, null);
    turns.push({ role: 'user', text: 'two' });
    await step(p, key.id, turns, null, false);
    const failed = await step(p, key.id, turns, null);
    assert.deepEqual([failed.mode, failed.reason, failed.forkOf], ['fresh', 'failed', undefined]);
    assert.match(failed.text, /<conversation>[\s\S]*one[\s\S]*two/);
    const divergent = await step(p, key.id, [{ role: 'user', text: 'something else' }], null);
    assert.deepEqual([divergent.reason, divergent.forkOf], ['divergent', undefined]);
    // A CLI that cannot fork: the turn cap re-sends.
    const q = pool(true);
    const c: Turn[] = [{ role: 'user', text: 'one' }];
    for (const text of ['two', 'three']) {
      await step(q, key.id, c, null, true, 'other');
      c.push({ role: 'user', text });
    }
    const capped = await step(q, key.id, c, null, true, 'other');
    assert.deepEqual([capped.reason, capped.forkOf], ['turn_cap', undefined]);
    assert.match(capped.text, /<conversation>/);
  });

  it('codex: forks past the turn cap from the running usage total and keeps the sources; the next whole re-send resets them all', async () => {
    const { key } = store.keys.add('codex');
    const p = pool(true);
    const c: Turn[] = [{ role: 'user', text: 'one' }];
    const commit = async (system: string | null, total: number) => {
      const lease = await p.acquire(owner(key.id), 'codex', { system, turns: c }, signal);
      const plan = lease.plan;
      lease.commit({
        ok: true,
        reply: `reply ${c.length}`,
        rawUsage: { input_tokens: total },
        sessionId: `0199aaaa-0000-7000-8000-00000000000${c.length}`,
      });
      lease.release();
      c.push({ role: 'assistant', text: `reply ${c.length}` });
      return plan;
    };
    await commit(null, 100);
    c.push({ role: 'user', text: 'two' });
    await commit(null, 200);
    c.push({ role: 'user', text: 'three' });
    const capped = await commit(null, 300);
    assert.deepEqual(
      [capped.reason, capped.forkOf, capped.usageBase],
      ['turn_cap', '0199aaaa-0000-7000-8000-000000000001', { input_tokens: 200 }],
    );
    c.push({ role: 'user', text: 'four' });
    const changed = await commit('new instructions', 100);
    assert.deepEqual([changed.reason, changed.forkOf], ['system_changed', undefined]);
    assert.match(changed.text, /<conversation>/);
    assert.equal(changed.previousSessionId, undefined, 'a fork that reads its sources: the whole store goes');
  });

  it('a re-sent conversation that does not fit fails before any slot is leased; a continued one is not held to the budget', async () => {
    const { key } = store.keys.add('budget');
    const p = pool(true, 100);
    const turns: Turn[] = [{ role: 'user', text: 'x'.repeat(4000) }];
    await step(p, key.id, turns, null);
    turns.push({ role: 'user', text: 'y'.repeat(4000) });
    const full: Transcript = { system: null, turns };
    const whole = tryFitContext(full, 1000, 'refuse');
    assert.equal(whole.ok, false);
    // The slot holds the conversation: it resumes, the CLI carrying the history.
    const lease = await p.acquire(owner(key.id), 'claude', full, signal, whole);
    assert.equal(lease.plan.mode, 'resumed');
    lease.release();
    // A conversation no slot holds must be sent whole: refused, and the slot stays free.
    await assert.rejects(
      p.acquire(
        owner(key.id),
        'claude',
        { system: null, turns: [{ role: 'user', text: 'z'.repeat(8000) }] },
        signal,
        tryFitContext({ system: null, turns: [{ role: 'user', text: 'z'.repeat(8000) }] }, 1000, 'refuse'),
      ),
      (err: unknown) => err instanceof ProxyError && err.code === 'context_length_exceeded',
    );
    const again = await p.acquire(owner(key.id), 'claude', full, signal, whole);
    assert.equal(again.plan.mode, 'resumed', 'the slot was not leased by the refused request');
    again.release();
  });
});

describe('fitting a re-sent conversation', () => {
  const turns: Turn[] = Array.from({ length: 20 }, (_, i) => ({
    role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
    text: `${i} ${'w'.repeat(996)}`,
  }));

  it(`trim leaves the conversation at ${TRIM_FRACTION * 100} % of the window, not the whole window`, () => {
    // 20,000 characters: 5,000 tokens at four a token; the window 4,000.
    const fit = fitContext({ system: null, turns }, 4000, 'trim');
    const chars = fit.turns.reduce((n, t) => n + t.text.length, 0);
    assert.ok(chars / 4 <= 4000 * TRIM_FRACTION, `${chars / 4} tokens`);
    assert.ok(chars / 4 > 4000 * TRIM_FRACTION - 500, 'no more than a turn pair below the margin');
  });

  it('the calibrated rate decides: at two characters a token the same conversation is trimmed twice as far', () => {
    const atFour = fitContext({ system: null, turns }, 8000, 'trim');
    assert.equal(atFour.omitted, 0, 'fits at four characters a token');
    const atTwo = fitContext({ system: null, turns }, 8000, 'trim', 2);
    const chars = atTwo.turns.reduce((n, t) => n + t.text.length, 0);
    assert.ok(atTwo.omitted > 0 && chars / 2 <= 8000 * TRIM_FRACTION);
    assert.throws(
      () => fitContext({ system: null, turns }, 8000, 'refuse', 2),
      (err: unknown) => err instanceof ProxyError && err.code === 'context_length_exceeded',
    );
  });
});

describe('token calibration', () => {
  it('learns characters per token per key, backend and model from whole conversations; a continued session only lowers it', () => {
    const c = createTokenCalibration();
    assert.equal(c.charsPerToken('k', 'claude', 'sonnet'), 4, 'four until a turn reports');
    c.observe('k', 'claude', 'sonnet', { chars: 50_000, tokens: 25_000, whole: true });
    assert.equal(c.charsPerToken('k', 'claude', 'sonnet'), 2);
    assert.equal(c.charsPerToken('k', 'claude', 'haiku'), 4, 'per model');
    assert.equal(c.charsPerToken('other', 'claude', 'sonnet'), 4, 'per key');
    // A compacted session reports fewer tokens than the conversation has: it never raises the rate.
    c.observe('k', 'claude', 'sonnet', { chars: 200_000, tokens: 20_000, whole: false });
    assert.equal(c.charsPerToken('k', 'claude', 'sonnet'), 2);
    c.observe('k', 'claude', 'sonnet', { chars: 60_000, tokens: 40_000, whole: false });
    assert.equal(c.charsPerToken('k', 'claude', 'sonnet'), 1.5);
    // A whole conversation's count is exact: it replaces the rate.
    c.observe('k', 'claude', 'sonnet', { chars: 90_000, tokens: 30_000, whole: true });
    assert.equal(c.charsPerToken('k', 'claude', 'sonnet'), 3);
    // Too short to tell the text from the CLI's own overhead, or out of any plausible range: ignored.
    c.observe('k', 'claude', 'sonnet', { chars: 1000, tokens: 5000, whole: true });
    c.observe('k', 'claude', 'sonnet', { chars: 90_000, tokens: 900_000, whole: true });
    assert.equal(c.charsPerToken('k', 'claude', 'sonnet'), 3);
  });
});
