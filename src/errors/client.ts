import { bounded } from '../log/index.js';
import type { InvalidRequestCode } from './catalogue.js';
import { createProxyError, type ProxyError } from './proxy-error.js';

// The catalogue's factories for what a client sent or may not do (4xx).

// --- client errors -------------------------------------------------------------------

/** A body that fails validation; `code` narrows it (unsupported_content, invalid_image, …), always a 400. */
export function invalidRequest(
  message: string,
  param: string | null = null,
  code: InvalidRequestCode = 'invalid_request',
  cause?: unknown,
): ProxyError {
  return createProxyError(code, message, { param, cause });
}

export function invalidJson(cause?: unknown): ProxyError {
  return createProxyError(
    'invalid_json',
    'We could not parse the JSON body of your request. Send a valid JSON object with Content-Type: application/json.',
    { cause },
  );
}

export function requestTooLarge(limitBytes: number, cause?: unknown): ProxyError {
  return createProxyError('request_too_large', `The request body is larger than the limit of ${limitBytes} bytes.`, {
    cause,
  });
}

/** A body sent as another media type than JSON where the API takes JSON only (Anthropic's Messages API). */
export function unsupportedMediaType(contentType: string | undefined): ProxyError {
  const sent =
    contentType === undefined ? 'no Content-Type' : `Content-Type ${JSON.stringify(bounded(contentType, 100))}`;
  return createProxyError(
    'unsupported_media_type',
    `The request body was sent with ${sent}; send it as JSON with Content-Type: application/json.`,
  );
}

/** A valid OpenAI value olp cannot honour (`n` > 1). */
export function unsupportedValue(param: string, message: string): ProxyError {
  return createProxyError('unsupported_value', message, { param });
}

export function missingApiKey(): ProxyError {
  return createProxyError(
    'invalid_api_key',
    "You didn't provide an API key. Send it as 'Authorization: Bearer <key>' (or 'x-api-key: <key>'). Create one " +
      'with `olp keys add NAME`.',
  );
}

/** `Authorization: Bearer` and `x-api-key` both sent, naming different keys: olp will not pick one. */
export function conflictingApiKeys(): ProxyError {
  return createProxyError(
    'invalid_api_key',
    "The request carries two different keys, in 'Authorization: Bearer' and in 'x-api-key'; send one of them.",
  );
}

export function invalidApiKey(): ProxyError {
  return createProxyError(
    'invalid_api_key',
    'Incorrect API key provided. Ask the owner of this olp server for a key (`olp keys add NAME`).',
  );
}

/**
 * A key made by another olp instance (its token's tag names it): where it belongs, when this
 * instance knows that one's address (`--peer`).
 */
export function wrongInstance(tag: string, own: string | null, url: string | undefined): ProxyError {
  const here = own === null ? 'this olp instance has no tag' : `this is instance '${own}'`;
  const there = url === undefined ? '' : ` at ${url.replace(/\/+$/, '')}/v1`;
  return createProxyError(
    'wrong_instance',
    `This key belongs to the olp instance '${tag}'${there}, and ${here}. Send it through the front door, or to ` +
      'its own instance.',
  );
}

export function modelNotFound(model: string, known: readonly string[]): ProxyError {
  const some = known.slice(0, 6).join(', ');
  return createProxyError(
    'model_not_found',
    `The model '${bounded(model)}' does not exist or is not served here. Try one of: ${some}.`,
    { param: 'model' },
  );
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
    `No response found with id '${bounded(id, 80)}'. Responses are kept only with store: true (the default), for ` +
      'the key that made them, until deleted or past the retention.',
    { param },
  );
}

/** A Responses `conversation`: olp keeps none of OpenAI's conversation objects, so every id is unknown. */
export function conversationNotFound(id: string): ProxyError {
  return createProxyError(
    'not_found',
    `Conversation with id '${bounded(id, 80)}' not found. olp keeps no conversation objects: send the whole ` +
      'input, or continue a stored response with previous_response_id.',
    { param: 'conversation' },
  );
}

/** A request that broke HTTP framing or encoding rules (bad chunking, an undecodable body or path). */
export function malformedRequest(
  message: string,
  code: 'malformed_request' | 'invalid_encoding' | 'invalid_path' = 'malformed_request',
  cause?: unknown,
): ProxyError {
  return createProxyError(code, message, { cause });
}

/** The client did not send its whole request (headers and body) within the limit. */
export function requestTimeout(seconds: number, cause?: unknown): ProxyError {
  return createProxyError(
    'request_timeout',
    `The request was not received within ${seconds} s (olp's --body-timeout). Send the whole body at once.`,
    { cause },
  );
}

export function headersTooLarge(cause?: unknown): ProxyError {
  return createProxyError('headers_too_large', 'The request headers are too large.', { cause });
}

/** One client address holds more connections than olp allows (`--max-client-connections`). */
export function tooManyConnections(limit: number): ProxyError {
  return createProxyError(
    'too_many_connections',
    `This address already has ${limit} open connections to olp, its limit. Close some or reuse them (keep-alive).`,
  );
}

/** The client stopped reading a streamed reply for longer than olp waits. */
export function clientReadTimeout(seconds: number): ProxyError {
  return createProxyError(
    'client_read_timeout',
    `The client did not read the response for ${seconds} s (olp's --client-timeout); olp stopped the reply. Read ` +
      'streams as they arrive.',
  );
}

export function contextLengthExceeded(detail: string, cause?: unknown): ProxyError {
  return createProxyError('context_length_exceeded', `The conversation is too long for the model: ${detail}`, {
    param: 'messages',
    cause,
  });
}

// --- policy and admission ----------------------------------------------------------

export function keyDisabled(): ProxyError {
  return createProxyError(
    'key_disabled',
    'This API key is disabled. Ask the owner of this olp server to enable it (`olp keys set NAME --enable`).',
  );
}

export function keyExpired(at: string): ProxyError {
  return createProxyError(
    'key_expired',
    `This API key expired at ${at}. Ask the owner of this olp server for a new one.`,
  );
}

export function modelNotAllowed(model: string, allowed: readonly string[]): ProxyError {
  return createProxyError(
    'model_not_allowed',
    `This key may not use the model '${model}'. Allowed: ${allowed.join(', ') || 'none'}.`,
    { param: 'model' },
  );
}

export function ownerOnly(): ProxyError {
  return createProxyError('owner_only', 'Only an owner key may call this endpoint.');
}

/** `/olp/keys/NAME` for a name no active key has. */
export function keyNotFound(name: string): ProxyError {
  return createProxyError('not_found', `No active key named '${bounded(name, 80)}'.`);
}

/** An owner key revoking, disabling or demoting itself through the page: it would lock its owner out. */
export function ownKeyLockout(what: string, param: string | null): ProxyError {
  return createProxyError(
    'invalid_request',
    `You cannot ${what} the key you are calling with: the page would lose its owner. ` +
      'Use another owner key, or `olp keys` on the server.',
    { param },
  );
}

/** A per-key or server-wide limit was hit; the headers say which and when it frees up. */
export function limitExceeded(
  code: 'rate_limit_exceeded' | 'concurrency_limit_exceeded' | 'budget_exceeded' | 'server_busy' | 'queue_timeout',
  message: string,
  retryAfter: number,
  headers: Record<string, string> = {},
): ProxyError {
  return createProxyError(code, message, { retryAfter: Math.max(1, Math.ceil(retryAfter)), headers });
}
