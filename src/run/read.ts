import {
  backendBadOutput,
  backendTimeout,
  backendUnavailable,
  ClientAbortedError,
  shuttingDown,
} from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { MAX_LINE_BYTES, type ExitInfo, type RunLimits, type RunningProcess } from '../process/index.js';
import type { Backend, BackendEvent, EventParser, TurnOutcome } from '../backends/index.js';
import { stopProcess } from './stop.js';
import type { RunDeps } from './types.js';

/** What a finished turn of a process that is still alive counts as, for the parser. */
export const LIVE_EXIT: ExitInfo = {
  reason: 'done',
  exitCode: 0,
  signal: null,
  stderr: '',
  pid: undefined,
  durationMs: 0,
};

/** Provider retries seen while reading a turn: not progress, and bounded by `retryTimeoutMs`. */
export interface Retrying {
  since: number;
  last: string;
}

/**
 * Reads one turn's lines through the parser, yielding its events, until the turn's final event
 * (the process may live on) or the end of output. A CLI that only retries its provider makes no
 * progress: the idle timer keeps running, and past the retry bound the run is stopped.
 */
export async function* readTurn(
  lines: AsyncIterator<string>,
  parser: EventParser,
  proc: RunningProcess,
  deps: Pick<RunDeps, 'limits' | 'unknownEvents'>,
  life: AbortController,
  log: Logger,
  onLine?: () => void,
): AsyncGenerator<BackendEvent, Retrying | undefined> {
  let retrying: Retrying | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  try {
    for (;;) {
      const step = await lines.next();
      if (step.done) return retrying;
      onLine?.();
      const events = parser.push(step.value);
      const retry = events.find((e) => e.type === 'retry');
      if (!retry) {
        proc.progress();
        retrying = undefined;
        if (retryTimer) clearTimeout(retryTimer);
        retryTimer = undefined;
      } else {
        retrying = { since: retrying?.since ?? performance.now(), last: retry.message };
        retryTimer ??= setTimeout(() => stopProcess(life, 'retry_timeout'), deps.limits.retryTimeoutMs);
        log.debug({ event: 'cli_retry', message: retry.message }, 'the CLI is retrying its provider');
      }
      for (const ev of events) yield ev;
      // The turn is decided (or waits for the client's tool results): answer now, whatever
      // still holds the CLI's stdout open.
      if (parser.complete || parser.toolStep) return retrying;
    }
  } finally {
    if (retryTimer) clearTimeout(retryTimer);
    noteUnknown(parser, log, deps.unknownEvents);
  }
}

/** Logs, once a daemon (`logged`), each event type a CLI printed that olp's parser does not know (a newer CLI's). */
function noteUnknown(parser: EventParser, log: Logger, logged = new Set<string>()): void {
  for (const type of parser.unknown ?? []) {
    if (logged.has(type)) continue;
    logged.add(type);
    log.warn(
      { event: 'cli_unknown_event', type },
      `the CLI printed an event type olp does not know (${type}); it was ignored`,
    );
  }
}

/** How a turn ended once its process has exited: the parser's verdict, or why olp stopped it. */
export function toOutcome(
  backend: Backend,
  parser: EventParser,
  exit: ExitInfo,
  limits: RunLimits,
  retrying: Retrying | undefined,
): TurnOutcome {
  if (exit.reason === 'spawn_error') return { ok: false, error: backend.spawnError(exit), usage: null };
  const outcome = parser.finish(exit);
  if (outcome.ok) return outcome;
  if (retrying && (exit.reason === 'retry_timeout' || exit.reason === 'idle')) {
    return {
      ...outcome,
      error: backendUnavailable(
        backend.id,
        Math.round((performance.now() - retrying.since) / 1000),
        retrying.last,
        outcome.error,
      ),
    };
  }
  switch (exit.reason) {
    case 'aborted':
      throw new ClientAbortedError(outcome.usage);
    case 'shutdown':
      return { ...outcome, error: shuttingDown() };
    case 'timeout':
      return {
        ...outcome,
        error: backendTimeout(backend.id, 'total', Math.round(limits.timeoutMs / 1000), outcome.error),
      };
    case 'idle':
      return {
        ...outcome,
        error: backendTimeout(backend.id, 'idle', Math.round(limits.idleTimeoutMs / 1000), outcome.error),
      };
    case 'line_too_long':
      return {
        ...outcome,
        error: backendBadOutput(
          backend.id,
          `a single output line was longer than ${MAX_LINE_BYTES / 1024 / 1024} MiB; the CLI was stopped`,
          outcome.error,
        ),
      };
    default:
      return outcome;
  }
}

/** The CLI's running cost after a turn (claude reports the process's total so far). */
export function costOf(outcome: TurnOutcome): number {
  return outcome.usage?.costUsd ?? 0;
}

/**
 * A live CLI's turn usage, its cost this turn's share of the process's running total (`before`: the
 * total after its last turn).
 */
export function turnUsage(outcome: TurnOutcome, before: number): TurnOutcome['usage'] {
  return outcome.usage && outcome.usage.costUsd !== undefined
    ? { ...outcome.usage, costUsd: Math.max(0, costOf(outcome) - before) }
    : outcome.usage;
}
