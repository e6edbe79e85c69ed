import type { ErrorCode, ProxyError } from '../../errors/index.js';

/** Anthropic's error `type` strings (the SDK's `ErrorType`, and the documented `request_too_large`). */
type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'api_error'
  | 'overloaded_error';

/** Anthropic's error envelope: the body of an error status, and the data of an in-band `event: error`. */
interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

const invalid = { status: 400, type: 'invalid_request_error' } as const;
const overloaded = { status: 529, type: 'overloaded_error' } as const;
const apiError = { status: 500, type: 'api_error' } as const;
const rateLimited = { status: 429, type: 'rate_limit_error' } as const;
const notFound = { status: 404, type: 'not_found_error' } as const;
// A CLI login on the machine running olp: the same 503 as on the OpenAI routes, never retried.
const cliLogin = { status: 503, type: 'api_error' } as const;

/**
 * Every catalogue code as Anthropic's status and type, chosen for what Claude Code (2.1.197) does
 * with them: it retries 5xx and 529 up to ten times, and any error whose body says
 * `"type":"overloaded_error"` whatever its headers, so a deterministic failure is never an
 * overloaded_error; it reads `x-should-retry: false` before the status (2.1.197 and 2.1.332 alike:
 * no retry), so the CLI logins' failures (backend_not_logged_in, login_refused, login_not_set_up,
 * backend_not_installed) keep the 503 they have on every wire format, as an api_error; a 401 or
 * 403 would tell its user to run /login, which does nothing for a login on the machine running
 * olp. A 413 whose message names the "context window" is its "Prompt is too long", which it
 * answers by compacting; a 404 tells its user that the model is not available. Retrying stays as
 * the catalogue says, through `x-should-retry`.
 */
export const ANTHROPIC_ERRORS: Readonly<Record<ErrorCode, { status: number; type: AnthropicErrorType }>> = {
  invalid_request: invalid,
  invalid_json: invalid,
  request_too_large: { status: 413, type: 'request_too_large' },
  malformed_request: invalid,
  invalid_encoding: invalid,
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  invalid_path: invalid,
  request_aborted: invalid,
  // "other 4XX status codes" are invalid_request_error (Anthropic's errors page).
  request_timeout: { status: 408, type: 'invalid_request_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  too_many_connections: rateLimited,
  client_read_timeout: { status: 408, type: 'invalid_request_error' },
  invalid_api_key: { status: 401, type: 'authentication_error' },
  key_expired: { status: 401, type: 'authentication_error' },
  key_disabled: { status: 403, type: 'permission_error' },
  model_not_allowed: { status: 403, type: 'permission_error' },
  owner_only: { status: 403, type: 'permission_error' },
  own_login_required: { status: 403, type: 'permission_error' },
  member_logins_off: { status: 403, type: 'permission_error' },
  login_shared: { status: 403, type: 'permission_error' },
  login_rejected: { status: 422, type: 'invalid_request_error' },
  device_auth_running: { status: 409, type: 'invalid_request_error' },
  rate_limited: rateLimited,
  device_auth_failed: apiError,
  wrong_instance: { status: 421, type: 'invalid_request_error' },
  rate_limit_exceeded: rateLimited,
  concurrency_limit_exceeded: rateLimited,
  budget_exceeded: rateLimited,
  // olp's queue is full or did not free up in time: the server's capacity, not the key's limit.
  server_busy: overloaded,
  queue_timeout: overloaded,
  model_not_found: notFound,
  response_not_found: notFound,
  not_found: notFound,
  context_length_exceeded: { status: 413, type: 'request_too_large' },
  unsupported_value: invalid,
  unsupported_content: invalid,
  invalid_image: invalid,
  invalid_document: invalid,
  provider_invalid_request: invalid,
  backend_not_installed: cliLogin,
  backend_not_logged_in: cliLogin,
  login_not_set_up: cliLogin,
  login_refused: cliLogin,
  backend_rate_limited: rateLimited,
  // Retry-After counts down to the window's reset; Claude Code waits for up to a minute of it.
  plan_limit_reached: rateLimited,
  backend_overloaded: overloaded,
  backend_unavailable: overloaded,
  backend_timeout: { status: 504, type: 'timeout_error' },
  backend_retry_mid_stream: apiError,
  backend_error: apiError,
  session_not_found: apiError,
  // Not retried (x-should-retry: false, which Claude Code obeys before the status).
  backend_bad_output: apiError,
  // The request matches no recorded call: the same request never will.
  replay_no_match: invalid,
  shutting_down: overloaded,
  internal_error: apiError,
};

/** Claude Code reads a 413 as "Prompt is too long" (and compacts) only when its message names the context window. */
function messageOf(e: ProxyError): string {
  if (e.code === 'context_length_exceeded' && !/context window/i.test(e.message))
    return `Prompt is too long for the model's context window. ${e.message}`;
  return e.message;
}

/**
 * A ProxyError as Anthropic's status and error envelope (for a status, or in-band); its headers are
 * `errorHeaders`'.
 */
export function toAnthropicError(e: ProxyError): { status: number; body: AnthropicErrorBody } {
  const mapped = ANTHROPIC_ERRORS[e.code];
  return { status: mapped.status, body: { type: 'error', error: { type: mapped.type, message: messageOf(e) } } };
}
