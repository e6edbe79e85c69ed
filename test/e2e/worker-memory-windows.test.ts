// The memory budget over time: memory pressure, the 3-minute window of a key's spare, the
// 10-minute window of the keys that share the budget, and the 20 s a key's CLIs beyond its session
// slots are kept. The pool's clock and its reading of memory pressure are the test's; the CLIs
// are the fake's, measured from /proc as in production.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { isAlive } from '../support/procs.js';
import { waitFor } from '../support/wait.js';
import { conversation, health, retiredFor } from '../support/worker-memory.js';

/** A clock that runs with the real one, and can be set forward. */
function clock() {
  let ahead = 0;
  return { now: () => Date.now() + ahead, forward: (ms: number) => (ahead += ms) };
}

/** Resolves once every given CLI has been measured at rest (the budget is applied right after). */
async function measured(t: TestDaemon, pids: number[]): Promise<void> {
  await waitFor(
    async () => {
      const live = (await health(t)).workers.live;
      return pids.every((p) => live.some((w) => w.pid === p && w.pssMb !== null));
    },
    undefined,
    `CLIs ${pids.join(', ')} measured`,
  );
}

const spares = (t: TestDaemon) => t.logs.filter((l) => l.event === 'spare_started');

describe('the memory budget over time', () => {
  it("under memory pressure spares go and only each key's most recent conversation stays; no spare starts", async () => {
    let pressed = false;
    const t = await startTestDaemon({
      config: { workers: true, prestart: true, workerMemory: 4000 },
      claudeEnv: { FAKE_CLAUDE_MEMORY_MB: '50' },
      workerPool: { pressure: () => pressed, sampleMs: 100 },
    });
    try {
      const [c1, c2] = [conversation(t), conversation(t)];
      await c1.say('one');
      const p1 = (await c1.say('two')).pid;
      const p2 = (await c2.say('one')).pid;
      await waitFor(async () => (await health(t)).workers.live.some((w) => w.state === 'spare'), undefined, 'a spare');
      const spare = Number(spares(t).at(-1)!.pid);
      assert.ok([p1, p2, spare].every(isAlive), 'within the budget all stay');

      pressed = true;
      await waitFor(() => !isAlive(spare) && !isAlive(p1), undefined, 'the spare and the older conversation gone');
      assert.equal(retiredFor(t, spare), 'memory');
      assert.equal(retiredFor(t, p1), 'memory', 'a conversation that went on, but not the most recent, goes');
      assert.ok(isAlive(p2), "the key's most recent conversation stays warm");
      const resumed = await c1.say('three');
      assert.notEqual(resumed.pid, p1);
      assert.equal(resumed.historyTurns, 2, 'the retired conversation resumes from its session');

      // A new conversation would leave a spare; under pressure none starts. Its second turn is
      // warm on its first one's worker: a spare started after the first turn would have been by now.
      const before = spares(t).length;
      const c3 = conversation(t);
      const p3 = (await c3.say('one')).pid;
      assert.equal((await c3.say('two')).pid, p3);
      assert.equal(spares(t).length, before, 'no spare under pressure');
    } finally {
      await t.close();
    }
  });

  it("a key's spare stops once the key has been quiet for 3 minutes; its conversation stays", async () => {
    const time = clock();
    const t = await startTestDaemon({
      config: { workers: true, prestart: true },
      workerPool: { now: time.now, sampleMs: 100 },
    });
    try {
      const mine = (await conversation(t).say('one')).pid;
      await waitFor(async () => (await health(t)).workers.live.some((w) => w.state === 'spare'), undefined, 'a spare');
      const spare = Number(spares(t).at(-1)!.pid);
      await measured(t, [mine, spare]);
      assert.ok(isAlive(spare), 'a key active within 3 minutes keeps its spare');
      time.forward(3 * 60_000 + 1000);
      await waitFor(() => !isAlive(spare), undefined, 'the spare gone');
      assert.equal(retiredFor(t, spare), 'unused');
      assert.ok(isAlive(mine), "the key's conversation stays warm");
    } finally {
      await t.close();
    }
  });

  it('a key quiet for 10 minutes no longer counts in the shares: the one still active keeps more', async () => {
    // ~300 MB each (250 MB and the runtime's own), 1,500 MB: with two keys active a key's share is
    // 750 MB, two CLIs; with one, three of its own and the quiet key's one fit the budget.
    const time = clock();
    const t = await startTestDaemon({
      config: { workers: true, prestart: false, workerMemory: 1500 },
      claudeEnv: { FAKE_CLAUDE_MEMORY_MB: '250' },
      workerPool: { now: time.now, sampleMs: 100 },
    });
    try {
      const member = t.daemon.store.keys.add('member', 'member').token;
      const theirs = (await conversation(t, member).say('one')).pid;
      const pids: number[] = [];
      for (let i = 0; i < 3; i++) pids.push((await conversation(t).say('one')).pid);
      await waitFor(() => !isAlive(pids[0]!), undefined, "the key's third CLI beyond its share gone");
      assert.equal(retiredFor(t, pids[0]!), 'share');
      assert.equal((await health(t)).workers.memory.activeKeys, 2);

      time.forward(10 * 60_000 + 1000);
      pids.push((await conversation(t).say('one')).pid);
      await measured(t, pids.slice(1));
      const h = await health(t);
      assert.equal(h.workers.memory.activeKeys, 1);
      assert.equal(h.workers.memory.keyShareMb, 1500, 'the one active key: the whole budget');
      assert.ok([...pids.slice(1), theirs].every(isAlive), "three of the active key's and the quiet key's stay");
    } finally {
      await t.close();
    }
  });

  it("a key's CLIs beyond its session slots and a spare go after 20 s idle; its two most valuable stay", async () => {
    // One session slot: a key keeps two CLIs at rest for long (a slot's and a spare's).
    const time = clock();
    const t = await startTestDaemon({
      config: { workers: true, prestart: false, sessionPool: 1 },
      workerPool: { now: time.now, sampleMs: 100 },
    });
    try {
      const [c1, c2, c3] = [conversation(t), conversation(t), conversation(t)];
      const p1 = (await c1.say('one')).pid;
      const p2 = (await c2.say('one')).pid;
      const p3 = (await c3.say('one')).pid;
      await measured(t, [p1, p2, p3]);
      assert.ok([p1, p2, p3].every(isAlive), 'for 20 s a key keeps conversations going on at once');
      time.forward(20_000);
      await waitFor(() => !isAlive(p1), undefined, 'the oldest gone');
      assert.equal(retiredFor(t, p1), 'share');
      assert.ok(isAlive(p2) && isAlive(p3));
    } finally {
      await t.close();
    }
  });
});
