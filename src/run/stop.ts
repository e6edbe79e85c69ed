import { clientReadTimeout, type ProxyError } from '../errors/index.js';
import { stopProcess } from '../process/index.js';

export { stopProcess, type ProcessStop } from '../process/index.js';

/**
 * Every way a request's run is stopped before it ends by itself. The route owns the controller
 * and sets its reason once (first writer wins: a later stop, such as the disconnect that follows
 * olp closing a slow reader's socket, changes nothing); the conversation and the CLI read it.
 */
export type RunStopReason =
  /** The client closed the connection before the response was finished. */
  | { type: 'client_disconnect' }
  /** The client left a streamed reply unread past `--client-timeout`: olp stops the reply with this error. */
  | { type: 'client_read_timeout'; error: ProxyError };

/** A request's stop: its signal for the run, and the one reason it was stopped for. */
export interface RunStop {
  readonly signal: AbortSignal;
  /** Set by the first `stop`; undefined while the run may go on. */
  readonly reason: RunStopReason | undefined;
  /** Stops the run for `reason`, unless it was stopped already; true when this call stopped it. */
  stop(reason: RunStopReason): boolean;
}

/** A stop for one request's run (made by the route that owns the request). */
export function createRunStop(): RunStop {
  const controller = new AbortController();
  return {
    signal: controller.signal,
    get reason() {
      return stopReasonOf(controller.signal);
    },
    stop(reason) {
      if (controller.signal.aborted) return false;
      controller.abort(reason);
      return true;
    },
  };
}

/** The client left a streamed reply unread for `seconds`: the stop, with the error the client is sent. */
export function clientTooSlow(seconds: number): RunStopReason {
  return { type: 'client_read_timeout', error: clientReadTimeout(seconds) };
}

/** The reason a run's signal was stopped for; undefined while it runs (or for a signal no `RunStop` made). */
export function stopReasonOf(signal: AbortSignal): RunStopReason | undefined {
  const reason: unknown = signal.reason;
  if (!signal.aborted || typeof reason !== 'object' || reason === null || !('type' in reason)) return undefined;
  return reason as RunStopReason;
}

/** How a stopped request ends: with olp's own error (the client still reads), or as the client's leaving (499). */
export function toStopOutcome(reason: RunStopReason | undefined): { error: ProxyError } | { aborted: true } {
  if (reason?.type === 'client_read_timeout') return { error: reason.error };
  return { aborted: true };
}

/** Stops `life` when the request's run is stopped, until the returned function is called. */
export function follow(signal: AbortSignal, life: AbortController): () => void {
  const onAbort = () => stopProcess(life, 'aborted');
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}
