import { ClientAbortedError } from '../errors/index.js';
import type { Queued, WaitPolicy, WaitRequest } from './types.js';

export interface WaitQueueOptions {
  /** Which waiter is served next. */
  policy: WaitPolicy;
  /** Most waiters at once, across all keys (default: no bound). */
  bound?: number;
}

/** A waiter in the queue: its key, and how to end its wait. */
interface Waiter extends Queued {
  serve(): void;
}

/** The state of one queue: its waiters oldest first and how many of each key wait. */
interface QueueState {
  readonly opts: WaitQueueOptions;
  readonly waiting: Waiter[];
  readonly perKey: Map<string, number>;
}

function join(q: QueueState, w: Waiter): void {
  q.waiting.push(w);
  const ofKey = (q.perKey.get(w.key) ?? 0) + 1;
  q.perKey.set(w.key, ofKey);
  q.opts.policy.joined?.(w.key, ofKey);
}

/** Takes the waiter out, if it is still in; tells whether it was. */
function leave(q: QueueState, w: Waiter, served: boolean): boolean {
  const i = q.waiting.indexOf(w);
  if (i === -1) return false;
  q.waiting.splice(i, 1);
  const ofKey = q.perKey.get(w.key)! - 1;
  if (ofKey > 0) q.perKey.set(w.key, ofKey);
  else q.perKey.delete(w.key);
  q.opts.policy.left?.(w.key, ofKey, served);
  return true;
}

const isFull = (q: QueueState): boolean => q.waiting.length >= (q.opts.bound ?? Number.POSITIVE_INFINITY);

/** Serves the waiter the policy picks; tells its key, or undefined when none waits. */
function serveNext(q: QueueState): string | undefined {
  if (q.waiting.length === 0) return undefined;
  const i = q.opts.policy.pick(q.waiting);
  const w = q.waiting[i];
  if (!w) throw new RangeError(`wait policy picked ${i} of ${q.waiting.length} waiters`);
  leave(q, w, true);
  w.serve();
  return w.key;
}

/** Waits until served, the signal fires or the time runs out; whichever comes first ends the others. */
function wait<T>(q: QueueState, r: WaitRequest<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const fail = (err: Error, inQueue: boolean) => {
      clearTimeout(timer);
      r.signal.removeEventListener('abort', onAbort);
      if (inQueue) leave(q, waiter, false);
      r.cancelled?.();
      reject(err);
    };
    const onAbort = () => fail(new ClientAbortedError(), true);
    const waiter: Waiter = {
      key: r.key,
      serve() {
        clearTimeout(timer);
        r.signal.removeEventListener('abort', onAbort);
        resolve(r.grant());
      },
    };
    const timer = setTimeout(() => fail(r.timeoutError(), true), r.timeoutMs);
    if (r.signal.aborted) return fail(new ClientAbortedError(), false);
    if (isFull(q)) {
      return fail(r.fullError?.() ?? new RangeError(`the wait queue is full (${q.waiting.length})`), false);
    }
    r.signal.addEventListener('abort', onAbort, { once: true });
    join(q, waiter);
  });
}

/**
 * Waiters, each with a key, served one at a time by the owner (`serveNext`, when it has room to give) in
 * the order its policy picks. A wait ends when served, when the client's signal fires (ClientAbortedError)
 * or after its timeout (its own error); either way the waiter leaves the queue and its timer and listener
 * go with it.
 */
export function createWaitQueue(opts: WaitQueueOptions) {
  const q: QueueState = { opts, waiting: [], perKey: new Map() };
  return {
    /** Joins the queue; resolves with what `grant` makes once served. */
    wait: <T>(r: WaitRequest<T>): Promise<T> => wait(q, r),
    /** Serves the next waiter by the policy; its key, or undefined when none waits. */
    serveNext: (): string | undefined => serveNext(q),
    /** Waiters now, across all keys. */
    get size(): number {
      return q.waiting.length;
    },
    /** Whether a new waiter would be refused for the bound. */
    get full(): boolean {
      return isFull(q);
    },
    /** Waiters of one key now. */
    waitingFor: (key: string): number => q.perKey.get(key) ?? 0,
    /** The keys with waiters now. */
    keys: (): string[] => [...q.perKey.keys()],
  };
}

export type WaitQueue = ReturnType<typeof createWaitQueue>;
