// The one wait queue under admission and the process cap: the order its policies serve in, and how a wait
// ends (served, aborted, timed out, refused for the bound) without leaving a waiter, a timer or a listener.
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { ClientAbortedError } from '../../src/errors/index.js';
import { createWaitQueue, fewestHeldFirst, roundRobin, type WaitQueue } from '../../src/queue/index.js';

const LONG = 60_000;
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

/** Joins a waiter that resolves with its own name, recording the order the waiters are served in. */
function join(q: WaitQueue, served: string[], key: string, name: string, signal = new AbortController().signal) {
  return q.wait({
    key,
    signal,
    timeoutMs: LONG,
    timeoutError: () => new Error(`${name} timed out`),
    grant: () => {
      served.push(name);
      return name;
    },
  });
}

function serveAll(q: WaitQueue): void {
  while (q.serveNext() !== undefined);
}

describe('wait queue: round-robin over keys', () => {
  it("serves keys in turns, so one key's burst delays another key's waiter by one turn at most", async () => {
    const q = createWaitQueue({ policy: roundRobin() });
    const served: string[] = [];
    const waits = ['a1', 'a2', 'a3', 'b1', 'c1'].map((n) => join(q, served, n[0]!, n));
    serveAll(q);
    assert.deepEqual(served, ['a1', 'b1', 'c1', 'a2', 'a3']);
    assert.deepEqual(await Promise.all(waits), ['a1', 'a2', 'a3', 'b1', 'c1']);
  });

  it('puts a key served to the back, behind a key that came meanwhile', async () => {
    const q = createWaitQueue({ policy: roundRobin() });
    const served: string[] = [];
    const waits = [join(q, served, 'a', 'a1'), join(q, served, 'a', 'a2')];
    assert.equal(q.serveNext(), 'a');
    waits.push(join(q, served, 'b', 'b1'), join(q, served, 'b', 'b2'));
    serveAll(q);
    assert.deepEqual(served, ['a1', 'a2', 'b1', 'b2']);
    await Promise.all(waits);
  });

  it("forgets a key's turn when its last waiter leaves unserved; it comes back at the end", async () => {
    const q = createWaitQueue({ policy: roundRobin() });
    const served: string[] = [];
    const leaving = new AbortController();
    const gone = join(q, served, 'a', 'a1', leaving.signal);
    const waits = [join(q, served, 'b', 'b1'), join(q, served, 'b', 'b2')];
    leaving.abort();
    await assert.rejects(gone, ClientAbortedError);
    waits.push(join(q, served, 'a', 'a2'));
    serveAll(q);
    assert.deepEqual(served, ['b1', 'a2', 'b2']);
    await Promise.all(waits);
  });
});

describe('wait queue: fewest held first', () => {
  it('serves the waiting key holding the fewest, the earliest of those, asking again at each pick', async () => {
    const holding = new Map([['x', 2]]);
    const q = createWaitQueue({ policy: fewestHeldFirst((k) => holding.get(k) ?? 0) });
    const served: string[] = [];
    const take = (key: string, name: string) =>
      q.wait({
        key,
        signal: new AbortController().signal,
        timeoutMs: LONG,
        timeoutError: () => new Error('timed out'),
        grant: () => {
          served.push(name);
          holding.set(key, (holding.get(key) ?? 0) + 1);
        },
      });
    const waits = [take('x', 'x1'), take('y', 'y1'), take('y', 'y2'), take('z', 'z1'), take('z', 'z2')];
    serveAll(q);
    // y1 (0) → z1 (0, y now 1) → y2 (1, earlier than z2) → z2 (1) → x1 (2).
    assert.deepEqual(served, ['y1', 'z1', 'y2', 'z2', 'x1']);
    await Promise.all(waits);
  });
});

