import {
  backendBadOutput,
  backendFailed,
  backendModelNotFound,
  backendNotLoggedIn,
  backendOverloaded,
  backendRateLimited,
  sessionNotFound,
  type ProxyError,
} from '../../errors/index.js';
import { LIMIT_TEXT, resetFromText, windowSpent } from '../../plan/index.js';
import type { ExitInfo } from '../../process/index.js';
import { clip, providerContextError, toSpawnFailure } from '../common.js';
import type { BackendEvent } from '../types.js';

const NAME = 'codex';
import { INSTALL_FIX, LOGIN_FIX as CODEX_LOGIN_FIX } from './fixes.js';

export { CODEX_LOGIN_FIX };

export function toCodexSpawnError(bin: string, exit: ExitInfo): ProxyError {
  return toSpawnFailure(NAME, bin, INSTALL_FIX, exit);
}

/** A spent usage limit in codex's words, as a plan report (codex names no window). */
export function spentReport(message: string): BackendEvent[] {
  if (!LIMIT_TEXT.test(message)) return [];
  return [
    {
      type: 'plan',
      report: {
        status: 'rejected',
        window: null,
        resetsAt: resetFromText(message, Date.now()) ?? null,
        utilization: null,
        overage: false,
        message,
      },
    },
  ];
}

export interface CodexRunSummary {
  /** `turn.failed.error.message`, the terminal failure. */
  failed?: string;
  /** The last `error` event (often just a retry notice). */
  lastError?: string;
  exit: ExitInfo;
  parsedLines: number;
  unparsedLines: number;
  firstUnparsed?: string;
  model?: string;
}

/** Decides the error class of a failed codex run from turn.failed, the last error event, then stderr. */
export function toCodexError(s: CodexRunSummary): ProxyError {
  const stderr = s.exit.stderr;
  const lastStderr = clip(
    stderr
      .split('\n')
      .filter((l) => l.trim() && !/^WARNING: proceeding/.test(l) && !/Reading additional input/.test(l))
      .slice(-3)
      .join(' '),
  );
  const text = clip(s.failed ?? s.lastError ?? '') || lastStderr;
  const all = `${s.failed ?? ''}\n${s.lastError ?? ''}\n${stderr}`;
  if (/no rollout found for thread id/i.test(all)) return sessionNotFound(NAME, text);
  if (
    /401 Unauthorized|Incorrect API key|not logged in|invalid_api_key|token.{0,20}expired|Please (re-)?log ?in/i.test(
      all,
    )
  )
    return backendNotLoggedIn(NAME, text, CODEX_LOGIN_FIX);
  // A ChatGPT plan's spent usage limit (0.171: "You’ve hit your usage limit. … try again at 8:30 AM.").
  if (LIMIT_TEXT.test(all)) return windowSpent(NAME, null, resetFromText(all, Date.now()) ?? null, text, Date.now());
  if (/usage limit|rate limit|429 Too Many Requests|quota/i.test(all))
    return backendRateLimited(NAME, `${text} (the login's usage limit; it resets on its own, or use another model)`);
  if (/high demand|overloaded|503 Service Unavailable|500 Internal Server Error/i.test(all))
    return backendOverloaded(NAME, text);
  if (/Input exceeds the maximum length|context window|context_length_exceeded/i.test(all))
    return providerContextError(NAME, text);
  if (/model .{0,80}(does not exist|not found|not supported)|model_not_found/i.test(all)) {
    return backendModelNotFound(`The codex CLI cannot use the model '${s.model ?? 'requested'}': ${text}`);
  }
  if (s.failed) return backendFailed(NAME, text);
  if (s.parsedLines === 0 && s.unparsedLines > 0)
    return backendBadOutput(
      NAME,
      `stdout was not codex JSONL (first line: ${JSON.stringify(clip(s.firstUnparsed ?? '', 120))})`,
    );
  const why = s.exit.signal
    ? `it was killed by ${s.exit.signal}`
    : s.exit.exitCode !== 0
      ? `it exited with code ${s.exit.exitCode}`
      : 'it exited without completing the turn';
  if (s.exit.exitCode === 0 && !s.exit.signal)
    return backendBadOutput(NAME, `${why}${lastStderr ? `: ${lastStderr}` : ''}`);
  return backendFailed(NAME, `${why}${lastStderr ? `: ${lastStderr}` : ''}`);
}
