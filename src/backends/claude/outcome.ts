import type { PlanReport } from '../../plan/index.js';
import type { ExitInfo } from '../../process/index.js';
import type { TurnOutcome } from '../types.js';
import { type ClaudeResult, toClaudeError } from './errors.js';
import { toStopReason, withoutReported } from './shapes.js';
import { toUsage } from './usage.js';

/** What a parser saw of a turn by its end: the `result` line, the session, the plan report. */
export interface ClaudeSeen {
  result?: ClaudeResult & { usage?: unknown; total_cost_usd?: unknown };
  sessionId: string | undefined;
  stopReason: string | null | undefined;
  /** olp interrupted the turn (a live CLI's, at a stop sequence). */
  interrupted?: boolean;
  plan: PlanReport | undefined;
  assistantError: string | undefined;
  /** Raw counts already reported with tool steps, left out of the turn's final usage. */
  reported: Record<string, number>;
  parsedLines: number;
  unparsedLines: number;
  firstUnparsed?: string;
  model?: string;
}

/** A claude turn's outcome from what its parser saw and how the process ended. */
export function toClaudeOutcome(seen: ClaudeSeen, exit: ExitInfo): TurnOutcome {
  const { result, sessionId, stopReason, plan, assistantError, reported, model } = seen;
  const usage = result ? withoutReported(toUsage(result.usage, result.total_cost_usd), reported) : null;
  const sid = sessionId ?? (result as { session_id?: string } | undefined)?.session_id;
  const base = sid ? { sessionId: sid } : {};
  if (result && seen.interrupted && result.subtype === 'error_during_execution')
    return { ok: true, stopReason: { type: 'interrupted' }, usage, ...base };
  if (result && !result.is_error) {
    return { ok: true, stopReason: toStopReason(result.stop_reason ?? stopReason), usage, ...base };
  }
  const summary = {
    parsedLines: seen.parsedLines,
    unparsedLines: seen.unparsedLines,
    ...(seen.firstUnparsed !== undefined ? { firstUnparsed: seen.firstUnparsed } : {}),
  };
  const error = toClaudeError({
    ...(result ? { result } : {}),
    ...(plan ? { plan } : {}),
    ...(assistantError ? { assistantError } : {}),
    exit,
    ...summary,
    ...(model ? { model } : {}),
  });
  return { ok: false, error, usage, ...base };
}

/**
 * The control request that interrupts a live claude's turn: the turn ends with an
 * `error_during_execution` result (its partial answer kept in the session), the process stays.
 */
export function toInterrupt(): string {
  const line = { type: 'control_request', request_id: 'olp-interrupt', request: { subtype: 'interrupt' } };
  return `${JSON.stringify(line)}\n`;
}
