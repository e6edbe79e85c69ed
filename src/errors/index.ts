import { bounded } from '../log/index.js';
import type { InvalidRequestCode } from './catalogue.js';
import { createProxyError, isProxyError, type ProxyError } from './proxy-error.js';

export { ERROR_CATALOGUE, type ErrorCode, type ErrorSpec, type InvalidRequestCode, type OpenAIErrorType } from './catalogue.js';
// The class is exported for `instanceof`; its constructor is sealed, so errors come only from the factories below.
export { ProxyError, isProxyError, toErrorBody } from './proxy-error.js';

/** Thrown where a request stops because its client went away; nothing is sent for it. */
export class ClientAbortedError extends Error {
  /** Whatever usage the CLI reported before it was stopped. */
  usage: unknown;
  constructor(usage: unknown = null) {
    super('client disconnected');
    this.name = 'ClientAbortedError';
    this.usage = usage;
  }
}

// --- client errors -------------------------------------------------------------------

/** A body that fails validation; `code` narrows it (unsupported_content, invalid_image, …), always a 400. */
export function invalidRequest(message: string, param: string | null = null, code: InvalidRequestCode = 'invalid_request', cause?: unknown): ProxyError {
  return createProxyError(code, message, { param, cause });
}

export function invalidJson(cause?: unknown): ProxyError {
  return createProxyError('invalid_json', 'We could not parse the JSON body of your request. Send a valid JSON object with Content-Type: application/json.', { cause });
}

export function requestTooLarge(limitBytes: number, cause?: unknown): ProxyError {
  return createProxyError('request_too_large', `The request body is larger than the limit of ${limitBytes} bytes.`, { cause });
}

/** A valid OpenAI value olp cannot honour (`n` > 1). */
export function unsupportedValue(param: string, message: string): ProxyError {
  return createProxyError('unsupported_value', message, { param });
}

export function missingApiKey(): ProxyError {
  return createProxyError('invalid_api_key', "You didn't provide an API key. Send it as 'Authorization: Bearer <key>'. Create one with `olp keys add NAME`.");
}

export function invalidApiKey(): ProxyError {
  return createProxyError('invalid_api_key', 'Incorrect API key provided. Ask the owner of this olp server for a key (`olp keys add NAME`).');
}

export function modelNotFound(model: string, known: readonly string[]): ProxyError {
  const some = known.slice(0, 6).join(', ');
  return createProxyError('model_not_found', `The model '${bounded(model)}' does not exist or is not served here. Try one of: ${some}.`, { param: 'model' });
}

/** The CLI itself does not know or cannot use the model; `message` is the backend's wording of it. */
export function backendModelNotFound(message: string, cause?: unknown): ProxyError {
  return createProxyError('model_not_found', message, { param: 'model', cause });
}

export function routeNotFound(method: string, path: string): ProxyError {
  return createProxyError('not_found', `Unknown request URL: ${bounded(method)} ${bounded(path)}.`);
}

/** A stored response that does not exist, or belongs to another key (never told apart). */
export function responseNotFound(id: string, param: string | null): ProxyError {
  return createProxyError(
    'response_not_found',
    `No response found with id '${bounded(id, 80)}'. Responses are kept only with store: true (the default), for the key that made them, until deleted or past the retention.`,
    { param },
  );
}

/** A request that broke HTTP framing or encoding rules (bad chunking, an undecodable body or path). */
export function malformedRequest(message: string, code: 'malformed_request' | 'invalid_encoding' | 'invalid_path' = 'malformed_request', cause?: unknown): ProxyError {
  return createProxyError(code, message, { cause });
}

/** The client did not send its whole request (headers and body) within the limit. */
export function requestTimeout(seconds: number, cause?: unknown): ProxyError {
  return createProxyError('request_timeout', `The request was not received within ${seconds} s (olp's --body-timeout). Send the whole body at once.`, { cause });
}

export function headersTooLarge(cause?: unknown): ProxyError {
  return createProxyError('headers_too_large', 'The request headers are too large.', { cause });
}

/** One client address holds more connections than olp allows (`--max-client-connections`). */
export function tooManyConnections(limit: number): ProxyError {
  return createProxyError('too_many_connections', `This address already has ${limit} open connections to olp, its limit. Close some or reuse them (keep-alive).`);
}

/** The client stopped reading a streamed reply for longer than olp waits. */
export function clientReadTimeout(seconds: number): ProxyError {
  return createProxyError('client_read_timeout', `The client did not read the response for ${seconds} s (olp's --client-timeout); olp stopped the reply. Read streams as they arrive.`);
}

export function contextLengthExceeded(detail: string, cause?: unknown): ProxyError {
  return createProxyError('context_length_exceeded', `The conversation is too long for the model: ${detail}`, { param: 'messages', cause });
}

// --- policy and admission ----------------------------------------------------------

export function keyDisabled(): ProxyError {
  return createProxyError('key_disabled', 'This API key is disabled. Ask the owner of this olp server to enable it (`olp keys set NAME --enable`).');
}

