// What an error's response carries, whatever writes it: the OpenAI envelope and the headers.
import type { ProxyError } from './proxy-error.js';

/** The OpenAI error envelope for a ProxyError. */
export function toErrorBody(err: ProxyError): {
  error: { message: string; type: string; param: string | null; code: string };
} {
  return { error: { message: err.message, type: err.type, param: err.param, code: err.code } };
}

/** The headers an error's response carries whatever its envelope: retry advice and its own (`x-ratelimit-*`). */
export function errorHeaders(e: ProxyError): Record<string, string> {
  return {
    'x-should-retry': e.retryable ? 'true' : 'false',
    ...(e.retryAfter !== undefined ? { 'retry-after': String(e.retryAfter) } : {}),
    ...e.headers,
  };
}
