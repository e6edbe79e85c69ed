import type { StopReason } from '../../core/index.js';
import type { ExitInfo } from '../../process/index.js';
import type { TurnOutcome } from '../types.js';
import { toCodexError } from './errors.js';
import { toCodexUsage } from './usage.js';

/** What a codex parser saw of a turn by its end. */
export interface CodexSeen {
  /** The thread's running token total, in the names `codex exec` uses; null when none was reported. */
  total: Record<string, number> | null;
  threadId: string | undefined;
  /** Why the turn failed (its failure event), when it did. */
  failed: string | undefined;
  /** The last error codex reported (often only a retry notice). */
  lastError: string | undefined;
  summary: { parsedLines: number; unparsedLines: number; firstUnparsed?: string };
  model: string | undefined;
}

/** A codex turn's outcome: ok with `stopReason` when the turn ended well, else the error it ended with. */
export function toCodexOutcome(stopReason: StopReason | undefined, seen: CodexSeen, exit: ExitInfo): TurnOutcome {
  const usage = toCodexUsage(seen.total);
  const base = seen.threadId ? { sessionId: seen.threadId } : {};
  if (stopReason) return { ok: true, stopReason, usage, ...base };
  const error = toCodexError({
    ...(seen.failed !== undefined ? { failed: seen.failed } : {}),
    ...(seen.lastError !== undefined ? { lastError: seen.lastError } : {}),
    exit,
    ...seen.summary,
    ...(seen.model ? { model: seen.model } : {}),
  });
  return { ok: false, error, usage, ...base };
}
