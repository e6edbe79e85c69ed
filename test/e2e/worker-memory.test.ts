// The live CLIs at rest within the memory budget (--worker-memory) and each key's share of them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestDaemon } from '../support/daemon.js';
import { isAlive, readRecord } from '../support/procs.js';
import { waitFor } from '../support/wait.js';
import { conversation, health, MB, metric, retiredFor } from '../support/worker-memory.js';

describe('live CLIs within the memory budget', () => {
  it('beyond the budget a one-turn worker goes before a continued one and the most recent; it resumes with only the new turn', async () => {
    // Each fake CLI holds ~360 MB: three (1,080 MB) are over a 950 MB budget, two are not.
    const t = await startTestDaemon({
      config: { workers: true, prestart: false, workerMemory: 950, metrics: 'owner' },
      claudeEnv: { FAKE_CLAUDE_MEMORY_MB: '350' },
    });
    try {
      const [c1, c2, c3] = [conversation(t), conversation(t), conversation(t)];
      await c1.say('one');
      const p1 = (await c1.say('two')).pid;
      const p2 = (await c2.say('one')).pid;
      const p3 = (await c3.say('one')).pid;
      await waitFor(() => !isAlive(p2));
      assert.equal(retiredFor(t, p2), 'memory', 'the worker that served one turn, not the most recent, goes');
      assert.ok(isAlive(p1) && isAlive(p3), 'the continued conversation and the most recent one stay warm');

      const h = await health(t);
      assert.equal(h.workers.memory.budgetMb, 950);
      assert.equal(h.workers.memory.keyShareMb, 950, 'one key active: the whole budget');
      assert.equal(h.workers.memory.atRest, 2);
      assert.ok(h.workers.memory.heldMb > 600 && h.workers.memory.heldMb <= 950, `held ${h.workers.memory.heldMb}`);
      assert.ok(h.workers.live.every((w) => (w.pssMb ?? 0) > 300));
      const text = await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${t.token}` } })).text();
      assert.equal(metric(text, 'olp_worker_memory_budget_bytes'), 950 * MB);
      assert.ok(metric(text, 'olp_worker_memory_held_bytes') > 600 * MB);

      assert.equal((await c3.say('two')).pid, p3, 'the most recent conversation goes on warm');
      const resumed = await c2.say('two');
      assert.notEqual(resumed.pid, p2);
      assert.equal(resumed.historyTurns, 1, "the retired worker's conversation resumes from its session");
      assert.equal(readRecord(t.recordDir, resumed.pid).stdin, 'two', 'only the new turn is written');
    } finally {
      await t.close();
    }
  });

  it('a key keeps at most its share: the budget over the keys active, its two most valuable CLIs whatever they hold', async () => {
    // 350 MB and the runtime's own each (~400 MB; more on a later Node), 1,300 MB: one key alone
    // keeps three; with a second key active its share is 650 MB.
    const t = await startTestDaemon({
      config: { workers: true, prestart: false, workerMemory: 1300 },
      claudeEnv: { FAKE_CLAUDE_MEMORY_MB: '350' },
    });
    try {
      const mine = [conversation(t), conversation(t), conversation(t)];
      const pids: number[] = [];
      for (const c of mine) pids.push((await c.say('one')).pid);
      await waitFor(async () => (await health(t)).workers.memory.heldMb > 1000);
      assert.ok(pids.every(isAlive));

      const member = t.daemon.store.keys.add('member', 'member').token;
      const theirs = (await conversation(t, member).say('one')).pid;
      await waitFor(() => !isAlive(pids[0]!));
      assert.equal(retiredFor(t, pids[0]!), 'share', "the key's least recently used goes");
      assert.ok(isAlive(pids[1]!) && isAlive(pids[2]!) && isAlive(theirs), 'each key keeps two');
      const h = await health(t);
      assert.equal(h.workers.memory.activeKeys, 2);
      assert.equal(h.workers.memory.keyShareMb, 650);
    } finally {
      await t.close();
    }
  });

  it('a spare starts only while one more CLI fits the budget', async () => {
    // ~360 MB each: a 550 MB budget holds the conversation's worker but not a spare beside it
    // (nor one reckoned at 300 MB, a worker not measured yet).
    const t = await startTestDaemon({
      config: { workers: true, prestart: true, workerMemory: 550 },
      claudeEnv: { FAKE_CLAUDE_MEMORY_MB: '350' },
    });
    try {
      const c = conversation(t);
      const first = await c.say('one');
      // The second turn is warm on the first one's worker: the spare, if one were started after
      // the first turn, would have been by now.
      assert.equal((await c.say('two')).pid, first.pid);
      const h = await health(t);
      assert.deepEqual(
        h.workers.live.map((w) => w.state),
        ['idle'],
      );
      assert.equal(t.logs.filter((l) => l.event === 'spare_started').length, 0);
    } finally {
      await t.close();
    }
  });

  it('a key that goes on with its conversation keeps no spare: it is stopped after two warm turns, and none starts again', async () => {
    // A budget that holds every CLI here even reckoned at 300 MB each before it is measured: the
    // rule under test is the key's, not the budget's.
    const t = await startTestDaemon({ config: { workers: true, prestart: true, workerMemory: 4000 } });
    try {
      const c = conversation(t);
      await c.say('one');
      await waitFor(() => t.logs.some((l) => l.event === 'spare_started'));
      const spare = Number(t.logs.find((l) => l.event === 'spare_started')!.pid);
      await c.say('two');
      assert.ok(isAlive(spare), 'one warm turn: the key may still begin a new conversation');
      await c.say('three');
      await waitFor(() => !isAlive(spare));
      assert.equal(retiredFor(t, spare), 'unused');
      await c.say('four');
      await c.say('five');
      assert.equal(t.logs.filter((l) => l.event === 'spare_started').length, 1);
      // A new conversation (cold: no spare waits) starts one again.
      await conversation(t).say('a new one');
      await waitFor(() => t.logs.filter((l) => l.event === 'spare_started').length === 2);
    } finally {
      await t.close();
    }
  });

  it("beyond the budget a spare goes first, before any conversation's worker", async () => {
    // ~360 MB each, a 950 MB budget: a worker and a spare fit, a second key's worker beside them does not.
    const t = await startTestDaemon({
      config: { workers: true, prestart: true, workerMemory: 950 },
      claudeEnv: { FAKE_CLAUDE_MEMORY_MB: '350' },
    });
    try {
      const mine = (await conversation(t).say('one')).pid;
      await waitFor(async () => (await health(t)).workers.live.some((w) => w.state === 'spare' && w.pssMb !== null));
      const spare = Number(t.logs.find((l) => l.event === 'spare_started')!.pid);
      const member = t.daemon.store.keys.add('member', 'member').token;
      const theirs = (await conversation(t, member).say('one')).pid;
      await waitFor(() => !isAlive(spare));
      assert.equal(retiredFor(t, spare), 'memory');
      assert.ok(isAlive(mine) && isAlive(theirs), "both keys' conversations stay warm");
    } finally {
      await t.close();
    }
  });
});
