import { ERROR_CATALOGUE, type ErrorCode, type OpenAIErrorType, type VaryingRetryCode } from './catalogue.js';

/** Held only by this module, so nothing outside it can call the constructor. */
const SEAL: unique symbol = Symbol('ProxyError');

interface ErrorExtra {
  param?: string | null;
  cause?: unknown;
  headers?: Record<string, string>;
  retryAfter?: number;
  /** In place of the catalogue's (a limit that lifts soon is worth retrying, one hours away not). */
  retryable?: boolean;
  /** What the CLI or its provider said, apart from olp's words (for a layer that words it again). */
  detail?: string;
}

/**
 * The one error type that crosses layers. Status, OpenAI `type`, `retryable` and (unless the
 * code's varies) `Retry-After` come from ERROR_CATALOGUE by `code`; the HTTP layer only renders
 * it. Exported for `instanceof`; built only by the factories in src/errors.
 */
export class ProxyError extends Error {
  readonly status: number;
  readonly type: OpenAIErrorType;
  readonly code: ErrorCode;
  readonly param: string | null;
  /** Whether a client retrying the same request could succeed (drives `x-should-retry`). */
  readonly retryable: boolean;
  /** Seconds after which a retry makes sense (429/503), sent as `Retry-After`. */
  readonly retryAfter: number | undefined;
  /** Extra response headers (`x-ratelimit-*`). */
  readonly headers: Readonly<Record<string, string>>;
  /** What the CLI or its provider said, when the factory kept it apart from the message. */
  readonly detail: string | undefined;

  constructor(seal: typeof SEAL, code: ErrorCode, message: string, extra: ErrorExtra) {
    if (seal !== SEAL) throw new TypeError('a ProxyError is made by the factories in src/errors, not with new');
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    const spec: { status: number; type: OpenAIErrorType; retryable: boolean; retryAfter?: number | 'varies' } =
      ERROR_CATALOGUE[code];
    this.name = 'ProxyError';
    this.status = spec.status;
    this.type = spec.type;
    this.code = code;
    this.param = extra.param ?? null;
    this.retryable = extra.retryable ?? spec.retryable;
    this.retryAfter = spec.retryAfter === 'varies' ? extra.retryAfter : spec.retryAfter;
    this.headers = extra.headers ?? {};
    this.detail = extra.detail;
  }
}

/** What a factory adds to a code: a computed `retryAfter` exactly where the catalogue says it varies. */
export type ExtraFor<C extends ErrorCode> = Omit<ErrorExtra, 'retryAfter'> &
  (C extends VaryingRetryCode ? { retryAfter: number } : { retryAfter?: never });

/** Builds a ProxyError whose status, type and retry behaviour are the catalogue's for `code`. */
export function createProxyError<C extends ErrorCode>(
  code: C,
  message: string,
  ...extra: C extends VaryingRetryCode ? [ExtraFor<C>] : [ExtraFor<C>?]
): ProxyError {
  return new ProxyError(SEAL, code, message, extra[0] ?? {});
}

export function isProxyError(err: unknown): err is ProxyError {
  return err instanceof ProxyError;
}
