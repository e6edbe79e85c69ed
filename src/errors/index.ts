import { bounded } from '../log/index.js';

/**
 * The one error type that crosses layers. Status, OpenAI `type` and `code` are fixed
 * when the error is created, by the factories below; the HTTP layer only renders it.
 */
export class ProxyError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | null;
  /** Whether a client retrying the same request could succeed (drives `x-should-retry`). */
  readonly retryable: boolean;
  /** Seconds after which a retry makes sense (429/503), sent as `Retry-After`. */
  readonly retryAfter: number | undefined;
  /** Extra response headers (`x-ratelimit-*`). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(init: {
    status: number;
    type: string;
    code: string;
    message: string;
    param?: string | null;
    retryable: boolean;
    retryAfter?: number;
    headers?: Record<string, string>;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'ProxyError';
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param ?? null;
    this.retryable = init.retryable;
    this.retryAfter = init.retryAfter;
    this.headers = init.headers ?? {};
  }
}

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

/** The OpenAI error envelope for a ProxyError. */
export function toErrorBody(err: ProxyError): { error: { message: string; type: string; param: string | null; code: string } } {
  return { error: { message: err.message, type: err.type, param: err.param, code: err.code } };
}

export function isProxyError(err: unknown): err is ProxyError {
  return err instanceof ProxyError;
}

// --- client errors -------------------------------------------------------------------

export function invalidRequest(message: string, param: string | null = null, code = 'invalid_request', cause?: unknown): ProxyError {
  return new ProxyError({ status: 400, type: 'invalid_request_error', code, message, param, retryable: false, cause });
}

export function invalidJson(cause?: unknown): ProxyError {
  return new ProxyError({
    status: 400,
    type: 'invalid_request_error',
    code: 'invalid_json',
    message: 'We could not parse the JSON body of your request. Send a valid JSON object with Content-Type: application/json.',
    retryable: false,
    cause,
  });
}

export function requestTooLarge(limitBytes: number, cause?: unknown): ProxyError {
  return new ProxyError({
    status: 413,
    type: 'invalid_request_error',
    code: 'request_too_large',
    message: `The request body is larger than the limit of ${limitBytes} bytes.`,
    retryable: false,
    cause,
  });
}

export function missingApiKey(): ProxyError {
  return new ProxyError({
    status: 401,
    type: 'authentication_error',
    code: 'invalid_api_key',
    message: "You didn't provide an API key. Send it as 'Authorization: Bearer <key>'. Create one with `olp keys add NAME`.",
    retryable: false,
  });
}

export function invalidApiKey(): ProxyError {
  return new ProxyError({
    status: 401,
    type: 'authentication_error',
    code: 'invalid_api_key',
    message: 'Incorrect API key provided. Ask the owner of this olp server for a key (`olp keys add NAME`).',
    retryable: false,
  });
}

export function modelNotFound(model: string, known: readonly string[]): ProxyError {
  const some = known.slice(0, 6).join(', ');
  model = bounded(model);
  return new ProxyError({
    status: 404,
    type: 'invalid_request_error',
    code: 'model_not_found',
    param: 'model',
    message: `The model '${model}' does not exist or is not served here. Try one of: ${some}.`,
    retryable: false,
  });
}

export function routeNotFound(method: string, path: string): ProxyError {
  return new ProxyError({
    status: 404,
    type: 'invalid_request_error',
    code: 'not_found',
    message: `Unknown request URL: ${bounded(method)} ${bounded(path)}.`,
    retryable: false,
  });
}

/** A stored response that does not exist, or belongs to another key (never told apart). */
export function responseNotFound(id: string, param: string | null): ProxyError {
  return new ProxyError({
    status: 404,
    type: 'invalid_request_error',
    code: 'response_not_found',
    param,
    message: `No response found with id '${bounded(id, 80)}'. Responses are kept only with store: true (the default), for the key that made them, until deleted or past the retention.`,
    retryable: false,
  });
}

/** A request that broke HTTP framing or encoding rules (bad chunking, an undecodable body or path). */
export function malformedRequest(message: string, code: 'malformed_request' | 'invalid_encoding' | 'invalid_path' = 'malformed_request', cause?: unknown): ProxyError {
  return new ProxyError({ status: 400, type: 'invalid_request_error', code, message, retryable: false, cause });
}

/** The client did not send its whole request (headers and body) within the limit. */
export function requestTimeout(seconds: number, cause?: unknown): ProxyError {
  return new ProxyError({
    status: 408,
    type: 'invalid_request_error',
    code: 'request_timeout',
    message: `The request was not received within ${seconds} s (olp's --body-timeout). Send the whole body at once.`,
    retryable: false,
    cause,
  });
}

