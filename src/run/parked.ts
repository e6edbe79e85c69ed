import { retire, step, type ToolLive } from './tool-step.js';
import type { BackendEvent } from '../backends/index.js';
import type { Logger } from '../log/index.js';
import type { RetireReason } from '../workers/index.js';
import type { ParkedPlan, RunOutcome, ToolParkedTurn } from './types.js';

/** The turn parked at a tool step: it goes on with the client's results, from the same CLI. */
export function toParked(s: ToolLive, callIds: string[]): ToolParkedTurn {
  return {
    keyId: s.keyId,
    model: s.model,
    callIds,
    slot: s.slotKey,
    retire: (reason) => retire(s, toRetireReason(reason)),
    async *resume(results, signal, log) {
      if (s.gone || s.retired) {
        await retire(s);
        return undefined;
      }
      s.parser.continueAfterTools?.();
      s.session.provide(results);
      // A CLI that died while parked may not have been seen to go yet: if the turn fails before
      // it says anything, it is treated as gone (the caller runs a fresh turn).
      s.read = 0;
      const gen = step(s, signal, log, 'parked', toParked);
      try {
        for (;;) {
          const next = await gen.next();
          if (next.done) {
            // Not a line since the results went in, and the CLI is gone: it had died parked.
            if (!next.value.ok && s.read === 0 && s.gone) {
              log.info(
                { event: 'parked_turn_lost', pid: s.proc.pid, code: next.value.error.code },
                'the parked CLI ended without going on; running the turn fresh',
              );
              return undefined;
            }
            return next.value;
          }
          yield next.value;
        }
      } finally {
        await gen.return(undefined as never);
      }
    },
  };
}

/** A parked turn's retirement reason as the worker pool logs it. */
function toRetireReason(reason: string): RetireReason {
  return RETIRE_REASONS.has(reason as RetireReason) ? (reason as RetireReason) : 'evicted';
}

const RETIRE_REASONS: ReadonlySet<RetireReason> = new Set<RetireReason>([
  'expired',
  'replaced',
  'evicted',
  'superseded',
  'shutdown',
  'revoked',
  'model_changed',
  'done',
]);

/**
 * The client's tool results for the turn parked on exactly these calls: that CLI goes on.
 * Undefined when it is gone (the turn is retired): the caller runs the request as usual, tools
 * still offered.
 */
export async function* runParked(
  plan: ParkedPlan,
  signal: AbortSignal,
  log: Logger,
): AsyncGenerator<BackendEvent, RunOutcome | undefined> {
  const gen = plan.turn.resume(plan.results, signal, log);
  try {
    return yield* gen;
  } finally {
    await gen.return(undefined);
  }
}
