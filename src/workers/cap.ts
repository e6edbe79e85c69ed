import { ClientAbortedError, limitExceeded } from '../errors/index.js';
import type { ProcessSupervisor } from '../process/index.js';

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

/** A turn waiting for room: its key, and the order it came in. */
interface Waiter {
  keyId: string;
  grant: () => void;
}

/** The memory-derived default for `--max-processes`: ~300 MiB each from half the machine, at most 6 per core. */
export function defaultMaxProcesses(totalBytes: number, cpus: number): number {
  return Math.max(1, Math.min(Math.floor(totalBytes / 2 / (300 * 1024 * 1024)), cpus * 6));
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
  let reserved = 0;
  /** Short commands run outside the supervisor (the CLIs' status checks) while they run. */
  let outside = 0;
  /** Live CLIs retired to make room that have not exited yet. */
  let owed = 0;
  const waiters: Waiter[] = [];
  /** Processes each key's turns hold (started, or about to be), until they exit. */
  const holding = new Map<string, number>();
  const held = () => inner.active + reserved + outside;
  const holds = (keyId: string) => holding.get(keyId) ?? 0;
  function addHold(keyId: string, n: number): void {
    const next = holds(keyId) + n;
    if (next > 0) holding.set(keyId, next);
    else holding.delete(keyId);
  }
  /**
   * While turns wait, room is looked for again every RETRY_MS: a live CLI may have become one to
   * retire since (a worker whose turn ended goes idle), and no process exit says so.
   */
  let retry: NodeJS.Timeout | undefined;

  /** The keys holding more than their share while turns wait, the heaviest first. */
  function overShare(): string[] {
    const keys = new Set([...holding.keys(), ...waiters.map((w) => w.keyId)]);
    const share = Math.max(1, Math.floor(o.max / keys.size));
    return [...holding]
      .filter(([, n]) => n > share)
      .sort((a, b) => b[1] - a[1])
      .map(([k]) => k);
  }

  function shedOne(): boolean {
    const [spare, ...rest] = o.shed;
    if (spare?.()) return true;
    for (const keyId of overShare()) for (const shed of rest) if (shed(keyId)) return true;
    for (const shed of rest) if (shed()) return true;
    return false;
  }

  /** The waiter whose key holds the fewest processes (the earliest of those). */
  function nextWaiter(): Waiter {
    let best = 0;
    for (let i = 1; i < waiters.length; i++) if (holds(waiters[i]!.keyId) < holds(waiters[best]!.keyId)) best = i;
    return waiters.splice(best, 1)[0]!;
  }

  function pump(): void {
    while (waiters.length > 0 && held() < o.max) {
      const w = nextWaiter();
      reserved++;
      addHold(w.keyId, 1);
      w.grant();
    }
    // Still full: enough on their way out to seat every waiter.
    while (waiters.length > 0 && held() + waiters.length - owed > o.max && shedOne()) owed++;
    if (waiters.length > 0) retry ??= setInterval(pump, RETRY_MS).unref();
    else if (retry) {
      clearInterval(retry);
      retry = undefined;
    }
  }

  function ticket(keyId: string): ProcessTicket {
    let done = false;
    return (proc) => {
      if (done) return;
      done = true;
      reserved--;
      if (proc) void proc.exit.then(() => addHold(keyId, -1));
      else addHold(keyId, -1);
      pump();
    };
  }

  const supervisor: ProcessSupervisor = {
    run(inv, limits, signal, log, call) {
      const proc = inner.run(inv, limits, signal, log, call);
      // (The inner count drops before this runs: its own handler was attached first. The key's
      // hold drops in the ticket's handler, attached after this one: room is given out after both.)
      void proc.exit.then(() => {
        if (owed > 0) owed--;
        queueMicrotask(pump);
      });
      return proc;
    },
    get active() {
      return inner.active;
    },
    killAll: () => inner.killAll(),
  };

  return {
    /** The supervisor every CLI must be started through, so that its exit frees room. */
    supervisor,
    get max(): number {
      return o.max;
    },
    /** CLI processes alive now (spawned and not yet seen to exit), status checks included. */
    get live(): number {
      return inner.active + outside;
    },
    /**
     * Room for `n` short commands started outside the supervisor (a CLI's status checks), only if
     * it is free now and no turn waits for it: they never retire a live CLI nor wait. The returned
     * release is called once they have all exited.
     */
    tryTake(n: number): (() => void) | undefined {
      if (waiters.length > 0 || held() + n > o.max) return undefined;
      outside += n;
      let done = false;
      return () => {
        if (done) return;
        done = true;
        outside -= n;
        pump();
      };
    },
    /** Whether a background start may go ahead: room, and no turn waiting for it. */
    hasRoom(): boolean {
      return waiters.length === 0 && held() < o.max;
    },
    /** Processes held by each key's turns now (for /health and tests). */
    holdings(): ReadonlyMap<string, number> {
      return new Map(holding);
    },
    /** Turns waiting for room now. */
    get waiting(): number {
      return waiters.length;
    },
    /** Room for one process of the key's, made if need be; rejects on the signal or after `waitMs`. */
    acquire(signal: AbortSignal, keyId = ''): Promise<ProcessTicket> {
      if (signal.aborted) return Promise.reject(new ClientAbortedError());
      if (waiters.length === 0 && held() < o.max) {
        reserved++;
        addHold(keyId, 1);
        return Promise.resolve(ticket(keyId));
      }
      return new Promise<ProcessTicket>((resolve, reject) => {
        const waiter: Waiter = {
          keyId,
          grant: () => {
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            resolve(ticket(keyId));
          },
        };
        const fail = (err: Error) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          const i = waiters.indexOf(waiter);
          if (i !== -1) waiters.splice(i, 1);
          pump();
          reject(err);
        };
        const onAbort = () => fail(new ClientAbortedError());
        const timer = setTimeout(
          () =>
            fail(
              limitExceeded(
                'queue_timeout',
                `Waited ${Math.round(o.waitMs / 1000)} s for one of the ${o.max} CLI processes olp may hold at once to free. The server is busy; try again shortly.`,
                5,
              ),
            ),
          o.waitMs,
        );
        signal.addEventListener('abort', onAbort, { once: true });
        waiters.push(waiter);
        pump();
      });
    },
  };
}

export type ProcessCap = ReturnType<typeof createProcessCap>;