export function headersTooLarge(cause?: unknown): ProxyError {
  return new ProxyError({ status: 431, type: 'invalid_request_error', code: 'headers_too_large', message: 'The request headers are too large.', retryable: false, cause });
}

/** One client address holds more connections than olp allows (`--max-client-connections`). */
export function tooManyConnections(limit: number): ProxyError {
  return new ProxyError({
    status: 429,
    type: 'rate_limit_error',
    code: 'too_many_connections',
    message: `This address already has ${limit} open connections to olp, its limit. Close some or reuse them (keep-alive).`,
    retryable: true,
    retryAfter: 1,
  });
}

/** The client stopped reading a streamed reply for longer than olp waits. */
export function clientReadTimeout(seconds: number): ProxyError {
  return new ProxyError({
    status: 408,
    type: 'invalid_request_error',
    code: 'client_read_timeout',
    message: `The client did not read the response for ${seconds} s (olp's --client-timeout); olp stopped the reply. Read streams as they arrive.`,
    retryable: false,
  });
}

export function contextLengthExceeded(detail: string, cause?: unknown): ProxyError {
  return new ProxyError({
    status: 400,
    type: 'invalid_request_error',
    code: 'context_length_exceeded',
    param: 'messages',
    message: `The conversation is too long for the model: ${detail}`,
    retryable: false,
    cause,
  });
}

// --- policy and admission ----------------------------------------------------------

export function keyDisabled(): ProxyError {
  return new ProxyError({ status: 403, type: 'permission_error', code: 'key_disabled', message: 'This API key is disabled. Ask the owner of this olp server to enable it (`olp keys set NAME --enable`).', retryable: false });
}

export function keyExpired(at: string): ProxyError {
  return new ProxyError({ status: 401, type: 'authentication_error', code: 'key_expired', message: `This API key expired at ${at}. Ask the owner of this olp server for a new one.`, retryable: false });
}

export function modelNotAllowed(model: string, allowed: readonly string[]): ProxyError {
  return new ProxyError({
    status: 403,
    type: 'permission_error',
    code: 'model_not_allowed',
    param: 'model',
    message: `This key may not use the model '${model}'. Allowed: ${allowed.join(', ') || 'none'}.`,
    retryable: false,
  });
}

export function ownerOnly(): ProxyError {
  return new ProxyError({ status: 403, type: 'permission_error', code: 'owner_only', message: 'Only an owner key may call this endpoint.', retryable: false });
}

/** A per-key or server-wide limit was hit; the headers say which and when it frees up. */
export function limitExceeded(code: 'rate_limit_exceeded' | 'concurrency_limit_exceeded' | 'budget_exceeded' | 'server_busy' | 'queue_timeout', message: string, retryAfter: number, headers: Record<string, string> = {}): ProxyError {
  // A spent budget comes back at the period's end, not in seconds: retrying is pointless.
  const retryable = code !== 'budget_exceeded';
  return new ProxyError({ status: 429, type: 'rate_limit_error', code, message, retryable, retryAfter: Math.max(1, Math.ceil(retryAfter)), headers });
}

// --- backend errors ------------------------------------------------------------------

export function backendNotInstalled(backend: string, bin: string, fix: string, cause?: unknown): ProxyError {
  return new ProxyError({
    status: 503,
    type: 'server_error',
    code: 'backend_not_installed',
    message: `The ${backend} CLI was not found at '${bin}'. ${fix}`,
    retryable: false,
    cause,
  });
}

export function backendNotLoggedIn(backend: string, detail: string, fix: string, cause?: unknown): ProxyError {
  return new ProxyError({
    status: 503,
    type: 'server_error',
    code: 'backend_not_logged_in',
    message: `The ${backend} CLI is not logged in (${detail}). On the machine running olp, ${fix}.`,
    retryable: false,
    cause,
  });
}

export function backendRateLimited(backend: string, detail: string, retryAfter = 30, cause?: unknown): ProxyError {
  return new ProxyError({
    status: 429,
    type: 'rate_limit_error',
    code: 'backend_rate_limited',
    message: `The ${backend} CLI's provider is rate limiting this login: ${detail}`,
    retryable: true,
    retryAfter,
    cause,
  });
}

export function backendOverloaded(backend: string, detail: string, cause?: unknown): ProxyError {
  return new ProxyError({
    status: 503,
    type: 'server_error',
    code: 'backend_overloaded',
    message: `The ${backend} CLI's provider is overloaded: ${detail}`,
    retryable: true,
    retryAfter: 10,
    cause,
  });
}

