/** One waiter as a policy sees it: its key, in the order the waiters came. */
export interface Queued {
  readonly key: string;
}

/**
 * Which waiter is served next. `pick` gets the waiters oldest first and returns the index of the one
 * to serve; `joined` and `left` (when given) hear of each waiter coming and going, served or not, with
 * how many of its key wait after the change, for policies that remember an order of their own.
 */
export interface WaitPolicy {
  pick(waiting: readonly Queued[]): number;
  joined?(key: string, ofKey: number): void;
  left?(key: string, ofKey: number, served: boolean): void;
}

/** One wait: whose it is, what ends it, and what to do when it ends without being served. */
export interface WaitRequest<T> {
  key: string;
  /** The client's signal: once it fires, the wait ends with ClientAbortedError. */
  signal: AbortSignal;
  /** How long it may wait before it ends with `timeoutError()`. */
  timeoutMs: number;
  timeoutError: () => Error;
  /** The error for a wait the queue has no room for (default: a RangeError). */
  fullError?: () => Error;
  /** What the waiter gets when served, made at that moment. */
  grant: () => T;
  /** Run once the waiter has left unserved (abort, timeout, no room), before the promise rejects. */
  cancelled?: () => void;
}
