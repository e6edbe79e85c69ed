import type { ErrorRequestHandler, Response } from 'express';
import { invalidJson, invalidRequest, requestTooLarge, toErrorBody, toProxyError, type ProxyError } from '../errors/index.js';
import { ctx } from './context.js';

/** Errors thrown by express's body parser, recognised by their `type`. */
function fromBodyParser(err: unknown, limit: number): ProxyError | undefined {
  const type = (err as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') return requestTooLarge(limit, err);
  if (type === 'entity.parse.failed') return invalidJson(err);
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return invalidRequest('Unsupported request body encoding; send UTF-8 JSON.', null, 'invalid_encoding', err);
  if (type === 'request.aborted') return invalidRequest('The request body was not fully received.', null, 'request_aborted', err);
  return undefined;
}

/** Sets status, OpenAI error headers and the envelope. */
export function sendError(res: Response, e: ProxyError): void {
  res.status(e.status);
  res.setHeader('x-should-retry', e.retryable ? 'true' : 'false');
  if (e.retryAfter !== undefined) res.setHeader('retry-after', String(e.retryAfter));
  for (const [name, value] of Object.entries(e.headers)) res.setHeader(name, value);
  res.json(toErrorBody(e));
}

/** The one place errors are rendered: before the first byte as a status and envelope, after it in-band. */
export function createErrorHandler(bodyLimit: number): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const e = fromBodyParser(err, bodyLimit) ?? toProxyError(err);
    const c = ctx(res);
    c.error = e;
    if (e.status >= 500 && e.code === 'internal_error') c.log.error({ err }, 'internal error');
    if (res.headersSent) {
      if (!res.writableEnded && !res.destroyed) res.end(`data: ${JSON.stringify(toErrorBody(e))}\n\n`);
      return;
    }
    if (res.destroyed) return;
    sendError(res, e);
  };
}
