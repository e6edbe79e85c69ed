// The one cap on CLI processes: room waited for, made by retiring what runs nothing, refused in time.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClientAbortedError, isProxyError } from '../../src/errors/index.js';
import type { ExitInfo, ProcessSupervisor, RunningProcess } from '../../src/process/index.js';
import { createProcessCap } from '../../src/workers/index.js';

/** A supervisor whose "processes" exit when the test says so. */
function fakeSupervisor() {
  const live = new Map<number, () => void>();
  let next = 1;
  const supervisor: ProcessSupervisor = {
    run() {
      const pid = next++;
      let end!: () => void;
      const exit = new Promise<ExitInfo>(
        (resolve) =>
          (end = () => resolve({ reason: 'done', exitCode: 0, signal: null, stderr: '', pid, durationMs: 0 })),
      );
      // The real supervisor counts a process out before anyone else hears of its exit.
      void exit.finally(() => live.delete(pid));
      live.set(pid, end);
      return { pid, exit } as unknown as RunningProcess;
    },
    get active() {
      return live.size;
    },
    killAll: async () => undefined,
  };
  return { supervisor, end: (pid: number) => live.get(pid)?.() };
}

const spawn = (cap: ReturnType<typeof createProcessCap>) =>
  cap.supervisor.run({} as never, {} as never, new AbortController().signal).pid!;

describe('the process cap', () => {
  it('a turn at the cap retires what runs nothing, least valuable first, and gets the room once it exits', async () => {
    const f = fakeSupervisor();
    const retired: string[] = [];
    const idle: number[] = [];
    const cap = createProcessCap(f.supervisor, {
      max: 2,
      waitMs: 5000,
      shed: [
        () => false, // no spare
        () => {
          const pid = idle.shift();
          if (pid === undefined) return false;
          retired.push(`idle ${pid}`);
          setTimeout(() => f.end(pid), 20);
          return true;
        },
      ],
    });
    for (let i = 0; i < 2; i++) {
      const room = await cap.acquire(new AbortController().signal);
      idle.push(spawn(cap));
      room();
    }
    assert.equal(cap.live, 2);
    assert.equal(cap.hasRoom(), false, 'a spare would not start');
    const started = performance.now();
    const room = await cap.acquire(new AbortController().signal);
    assert.deepEqual(retired, ['idle 1'], 'one retired for one waiter, not both');
    assert.ok(performance.now() - started >= 15, 'granted only after it exited');
    spawn(cap);
    room();
    assert.equal(cap.live, 2);
  });

  it('a turn waiting at the cap gets room when a busy CLI goes idle later, with no exit to say so', async () => {
    const f = fakeSupervisor();
    const idle: number[] = [];
    const cap = createProcessCap(f.supervisor, {
      max: 1,
      waitMs: 5000,
      shed: [
        () => {
          const pid = idle.shift();
          if (pid === undefined) return false;
          setTimeout(() => f.end(pid), 10);
          return true;
        },
      ],
    });
    const room = await cap.acquire(new AbortController().signal);
    const busy = spawn(cap);
    room();
    // Every CLI is busy: nothing to retire yet.
    const waiting = cap.acquire(new AbortController().signal);
    await new Promise((r) => setTimeout(r, 150));
    // Its turn ends: the worker is idle, and the waiting turn gets it retired for its room.
    idle.push(busy);
    const started = performance.now();
    (await waiting)();
    assert.ok(performance.now() - started < 1000, 'seated within a retry, not at the wait’s end');
    assert.equal(cap.hasRoom(), true);
  });

  it('with nothing to retire a turn waits for an exit, and is refused after the wait (429 queue_timeout) or when its client leaves', async () => {
    const f = fakeSupervisor();
    const cap = createProcessCap(f.supervisor, { max: 1, waitMs: 100, shed: [() => false] });
    const held = spawn(cap);
    await assert.rejects(
      cap.acquire(new AbortController().signal),
      (err: unknown) => isProxyError(err) && err.code === 'queue_timeout' && err.status === 429,
    );
    const leaving = new AbortController();
    const gone = cap.acquire(leaving.signal);
    leaving.abort();
    await assert.rejects(gone, ClientAbortedError);
    const waiting = cap.acquire(new AbortController().signal);
    f.end(held);
    const room = await waiting;
    assert.equal(cap.hasRoom(), false, 'the room is held for the turn until it spawns');
    room();
    assert.equal(cap.hasRoom(), true);
  });
});

describe('fair shares of the process cap', () => {
  /** A cap of `max` whose parked turns (by key, oldest first) are retired on request and exit a little later. */
  function parkedCap(max: number) {
    const f = fakeSupervisor();
    const parked: { keyId: string; pid: number }[] = [];
    const retired: string[] = [];
    const cap = createProcessCap(f.supervisor, {
      max,
      waitMs: 5000,
      shed: [
        () => false, // no spare
        () => false, // no idle worker
        (keyId) => {
          const i = parked.findIndex((p) => keyId === undefined || p.keyId === keyId);
          if (i === -1) return false;
          const [p] = parked.splice(i, 1);
          retired.push(p!.keyId);
          setTimeout(() => f.end(p!.pid), 5);
          return true;
        },
      ],
    });
    /** A turn of the key that gets room, starts, and parks on its tool calls. */
    async function park(keyId: string): Promise<void> {
      const room = await cap.acquire(new AbortController().signal, keyId);
      const proc = cap.supervisor.run({} as never, {} as never, new AbortController().signal);
      room(proc);
      parked.push({ keyId, pid: proc.pid! });
    }
    return { cap, park, retired, parked };
  }

  it("a key flooding the cap with parked turns does not keep another key's request behind its own", async () => {
    const { cap, park, retired } = parkedCap(3);
    for (let i = 0; i < 3; i++) await park('flood');
    assert.deepEqual(cap.holdings(), new Map([['flood', 3]]));
    const order: string[] = [];
    // Four more of the flood's turns wait for room, then the owner's plain turn.
    const flood = Array.from({ length: 4 }, () => park('flood').then(() => order.push('flood')));
    const owner = cap.acquire(new AbortController().signal, 'owner').then((room) => {
      order.push('owner');
      return room;
    });
    assert.equal(cap.waiting, 5);
    const room = await owner;
    assert.ok(order.indexOf('owner') <= 1, `the owner is seated first or second, not behind the flood: ${order}`);
    room(); // its turn started no process (a plain answer, say)
    await Promise.all(flood);
    assert.ok(retired.every((k) => k === 'flood'));
    assert.equal(cap.live, 3);
  });

  it("room for a key under its share is made from the parked turns of the key over it, not another's", async () => {
    const { cap, park, retired } = parkedCap(4);
    await park('alice');
    for (let i = 0; i < 3; i++) await park('flood');
    // alice's oldest park is the oldest of all; bob's turn needs room: the flood (3 of 4, share 1) gives it.
    const room = await cap.acquire(new AbortController().signal, 'bob');
    assert.deepEqual(retired, ['flood']);
    room();
    assert.deepEqual(
      cap.holdings(),
      new Map([
        ['alice', 1],
        ['flood', 2],
      ]),
    );
  });
});
