import { ClientAbortedError, limitExceeded } from '../errors/index.js';
import type { ProcessSupervisor } from '../process/index.js';
import { createWaitQueue, fewestHeldFirst, type WaitQueue } from '../queue/index.js';

export interface ProcessCapOptions {
  /** Most CLI processes olp holds at once: running turns, workers, spares, parked turns, retiring ones. */
  max: number;
  /** How long a turn may wait for room before it is refused (429 queue_timeout). */
  waitMs: number;
  /**
   * Least valuable first: each retires one live CLI that is not running a turn, if it finds one;
   * given a key, one of that key's only.
   */
  shed: readonly ((keyId?: string) => boolean)[];
}

/** How often a turn waiting for room looks again for a live CLI to retire. */
const RETRY_MS = 100;

/**
 * Gives the holder the room it waited for; call it with the process once it runs (the key holds
 * it until it exits), or without one when none started.
 */
export type ProcessTicket = (proc?: { readonly exit: Promise<unknown> }) => void;

/** The memory-derived default for `--max-processes`: ~300 MiB each from half the machine, at most 6 per core. */
export function defaultMaxProcesses(totalBytes: number, cpus: number): number {
  return Math.max(1, Math.min(Math.floor(totalBytes / 2 / (300 * 1024 * 1024)), cpus * 6));
}

/** One cap's state: the count's parts besides the supervisor's, each key's holds, and the turns waiting. */
interface CapState {
  readonly inner: ProcessSupervisor;
  readonly o: ProcessCapOptions;
  /** Turns waiting for room; the waiting key holding the fewest goes first. */
  readonly queue: WaitQueue;
  /** Processes each key's turns hold (started, or about to be), until they exit. */
  readonly holding: Map<string, number>;
  /** Room handed to turns about to spawn. */
  reserved: number;
  /** Short commands run outside the supervisor (the CLIs' status checks) while they run. */
  outside: number;
  /** Live CLIs retired to make room that have not exited yet. */
  owed: number;
  /**
   * While turns wait, room is looked for again every RETRY_MS: a live CLI may have become one to
   * retire since (a worker whose turn ended goes idle), and no process exit says so.
   */
  retry: NodeJS.Timeout | undefined;
}

const held = (c: CapState): number => c.inner.active + c.reserved + c.outside;

function addHold(c: CapState, keyId: string, n: number): void {
  const next = (c.holding.get(keyId) ?? 0) + n;
  if (next > 0) c.holding.set(keyId, next);
  else c.holding.delete(keyId);
}

/** The keys holding more than their share while turns wait, the heaviest first. */
function overShare(c: CapState): string[] {
  const keys = new Set([...c.holding.keys(), ...c.queue.keys()]);
  const share = Math.max(1, Math.floor(c.o.max / keys.size));
  return [...c.holding]
    .filter(([, n]) => n > share)
    .sort((a, b) => b[1] - a[1])
    .map(([k]) => k);
}

function shedOne(c: CapState): boolean {
  const [spare, ...rest] = c.o.shed;
  if (spare?.()) return true;
  for (const keyId of overShare(c)) for (const shed of rest) if (shed(keyId)) return true;
  for (const shed of rest) if (shed()) return true;
  return false;
}

/** Gives free room to the turns waiting, then retires enough live CLIs to seat the rest. */
function pump(c: CapState): void {
  while (c.queue.size > 0 && held(c) < c.o.max) c.queue.serveNext();
  // Still full: enough on their way out to seat every waiter.
  while (c.queue.size > 0 && held(c) + c.queue.size - c.owed > c.o.max && shedOne(c)) c.owed++;
  if (c.queue.size > 0) c.retry ??= setInterval(() => pump(c), RETRY_MS).unref();
  else if (c.retry) {
    clearInterval(c.retry);
    c.retry = undefined;
  }
}

/** Room for one process of the key's, taken now; the ticket hands it on to the process or back. */
function take(c: CapState, keyId: string): ProcessTicket {
  c.reserved++;
  addHold(c, keyId, 1);
  let done = false;
  return (proc) => {
    if (done) return;
    done = true;
    c.reserved--;
    if (proc) void proc.exit.then(() => addHold(c, keyId, -1));
    else addHold(c, keyId, -1);
    pump(c);
  };
}

