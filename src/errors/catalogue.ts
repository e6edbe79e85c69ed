/** OpenAI's error `type` strings, the only ones olp sends. */
export type OpenAIErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'rate_limit_error'
  | 'server_error';

/** What a code fixes about every error that carries it. */
export interface ErrorSpec {
  readonly status: number;
  readonly type: OpenAIErrorType;
  /** Whether a client retrying the same request could succeed (drives `x-should-retry`). */
  readonly retryable: boolean;
  /** `Retry-After` in seconds; `'varies'` where the factory computes it per error. */
  readonly retryAfter?: number | 'varies';
}

/**
 * Every error code olp sends, and what it fixes. docs/errors.md has one row per key (with the
 * "when" text), pinned by test/unit/errors-catalogue.test.ts.
 */
export const ERROR_CATALOGUE = {
  // the request itself
  invalid_request: { status: 400, type: 'invalid_request_error', retryable: false },
  invalid_json: { status: 400, type: 'invalid_request_error', retryable: false },
  request_too_large: { status: 413, type: 'invalid_request_error', retryable: false },
  malformed_request: { status: 400, type: 'invalid_request_error', retryable: false },
  invalid_encoding: { status: 400, type: 'invalid_request_error', retryable: false },
  unsupported_media_type: { status: 415, type: 'invalid_request_error', retryable: false },
  invalid_path: { status: 400, type: 'invalid_request_error', retryable: false },
  request_aborted: { status: 400, type: 'invalid_request_error', retryable: false },
  request_timeout: { status: 408, type: 'invalid_request_error', retryable: false },
  headers_too_large: { status: 431, type: 'invalid_request_error', retryable: false },
  too_many_connections: { status: 429, type: 'rate_limit_error', retryable: true, retryAfter: 1 },
  client_read_timeout: { status: 408, type: 'invalid_request_error', retryable: false },
  // keys and policy
  invalid_api_key: { status: 401, type: 'authentication_error', retryable: false },
  key_expired: { status: 401, type: 'authentication_error', retryable: false },
  key_disabled: { status: 403, type: 'permission_error', retryable: false },
  model_not_allowed: { status: 403, type: 'permission_error', retryable: false },
  owner_only: { status: 403, type: 'permission_error', retryable: false },
  // members' own logins (`--member-logins`, /olp/me/login)
  own_login_required: { status: 403, type: 'permission_error', retryable: false },
  member_logins_off: { status: 403, type: 'permission_error', retryable: false },
  login_shared: { status: 403, type: 'permission_error', retryable: false },
  login_rejected: { status: 422, type: 'invalid_request_error', retryable: false },
  device_auth_running: { status: 409, type: 'invalid_request_error', retryable: false },
  rate_limited: { status: 429, type: 'rate_limit_error', retryable: true, retryAfter: 'varies' },
  device_auth_failed: { status: 502, type: 'server_error', retryable: true },
  // a key another instance made (its tag says which), sent here instead of through the front door
  wrong_instance: { status: 421, type: 'invalid_request_error', retryable: false },
  // admission limits
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error', retryable: true, retryAfter: 'varies' },
  concurrency_limit_exceeded: { status: 429, type: 'rate_limit_error', retryable: true, retryAfter: 'varies' },
  // A spent budget comes back at the period's end, not in seconds: retrying is pointless.
  budget_exceeded: { status: 429, type: 'rate_limit_error', retryable: false, retryAfter: 'varies' },
  server_busy: { status: 429, type: 'rate_limit_error', retryable: true, retryAfter: 'varies' },
  queue_timeout: { status: 429, type: 'rate_limit_error', retryable: true, retryAfter: 'varies' },
  // what the request names
  model_not_found: { status: 404, type: 'invalid_request_error', retryable: false },
  response_not_found: { status: 404, type: 'invalid_request_error', retryable: false },
  not_found: { status: 404, type: 'invalid_request_error', retryable: false },
  context_length_exceeded: { status: 400, type: 'invalid_request_error', retryable: false },
  unsupported_value: { status: 400, type: 'invalid_request_error', retryable: false },
  unsupported_content: { status: 400, type: 'invalid_request_error', retryable: false },
  invalid_image: { status: 400, type: 'invalid_request_error', retryable: false },
  invalid_document: { status: 400, type: 'invalid_request_error', retryable: false },
  provider_invalid_request: { status: 400, type: 'invalid_request_error', retryable: false },
  // the CLI behind the request
  backend_not_installed: { status: 503, type: 'server_error', retryable: false },
  backend_not_logged_in: { status: 503, type: 'server_error', retryable: false },
  // the key's login (olp logins) is gone, or has no credential for the CLI its model runs on
  login_not_set_up: { status: 503, type: 'server_error', retryable: false },
  // the key's login was refused by its provider (a 401 on a run): its owner renews it
  login_refused: { status: 503, type: 'server_error', retryable: false },
  backend_rate_limited: { status: 429, type: 'rate_limit_error', retryable: true, retryAfter: 'varies' },
  // retryable only when the window resets within a minute (the factory says which)
  plan_limit_reached: { status: 429, type: 'rate_limit_error', retryable: false, retryAfter: 'varies' },
  backend_overloaded: { status: 503, type: 'server_error', retryable: true, retryAfter: 10 },
  backend_unavailable: { status: 503, type: 'server_error', retryable: true, retryAfter: 30 },
  backend_timeout: { status: 504, type: 'server_error', retryable: true },
  // Only ever in-band: a streamed reply whose text came partly from an attempt the CLI abandoned.
  backend_retry_mid_stream: { status: 502, type: 'server_error', retryable: true },
  backend_error: { status: 502, type: 'server_error', retryable: true },
  session_not_found: { status: 502, type: 'server_error', retryable: true },
  backend_bad_output: { status: 502, type: 'server_error', retryable: false },
  replay_no_match: { status: 503, type: 'server_error', retryable: false },
  // olp itself
  shutting_down: { status: 503, type: 'server_error', retryable: true, retryAfter: 5 },
  internal_error: { status: 500, type: 'server_error', retryable: true },
} as const satisfies Record<string, ErrorSpec>;

type Catalogue = typeof ERROR_CATALOGUE;

/** Every code olp can send. */
export type ErrorCode = keyof Catalogue;

/** The codes whose entry matches `Spec` (e.g. all 400 invalid_request_error codes). */
export type CodesWhere<Spec> = { [C in ErrorCode]: Catalogue[C] extends Spec ? C : never }[ErrorCode];

/** Codes a plain 400 `invalid_request_error` may carry. */
export type InvalidRequestCode = CodesWhere<{ status: 400; type: 'invalid_request_error' }>;

/** Codes whose `Retry-After` is computed per error, so their factory must supply it. */
export type VaryingRetryCode = CodesWhere<{ retryAfter: 'varies' }>;