export function keyExpired(at: string): ProxyError {
  return createProxyError('key_expired', `This API key expired at ${at}. Ask the owner of this olp server for a new one.`);
}

export function modelNotAllowed(model: string, allowed: readonly string[]): ProxyError {
  return createProxyError('model_not_allowed', `This key may not use the model '${model}'. Allowed: ${allowed.join(', ') || 'none'}.`, { param: 'model' });
}

export function ownerOnly(): ProxyError {
  return createProxyError('owner_only', 'Only an owner key may call this endpoint.');
}

/** A per-key or server-wide limit was hit; the headers say which and when it frees up. */
export function limitExceeded(code: 'rate_limit_exceeded' | 'concurrency_limit_exceeded' | 'budget_exceeded' | 'server_busy' | 'queue_timeout', message: string, retryAfter: number, headers: Record<string, string> = {}): ProxyError {
  return createProxyError(code, message, { retryAfter: Math.max(1, Math.ceil(retryAfter)), headers });
}

// --- backend errors ------------------------------------------------------------------

export function backendNotInstalled(backend: string, bin: string, fix: string, cause?: unknown): ProxyError {
  return createProxyError('backend_not_installed', `The ${backend} CLI was not found at '${bin}'. ${fix}`, { cause });
}

export function backendNotLoggedIn(backend: string, detail: string, fix: string, cause?: unknown): ProxyError {
  return createProxyError('backend_not_logged_in', `The ${backend} CLI is not logged in (${detail}). On the machine running olp, ${fix}.`, { cause });
}

/** The provider limits the login: 30 s for a rate limit, longer (3600) for a spent quota. */
export function backendRateLimited(backend: string, detail: string, retryAfter = 30, cause?: unknown): ProxyError {
  return createProxyError('backend_rate_limited', `The ${backend} CLI's provider is rate limiting this login: ${detail}`, { retryAfter, cause });
}

/**
 * The login's plan window is spent (or, for a key that may not draw on it, only paid extra usage
 * is left) until `resetsAt` (epoch ms): Retry-After counts down to it, and a client is told not
 * to retry before it unless it is under a minute away.
 */
export function planLimitReached(message: string, resetsAt: number | null, now: number): ProxyError {
  const seconds = resetsAt === null ? 3600 : Math.max(1, Math.ceil((resetsAt - now) / 1000));
  const headers: Record<string, string> = resetsAt === null ? {} : { 'x-olp-plan-reset': new Date(resetsAt).toISOString() };
  return createProxyError('plan_limit_reached', message, { retryAfter: seconds, retryable: seconds <= 60, headers });
}

export function backendOverloaded(backend: string, detail: string, cause?: unknown): ProxyError {
  return createProxyError('backend_overloaded', `The ${backend} CLI's provider is overloaded: ${detail}`, { cause });
}

/** The CLI only retried its provider (unreachable, 5xx, auth failing upstream) for longer than olp waits. */
export function backendUnavailable(backend: string, seconds: number, lastRetry: string, cause?: unknown): ProxyError {
  return createProxyError(
    'backend_unavailable',
    `The ${backend} CLI could not reach its provider and was stopped after ${seconds} s of retrying (last: ${lastRetry}). Check the network and the provider's status on the machine running olp.`,
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
    `The ${backend} CLI lost its provider's stream in the middle of the reply and started the answer again; the text streamed so far belongs to the abandoned attempt. Discard it and send the request again.`,
  );
}

export function backendFailed(backend: string, detail: string, cause?: unknown): ProxyError {
  return createProxyError('backend_error', `The ${backend} CLI failed: ${detail}`, { cause });
}

/** The CLI refused to resume a session it does not have (retried, then rotated, before a client sees it). */
export function sessionNotFound(backend: string, detail: string, cause?: unknown): ProxyError {
  return createProxyError('session_not_found', `The ${backend} CLI could not resume the conversation: ${detail}`, { cause });
}

export function backendBadOutput(backend: string, detail: string, cause?: unknown): ProxyError {
  return createProxyError('backend_bad_output', `The ${backend} CLI produced output olp could not understand: ${detail}`, { cause });
}

/** olp replays a recording and none of its calls matches this one; `detail` names the closest. */
export function replayNoMatch(detail: string): ProxyError {
  return createProxyError('replay_no_match', `olp is replaying a recording, and no recorded call matches this request: ${detail}`);
}

// --- server errors -------------------------------------------------------------------

export function shuttingDown(): ProxyError {
  return createProxyError('shutting_down', 'olp is shutting down and does not accept new requests.');
}

export function internalError(cause?: unknown): ProxyError {
  return createProxyError('internal_error', 'olp hit an unexpected error while handling this request. The details are in the server log under this request id.', { cause });
}

/** Anything thrown becomes a ProxyError; unknown errors become a 500 that keeps the original as cause. */
export function toProxyError(err: unknown): ProxyError {
  return isProxyError(err) ? err : internalError(err);
}
