import { ClientAbortedError, limitExceeded } from '../errors/index.js';
import type { ProcessSupervisor } from '../process/index.js';

export interface ProcessCapOptions {
  /** Most CLI processes olp holds at once: running turns, workers, spares, parked turns, retiring ones. */
  max: number;
  /** How long a turn may wait for room before it is refused (429 queue_timeout). */
  waitMs: number;
  /** Least valuable first: each retires one live CLI that is not running a turn, if it finds one. */
  shed: readonly (() => boolean)[];
}

/** How often a turn waiting for room looks again for a live CLI to retire. */
const RETRY_MS = 100;

/** Gives the holder the room it waited for; call it once the process runs (or did not start). */
export type ProcessTicket = () => void;

/** The memory-derived default for `--max-processes`: ~300 MiB each from half the machine, at most 6 per core. */
export function defaultMaxProcesses(totalBytes: number, cpus: number): number {
  return Math.max(1, Math.min(Math.floor(totalBytes / 2 / (300 * 1024 * 1024)), cpus * 6));
}

/**
 * One count of every CLI process olp holds, and its cap. The count is the supervisor's own (a
 * process counts from its spawn until its exit has been seen, retiring ones included), plus the
 * room handed to turns about to spawn. A turn that needs a process while the count is at the cap
 * retires the least valuable live CLI that runs nothing (`shed`: a spare, then the least recently
 * used idle worker, then the oldest parked tool-call turn) and waits for a process to exit; one
 * started in the background (a spare, a worker loading a session) starts only when there is room.
 */
export function createProcessCap(inner: ProcessSupervisor, o: ProcessCapOptions) {
  let reserved = 0;
  /** Short commands run outside the supervisor (the CLIs' status checks) while they run. */
  let outside = 0;
  /** Live CLIs retired to make room that have not exited yet. */
  let owed = 0;
  const waiters: (() => void)[] = [];
  const held = () => inner.active + reserved + outside;
  /**
   * While turns wait, room is looked for again every RETRY_MS: a live CLI may have become one to
   * retire since (a worker whose turn ended goes idle), and no process exit says so.
   */
  let retry: NodeJS.Timeout | undefined;

  function shedOne(): boolean {
    for (const shed of o.shed) if (shed()) return true;
    return false;
  }

  function pump(): void {
    while (waiters.length > 0 && held() < o.max) {
      reserved++;
      waiters.shift()!();
    }
    // Still full: enough on their way out to seat every waiter.
    while (waiters.length > 0 && held() + waiters.length - owed > o.max && shedOne()) owed++;
    if (waiters.length > 0) retry ??= setInterval(pump, RETRY_MS).unref();
    else if (retry) {
      clearInterval(retry);
      retry = undefined;
    }
  }

  function ticket(): ProcessTicket {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      reserved--;
      pump();
    };
  }

  const supervisor: ProcessSupervisor = {
    run(inv, limits, signal, log, call) {
      const proc = inner.run(inv, limits, signal, log, call);
      // (The inner count drops before this runs: its own handler was attached first.)
      void proc.exit.then(() => {
        if (owed > 0) owed--;
        pump();
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
    /** Room for one process, made if need be; rejects on the signal or after `waitMs`. */
    acquire(signal: AbortSignal): Promise<ProcessTicket> {
      if (signal.aborted) return Promise.reject(new ClientAbortedError());
      if (waiters.length === 0 && held() < o.max) {
        reserved++;
        return Promise.resolve(ticket());
      }
      return new Promise<ProcessTicket>((resolve, reject) => {
        const grant = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve(ticket());
        };
        const fail = (err: Error) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          const i = waiters.indexOf(grant);
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
        waiters.push(grant);
        pump();
      });
    },
  };
}

export type ProcessCap = ReturnType<typeof createProcessCap>;