function acquire(c: CapState, signal: AbortSignal, keyId: string): Promise<ProcessTicket> {
  if (signal.aborted) return Promise.reject(new ClientAbortedError());
  if (c.queue.size === 0 && held(c) < c.o.max) return Promise.resolve(take(c, keyId));
  const granted = c.queue.wait({
    key: keyId,
    signal,
    timeoutMs: c.o.waitMs,
    timeoutError: () =>
      limitExceeded(
        'queue_timeout',
        `Waited ${Math.round(c.o.waitMs / 1000)} s for one of the ${c.o.max} CLI processes olp may hold at once ` +
          'to free. The server is busy; try again shortly.',
        5,
      ),
    grant: () => take(c, keyId),
    cancelled: () => pump(c),
  });
  pump(c);
  return granted;
}

function tryTake(c: CapState, n: number): (() => void) | undefined {
  if (c.queue.size > 0 || held(c) + n > c.o.max) return undefined;
  c.outside += n;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    c.outside -= n;
    pump(c);
  };
}

/** The inner supervisor, with each exit looking again for room for the turns waiting. */
function capSupervisor(c: CapState): ProcessSupervisor {
  return {
    run(inv, limits, signal, log, call) {
      const proc = c.inner.run(inv, limits, signal, log, call);
      // (The inner count drops before this runs: its own handler was attached first. The key's
      // hold drops in the ticket's handler, attached after this one: room is given out after both.)
      void proc.exit.then(() => {
        if (c.owed > 0) c.owed--;
        queueMicrotask(() => pump(c));
      });
      return proc;
    },
    get active() {
      return c.inner.active;
    },
    killAll: () => c.inner.killAll(),
  };
}

/**
 * One count of every CLI process olp holds, and its cap. The count is the supervisor's own (a
 * process counts from its spawn until its exit has been seen, retiring ones included), plus the
 * room handed to turns about to spawn. A turn that needs a process while the count is at the cap
 * retires the least valuable live CLI that runs nothing and waits for a process to exit; one
 * started in the background (a spare, a worker loading a session) starts only when there is room.
 *
 * Fair shares: the processes a key's turns started count as the key's until they exit (its
 * running turns, the workers and parked turns they became). While turns wait, room goes first to
 * the waiting key that holds the fewest, and the CLIs retired for it are, after any spare, the
 * idle workers and parked turns of the keys holding more than their share (`max` over the keys
 * holding or waiting, at least 1), the heaviest first; only then anyone's least recently used
 * worker or oldest parked turn. So one key flooding the cap with parked tool calls never keeps
 * another key's request waiting behind its own.
 */
export function createProcessCap(inner: ProcessSupervisor, o: ProcessCapOptions) {
  const holding = new Map<string, number>();
  const queue = createWaitQueue({ policy: fewestHeldFirst((keyId) => holding.get(keyId) ?? 0) });
  const c: CapState = { inner, o, queue, holding, reserved: 0, outside: 0, owed: 0, retry: undefined };
  return {
    /** The supervisor every CLI must be started through, so that its exit frees room. */
    supervisor: capSupervisor(c),
    get max(): number {
      return o.max;
    },
    /** CLI processes alive now (spawned and not yet seen to exit), status checks included. */
    get live(): number {
      return inner.active + c.outside;
    },
    /**
     * Room for `n` short commands started outside the supervisor (a CLI's status checks), only if
     * it is free now and no turn waits for it: they never retire a live CLI nor wait. The returned
     * release is called once they have all exited.
     */
    tryTake: (n: number): (() => void) | undefined => tryTake(c, n),
    /** Whether a background start may go ahead: room, and no turn waiting for it. */
    hasRoom(): boolean {
      return queue.size === 0 && held(c) < o.max;
    },
    /** Processes held by each key's turns now (for /health and tests). */
    holdings(): ReadonlyMap<string, number> {
      return new Map(holding);
    },
    /** Turns waiting for room now. */
    get waiting(): number {
      return queue.size;
    },
    /** Room for one process of the key's, made if need be; rejects on the signal or after `waitMs`. */
    acquire: (signal: AbortSignal, keyId = ''): Promise<ProcessTicket> => acquire(c, signal, keyId),
  };
}

export type ProcessCap = ReturnType<typeof createProcessCap>;
