import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Response } from 'express';
import {
  errorHeaders,
  invalidJson,
  invalidRequest,
  malformedRequest,
  requestTooLarge,
  toErrorBody,
  toProxyError,
  type ProxyError,
} from '../errors/index.js';
import { ctx, type RequestContext } from './context.js';
import { bounded } from '../log/index.js';
import { toAnthropicError } from '../wire/index.js';
import { capBody, readOffLimit } from './read-off.js';

/**
 * Anthropic's Messages paths (`/v1/messages`, `/v1/messages/count_tokens`, …): their errors take
 * Anthropic's envelope.
 */
export function isMessagesPath(url: string | undefined): boolean {
  return /^\/v1\/messages(?:[/?]|$)/.test(url ?? '');
}

/** Errors thrown by express's body parser, recognised by their `type`. */
function fromBodyParser(err: unknown, limit: number): ProxyError | undefined {
  const type = (err as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') return requestTooLarge(limit, err);
  if (type === 'entity.parse.failed') return invalidJson(err);
  if (type === 'encoding.unsupported' || type === 'charset.unsupported')
    return invalidRequest('Unsupported request body encoding; send UTF-8 JSON.', null, 'invalid_encoding', err);
  if (type === 'request.aborted')
    return invalidRequest('The request body was not fully received.', null, 'request_aborted', err);
  return undefined;
}

/** A URL whose percent-encoding does not decode (`/v1/models/%ff`). */
export function toInvalidPath(path: string, cause?: unknown): ProxyError {
  return malformedRequest(
    `The request URL ${JSON.stringify(path.slice(0, 200))} has invalid percent-encoding; ` +
      'encode characters as UTF-8 %XX sequences.',
    'invalid_path',
    cause,
  );
}

/**
 * Client errors in the http-errors style (`status` 4xx, `expose: true`) thrown by the body
 * parser and the router: a zlib error from an undecodable body, the router's URIError for a
 * path parameter. They are the client's fault, so they never become a 500.
 */
function fromHttpError(err: unknown, req: IncomingMessage): ProxyError | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown; message?: unknown; type?: unknown };
  const status = typeof e.status === 'number' ? e.status : e.statusCode;
  if (typeof status !== 'number' || status < 400 || status > 499) return undefined;
  // router's decodeParam sets status 400 on the URIError but not `expose`.
  if (err instanceof URIError) return toInvalidPath((req.url ?? '').split('?')[0] ?? '', err);
  if (e.expose !== true) return undefined;
  const encoding = bounded(String(req.headers['content-encoding'] ?? 'identity').toLowerCase(), 64);
  const detail = typeof e.message === 'string' ? e.message : 'unreadable request';
  if (e.type === undefined && encoding !== 'identity') {
    return malformedRequest(
      `The request body does not decode as its Content-Encoding (${encoding}) says: ${detail}.`,
      'invalid_encoding',
      err,
    );
  }
  // The body parser's other client errors (413, 415) are mapped above by their `type`.
  return malformedRequest(`The request could not be read: ${detail}.`, 'malformed_request', err);
}

/** Status and retry headers of an error, on a response that has not started. */
function setErrorHeaders(res: ServerResponse, e: ProxyError): void {
  res.statusCode = e.status;
  for (const [name, value] of Object.entries(errorHeaders(e))) res.setHeader(name, value);
}

/**
 * Sets status, error headers and the envelope: Anthropic's (and its status) on the Messages paths,
 * OpenAI's elsewhere.
 */
export function sendError(res: Response, e: ProxyError): void {
  setErrorHeaders(res, e);
  if (!isMessagesPath(res.req?.originalUrl ?? res.req?.url)) {
    res.json(toErrorBody(e));
    return;
  }
  const a = toAnthropicError(e);
  res.status(a.status).json(a.body);
}

/**
 * Answers a request olp stops receiving (its body timed out, its framing broke) outside
 * express's pipeline, on the response the server already made for it; the connection closes after.
 */
export function sendErrorAndClose(res: ServerResponse, e: ProxyError): void {
  const c = (res as { locals?: { ctx?: RequestContext } }).locals?.ctx;
  if (c) c.error = e;
  setErrorHeaders(res, e);
  const anthropic = isMessagesPath(res.req?.url) ? toAnthropicError(e) : undefined;
  if (anthropic) res.statusCode = anthropic.status;
  const body = JSON.stringify(anthropic?.body ?? toErrorBody(e));
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.setHeader('connection', 'close');
  res.end(body);
}

/** The whole HTTP/1.1 answer for a socket with no response object (half-sent headers, refused connections). */
export function toRawHttpResponse(e: ProxyError): string {
  const body = JSON.stringify(toErrorBody(e));
  const head = [
    `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    `x-should-retry: ${e.retryable ? 'true' : 'false'}`,
    ...(e.retryAfter !== undefined ? [`Retry-After: ${e.retryAfter}`] : []),
    ...Object.entries(e.headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/** The one place errors are rendered: before the first byte as a status and envelope, after it in-band. */
export function createErrorHandler(bodyLimit: number): ErrorRequestHandler {
  const readOff = readOffLimit(bodyLimit);
  return (err, req, res, _next) => {
    const c = ctx(res);
    // Already answered outside the pipeline (a body timeout); what follows is its aftermath.
    if (res.writableEnded && c.error) return;
    const e = fromBodyParser(err, bodyLimit) ?? fromHttpError(err, req) ?? toProxyError(err);
    c.error = e;
    if (e.status >= 500 && e.code === 'internal_error') c.log.error({ err }, 'internal error');
    if (res.headersSent) {
      if (res.writableEnded || res.destroyed) return;
      if (isMessagesPath(req.originalUrl))
        res.end(`event: error\ndata: ${JSON.stringify(toAnthropicError(e).body)}\n\n`);
      else res.end(`data: ${JSON.stringify(toErrorBody(e))}\n\n`);
      return;
    }
    if (res.destroyed) return;
    // Refused before its body was read (too large, no key, no route): what the client still sends
    // is read off and dropped, to a bound, so a client still writing hears this answer. Node would
    // read it off too, without a bound.
    if (!req.complete) capBody(req, readOff);
    sendError(res, e);
  };
}