/** The CLI only retried its provider (unreachable, 5xx, auth failing upstream) for longer than olp waits. */
export function backendUnavailable(backend: string, seconds: number, lastRetry: string, cause?: unknown): ProxyError {
  return new ProxyError({
    status: 503,
    type: 'server_error',
    code: 'backend_unavailable',
    message: `The ${backend} CLI could not reach its provider and was stopped after ${seconds} s of retrying (last: ${lastRetry}). Check the network and the provider's status on the machine running olp.`,
    retryable: true,
    retryAfter: 30,
    cause,
  });
}

export function backendTimeout(backend: string, kind: 'total' | 'idle', seconds: number, cause?: unknown): ProxyError {
  const what = kind === 'idle' ? `produced no output for ${seconds} s` : `did not finish within ${seconds} s`;
  return new ProxyError({
    status: 504,
    type: 'server_error',
    code: 'backend_timeout',
    message: `The ${backend} CLI ${what} and was stopped.`,
    retryable: true,
    cause,
  });
}

export function backendFailed(backend: string, detail: string, cause?: unknown): ProxyError {
  return new ProxyError({
    status: 502,
    type: 'server_error',
    code: 'backend_error',
    message: `The ${backend} CLI failed: ${detail}`,
    retryable: true,
    cause,
  });
}

/** The CLI refused to resume a session it does not have (retried, then rotated, before a client sees it). */
export function sessionNotFound(backend: string, detail: string, cause?: unknown): ProxyError {
  return new ProxyError({ status: 502, type: 'server_error', code: 'session_not_found', message: `The ${backend} CLI could not resume the conversation: ${detail}`, retryable: true, cause });
}

export function backendBadOutput(backend: string, detail: string, cause?: unknown): ProxyError {
  return new ProxyError({
    status: 502,
    type: 'server_error',
    code: 'backend_bad_output',
    message: `The ${backend} CLI produced output olp could not understand: ${detail}`,
    retryable: false,
    cause,
  });
}

// --- server errors -------------------------------------------------------------------

export function shuttingDown(): ProxyError {
  return new ProxyError({
    status: 503,
    type: 'server_error',
    code: 'shutting_down',
    message: 'olp is shutting down and does not accept new requests.',
    retryable: true,
    retryAfter: 5,
  });
}

export function internalError(cause?: unknown): ProxyError {
  return new ProxyError({
    status: 500,
    type: 'server_error',
    code: 'internal_error',
    message: 'olp hit an unexpected error while handling this request. The details are in the server log under this request id.',
    retryable: true,
    cause,
  });
}

/** Anything thrown becomes a ProxyError; unknown errors become a 500 that keeps the original as cause. */
export function toProxyError(err: unknown): ProxyError {
  return isProxyError(err) ? err : internalError(err);
}

/** One instance of every error olp sends, for docs/errors.md and the test that pins it. */
export function errorCatalogue(): ProxyError[] {
  return [
    invalidRequest('x', 'messages'),
    invalidJson(),
    requestTooLarge(1),
    missingApiKey(),
    modelNotFound('x', []),
    routeNotFound('GET', '/x'),
    responseNotFound('x', null),
    contextLengthExceeded('x'),
    malformedRequest('x'),
    malformedRequest('x', 'invalid_encoding'),
    malformedRequest('x', 'invalid_path'),
    requestTimeout(1),
    headersTooLarge(),
    tooManyConnections(1),
    clientReadTimeout(1),
    new ProxyError({ status: 400, type: 'invalid_request_error', code: 'unsupported_value', message: 'x', retryable: false }),
    new ProxyError({ status: 400, type: 'invalid_request_error', code: 'unsupported_content', message: 'x', retryable: false }),
    invalidRequest('x', null, 'provider_invalid_request'),
    keyDisabled(),
    keyExpired(''),
    modelNotAllowed('x', []),
    ownerOnly(),
    limitExceeded('rate_limit_exceeded', '', 1),
    limitExceeded('concurrency_limit_exceeded', '', 1),
    limitExceeded('budget_exceeded', '', 86400),
    limitExceeded('server_busy', '', 1),
    limitExceeded('queue_timeout', '', 1),
    backendNotInstalled('claude', 'claude', ''),
    backendNotLoggedIn('claude', '', ''),
    backendRateLimited('claude', ''),
    backendOverloaded('claude', ''),
    backendTimeout('claude', 'total', 1),
    backendUnavailable('claude', 1, ''),
    backendFailed('claude', ''),
    backendBadOutput('claude', ''),
    sessionNotFound('claude', ''),
    shuttingDown(),
    internalError(),
    new ProxyError({ status: 503, type: 'server_error', code: 'replay_no_match', message: 'x', retryable: false }),
  ];
}
