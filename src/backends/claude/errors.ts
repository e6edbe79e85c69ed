import {
  backendBadOutput,
  backendFailed,
  backendModelNotFound,
  backendNotLoggedIn,
  backendOverloaded,
  backendRateLimited,
  invalidRequest,
  sessionNotFound,
  type ProxyError,
} from '../../errors/index.js';
import { LIMIT_TEXT, resetFromText, windowSpent, type PlanReport } from '../../plan/index.js';
import type { ExitInfo } from '../../process/index.js';
import { clip, providerContextError, toSpawnFailure } from '../common.js';

const NAME = 'claude';
import { INSTALL_FIX, LOGIN_FIX } from './fixes.js';

export { LOGIN_FIX };

/** The `result` event's fields that decide success (stream-json, claude-code 2.1.x). */
export interface ClaudeResult {
  subtype?: string;
  is_error?: boolean;
  result?: string;
  errors?: string[];
  api_error_status?: number | null;
  terminal_reason?: string;
  stop_reason?: string | null;
}

/** Everything known about a finished run that an error decision may use. */
export interface RunSummary {
  result?: ClaudeResult;
  /** `assistant.error` (SDKAssistantMessageError) of the last message that had one. */
  assistantError?: string;
  exit: ExitInfo;
  parsedLines: number;
  unparsedLines: number;
  firstUnparsed?: string;
  model?: string;
  /** The turn's plan report (subscription logins). */
  plan?: PlanReport;
}

/** Errors from starting the process at all. */
export function toSpawnError(bin: string, exit: ExitInfo): ProxyError {
  return toSpawnFailure(NAME, bin, INSTALL_FIX, exit);
}

/**
 * Decides the error class of a failed claude run. Order, per the reference: the result event
 * (`is_error`, `api_error_status`, `errors`) and `assistant.error` first, then exit, then stderr.
 * Timeouts and aborts are decided by the caller, which knows the limits.
 */
export function toClaudeError(s: RunSummary): ProxyError {
  const { exit, result } = s;
  if (exit.reason === 'spawn_error') return toSpawnError('claude', exit);
  const stderr = exit.stderr;
  const text =
    clip(result?.result ?? result?.errors?.join('; ') ?? '') ||
    clip(
      stderr
        .split('\n')
        .filter((l) => l.trim())
        .slice(-3)
        .join(' '),
    );
  const status = result?.api_error_status ?? null;
  const kind = s.assistantError;
  const all = `${text}\n${stderr}`;

  if (result?.is_error || kind) {
    if (
      kind === 'authentication_failed' ||
      kind === 'oauth_org_not_allowed' ||
      status === 401 ||
      /not logged in|invalid api key|please run \/login/i.test(all)
    ) {
      return backendNotLoggedIn(NAME, `${status === 401 ? '401: ' : ''}${text || 'authentication failed'}`, LOGIN_FIX);
    }
    // A spent plan window (subscription logins): the CLI says so at once and when it resets.
    const spent = (s.plan?.status === 'rejected' && !s.plan.overage) || LIMIT_TEXT.test(text);
    if (spent && (status === 429 || kind === 'rate_limit' || s.plan?.status === 'rejected')) {
      return windowSpent(
        NAME,
        s.plan?.window ?? null,
        s.plan?.resetsAt ?? resetFromText(text, Date.now()) ?? null,
        text,
        Date.now(),
      );
    }
    if (kind === 'rate_limit' || status === 429 || /rate.?limit|usage limit/i.test(text))
      return backendRateLimited(NAME, text || 'rate limited');
    if (kind === 'billing_error')
      return backendRateLimited(NAME, text || 'the account has no credit or quota left', 3600);
    if (kind === 'overloaded' || status === 529 || /overloaded/i.test(text))
      return backendOverloaded(NAME, text || 'overloaded');
    if (kind === 'model_not_found' || status === 404 || /unrecognized_model/.test(stderr)) {
      return backendModelNotFound(`The claude CLI does not know the model '${s.model ?? 'requested'}': ${text}`);
    }
    if (result?.terminal_reason === 'prompt_too_long' || /prompt is too long|context.{0,20}(length|window)/i.test(text))
      return providerContextError(NAME, `${text} ${clip(stderr)}`);
    if (/No conversation found with session ID/i.test(all)) return sessionNotFound(NAME, text);
    if (kind === 'invalid_request' || status === 400)
      return invalidRequest(`The model provider rejected the request: ${text}`, null, 'provider_invalid_request');
    return backendFailed(NAME, text || `run ended with ${result?.subtype ?? 'an error'}`);
  }

  if (s.parsedLines === 0 && s.unparsedLines > 0) {
    return backendBadOutput(
      NAME,
      `stdout was not stream-json (first line: ${JSON.stringify(clip(s.firstUnparsed ?? '', 120))})`,
    );
  }
  if (/not logged in|please run \/login|invalid api key/i.test(stderr))
    return backendNotLoggedIn(NAME, clip(stderr), LOGIN_FIX);
  const why = exit.signal
    ? `it was killed by ${exit.signal}`
    : exit.exitCode !== 0
      ? `it exited with code ${exit.exitCode}`
      : 'it exited without a result event';
  const detail = clip(
    stderr
      .split('\n')
      .filter((l) => l.trim())
      .slice(-3)
      .join(' '),
  );
  if (exit.exitCode === 0 && !exit.signal) return backendBadOutput(NAME, `${why}${detail ? `: ${detail}` : ''}`);
  return backendFailed(NAME, `${why}${detail ? `: ${detail}` : ''}`);
}
