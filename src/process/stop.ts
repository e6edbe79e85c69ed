/**
 * Why olp stops one CLI process of a run (its AbortController's reason, which the supervisor
 * turns into the exit's `EndReason`: `shutdown`, `timeout` and `retry_timeout` as they are, any
 * other as `aborted`).
 */
export type ProcessStop =
  /** The request was stopped (the route's `RunStopReason`, in run/). */
  | 'aborted'
  /** The daemon is stopping. */
  | 'shutdown'
  /** A live process's turn went over `--timeout` (a spawned one's own timer says so itself). */
  | 'timeout'
  /** The CLI only retried its provider for longer than `--retry-timeout`. */
  | 'retry_timeout'
  /** olp is done with the process: retired, not up in time, or showing no sign of life. */
  | 'done'
  /** The turn's consumer closed it before its end (the client left, or olp stopped reading). */
  | 'turn_closed';

/** Stops a CLI process for `reason` (its first reason stays). */
export function stopProcess(life: AbortController, reason: ProcessStop): void {
  life.abort(reason);
}