describe('wait queue: how a wait ends', () => {
  it('counts waiters per key and in all, and gives the grant made at the moment of serving', async () => {
    const q = createWaitQueue({ policy: roundRobin() });
    const served: string[] = [];
    assert.equal(q.serveNext(), undefined);
    const waits = [join(q, served, 'a', 'a1'), join(q, served, 'a', 'a2'), join(q, served, 'b', 'b1')];
    assert.equal(q.size, 3);
    assert.equal(q.waitingFor('a'), 2);
    assert.equal(q.waitingFor('c'), 0);
    assert.deepEqual(q.keys().sort(), ['a', 'b']);
    assert.deepEqual(served, [], 'nothing is granted before it is served');
    serveAll(q);
    assert.equal(q.size, 0);
    assert.deepEqual(q.keys(), []);
    assert.deepEqual(await Promise.all(waits), ['a1', 'a2', 'b1']);
  });

  it("ends a wait after its timeout with the waiter's own error, taking the waiter out first", async () => {
    const q = createWaitQueue({ policy: roundRobin() });
    const events: string[] = [];
    const stays = join(q, [], 'a', 'a1');
    const late = q.wait({
      key: 'b',
      signal: new AbortController().signal,
      timeoutMs: 1,
      timeoutError: () => new Error('b waited too long'),
      grant: () => 'b',
      cancelled: () => events.push(`cancelled with ${q.size} waiting`),
    });
    await assert.rejects(late, /b waited too long/);
    assert.deepEqual(events, ['cancelled with 1 waiting']);
    assert.equal(q.waitingFor('b'), 0);
    assert.equal(q.serveNext(), 'a');
    assert.equal(await stays, 'a1');
  });

  it('ends a wait with ClientAbortedError when its signal fires, already fired or while it waits', async () => {
    const q = createWaitQueue({ policy: roundRobin() });
    let cancelled = 0;
    const request = (signal: AbortSignal) => ({
      key: 'a',
      signal,
      timeoutMs: LONG,
      timeoutError: () => new Error('timed out'),
      grant: () => 'a',
      cancelled: () => cancelled++,
    });
    await assert.rejects(q.wait(request(AbortSignal.abort())), ClientAbortedError);
    assert.equal(q.size, 0, 'an aborted signal never joins');
    const client = new AbortController();
    const waiting = q.wait(request(client.signal));
    assert.equal(q.size, 1);
    client.abort();
    await assert.rejects(waiting, ClientAbortedError);
    assert.equal(q.size, 0);
    assert.equal(cancelled, 2);
  });

  it('refuses a waiter beyond its bound with its own error, and says when it is full', async () => {
    const q = createWaitQueue({ policy: roundRobin(), bound: 2 });
    const waits = [join(q, [], 'a', 'a1'), join(q, [], 'b', 'b1')];
    assert.equal(q.full, true);
    let cancelled = 0;
    const refused = (fullError?: () => Error) =>
      q.wait({
        key: 'c',
        signal: new AbortController().signal,
        timeoutMs: LONG,
        timeoutError: () => new Error('timed out'),
        fullError,
        grant: () => 'c',
        cancelled: () => cancelled++,
      });
    await assert.rejects(
      refused(() => new Error('no room to wait')),
      /no room to wait/,
    );
    await assert.rejects(refused(), RangeError);
    assert.equal(cancelled, 2);
    assert.equal(q.size, 2);
    assert.equal(q.serveNext(), 'a');
    assert.equal(q.full, false);
    serveAll(q);
    await Promise.all(waits);
    assert.equal(createWaitQueue({ policy: roundRobin() }).full, false, 'no bound by default');
  });

  it('leaves no timer and no abort listener behind, however the wait ends', async () => {
    const before = timers();
    const q = createWaitQueue({ policy: roundRobin() });
    const signals = [new AbortController(), new AbortController(), new AbortController()];
    const [servedOne, abortedOne, timedOut] = signals;
    const served = join(q, [], 'a', 'a1', servedOne!.signal);
    const aborted = join(q, [], 'b', 'b1', abortedOne!.signal);
    const late = q.wait({
      key: 'c',
      signal: timedOut!.signal,
      timeoutMs: 1,
      timeoutError: () => new Error('late'),
      grant: () => 'c',
    });
    assert.equal(timers(), before + 3);
    for (const c of signals) assert.equal(getEventListeners(c.signal, 'abort').length, 1);
    await assert.rejects(late, /late/);
    q.serveNext();
    abortedOne!.abort();
    await assert.rejects(aborted, ClientAbortedError);
    assert.equal(await served, 'a1');
    assert.equal(q.size, 0);
    assert.equal(timers(), before);
    for (const c of signals) assert.equal(getEventListeners(c.signal, 'abort').length, 0);
  });

  it('names a policy that picks no waiter', async () => {
    const q = createWaitQueue({ policy: { pick: () => -1 } });
    const client = new AbortController();
    const waiting = join(q, [], 'a', 'a1', client.signal);
    assert.throws(() => q.serveNext(), RangeError);
    assert.equal(q.size, 1, 'the waiter is still waiting');
    client.abort();
    await assert.rejects(waiting, ClientAbortedError);
  });
});
