import { createProxyError, type ProxyError } from './proxy-error.js';

// The catalogue's factories for what a CLI did or could not do.

// --- backend errors ------------------------------------------------------------------

export function backendNotInstalled(backend: string, bin: string, fix: string, cause?: unknown): ProxyError {
  return createProxyError('backend_not_installed', `The ${backend} CLI was not found at '${bin}'. ${fix}`, { cause });
}

export function backendNotLoggedIn(backend: string, detail: string, fix: string, cause?: unknown): ProxyError {
  return createProxyError(
    'backend_not_logged_in',
    `The ${backend} CLI is not logged in (${detail}). On the machine running olp, ${fix}.`,
    { cause, detail },
  );
}

const PROVIDERS: Readonly<Record<string, string>> = { claude: 'Anthropic', codex: 'OpenAI' };

/**
 * A key's own login (`olp logins`) was refused by its provider: renewing that login fixes it, not
 * logging in the machine's CLI. An owner is told the command; a member that the login needs
 * renewing and who can do it.
 */
export function loginRefused(
  o: { login: string; backend: string; detail: string; owner: boolean },
  cause?: unknown,
): ProxyError {
  const provider = PROVIDERS[o.backend] ?? `the ${o.backend} CLI's provider`;
  const fix = `olp logins rotate ${o.login} --${o.backend}`;
  const message = o.owner
    ? `${o.login}'s ${o.backend} login was refused by ${provider} (${o.detail}): renew it with \`${fix}\`.`
    : `Your ${o.backend} login '${o.login}' was refused by ${provider} (${o.detail}): it needs renewing. ` +
      `Ask the owner of this olp to renew it (\`${fix}\`).`;
  return createProxyError('login_refused', message, { cause });
}

/** The key's login cannot serve the CLI: it was removed, or holds no credential for that CLI. */
export function loginNotSetUp(message: string): ProxyError {
  return createProxyError('login_not_set_up', message);
}

/** The provider limits the login: 30 s for a rate limit, longer (3600) for a spent quota. */
export function backendRateLimited(backend: string, detail: string, retryAfter = 30, cause?: unknown): ProxyError {
  return createProxyError(
    'backend_rate_limited',
    `The ${backend} CLI's provider is rate limiting this login: ${detail}`,
    { retryAfter, cause },
  );
}

/**
 * The login's plan window is spent (or, for a key that may not draw on it, only paid extra usage
 * is left) until `resetsAt` (epoch ms): Retry-After counts down to it, and a client is told not
 * to retry before it unless it is under a minute away.
 */
export function planLimitReached(message: string, resetsAt: number | null, now: number): ProxyError {
  const seconds = resetsAt === null ? 3600 : Math.max(1, Math.ceil((resetsAt - now) / 1000));
  const headers: Record<string, string> =
    resetsAt === null ? {} : { 'x-olp-plan-reset': new Date(resetsAt).toISOString() };
  return createProxyError('plan_limit_reached', message, { retryAfter: seconds, retryable: seconds <= 60, headers });
}

export function backendOverloaded(backend: string, detail: string, cause?: unknown): ProxyError {
  return createProxyError('backend_overloaded', `The ${backend} CLI's provider is overloaded: ${detail}`, { cause });
}

/** The CLI only retried its provider (unreachable, 5xx, auth failing upstream) for longer than olp waits. */
export function backendUnavailable(backend: string, seconds: number, lastRetry: string, cause?: unknown): ProxyError {
  return createProxyError(
    'backend_unavailable',
    `The ${backend} CLI could not reach its provider and was stopped after ${seconds} s of retrying (last: ` +
      `${lastRetry}). Check the network and the provider's status on the machine running olp.`,
    { cause },
  );
}

export function backendTimeout(backend: string, kind: 'total' | 'idle', seconds: number, cause?: unknown): ProxyError {
  const what = kind === 'idle' ? `produced no output for ${seconds} s` : `did not finish within ${seconds} s`;
  return createProxyError('backend_timeout', `The ${backend} CLI ${what} and was stopped.`, { cause });
}

/**
 * A streamed reply stopped because the CLI abandoned the model message it was streaming (the
 * provider's stream broke and the CLI asked again): what the client already has would not fit the
 * retried answer.
 */
export function backendRetryMidStream(backend: string): ProxyError {
  return createProxyError(
    'backend_retry_mid_stream',
    `The ${backend} CLI lost its provider's stream in the middle of the reply and started the answer again; the ` +
      'text streamed so far belongs to the abandoned attempt. Discard it and send the request again.',
  );
}

export function backendFailed(backend: string, detail: string, cause?: unknown): ProxyError {
  return createProxyError('backend_error', `The ${backend} CLI failed: ${detail}`, { cause });
}

/** The CLI refused to resume a session it does not have (retried, then rotated, before a client sees it). */
export function sessionNotFound(backend: string, detail: string, cause?: unknown): ProxyError {
  return createProxyError('session_not_found', `The ${backend} CLI could not resume the conversation: ${detail}`, {
    cause,
  });
}

export function backendBadOutput(backend: string, detail: string, cause?: unknown): ProxyError {
  return createProxyError(
    'backend_bad_output',
    `The ${backend} CLI produced output olp could not understand: ${detail}`,
    { cause },
  );
}

/** olp replays a recording and none of its calls matches this one; `detail` names the closest. */
export function replayNoMatch(detail: string): ProxyError {
  return createProxyError(
    'replay_no_match',
    `olp is replaying a recording, and no recorded call matches this request: ${detail}`,
  );
}
