import { createProxyError, isProxyError, type ProxyError } from './proxy-error.js';

export {
  ERROR_CATALOGUE,
  type ErrorCode,
  type ErrorSpec,
  type InvalidRequestCode,
  type OpenAIErrorType,
} from './catalogue.js';
// The class is exported for `instanceof`; its constructor is sealed, so errors come only from the factories
// (client.ts, backend.ts and the server errors below).
export { ProxyError, isProxyError } from './proxy-error.js';
export { errorHeaders, toErrorBody } from './response.js';
// The factories, one file per side: what a client sent (4xx), what a CLI did.
export * from './backend.js';
export * from './client.js';
export * from './member-logins.js';

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

// --- server errors -------------------------------------------------------------------

export function shuttingDown(): ProxyError {
  return createProxyError('shutting_down', 'olp is shutting down and does not accept new requests.');
}

export function internalError(cause?: unknown): ProxyError {
  return createProxyError(
    'internal_error',
    'olp hit an unexpected error while handling this request. The details are in the server log under this request id.',
    { cause },
  );
}

/** Anything thrown becomes a ProxyError; unknown errors become a 500 that keeps the original as cause. */
export function toProxyError(err: unknown): ProxyError {
  return isProxyError(err) ? err : internalError(err);
}
export { describeType, firstIssue } from './issues.js';
