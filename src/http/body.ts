import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { capBody, readOffLimit } from './read-off.js';

/** A body-parser style client error: the error handler maps it by `type` (see errors.ts). */
function bodyError(message: string, type: string, cause?: Error, status = 400): Error {
  const err = cause ?? new Error(message);
  return Object.assign(err, { status, statusCode: status, expose: true, type });
}

/**
 * An uncompressed body whose Content-Length is over the limit (express.json says 413 only once the
 * whole body has arrived). A compressed body's limit is on what it inflates to, so it is left to
 * express.json.
 */
function declaredTooLarge(req: Request, limit: number): boolean {
  const h = req.headers;
  const raw = h['content-length'];
  if (raw === undefined || h['transfer-encoding'] !== undefined || !/^\d{1,20}$/.test(raw)) return false;
  const encoding = h['content-encoding'];
  return (encoding === undefined || encoding.toLowerCase() === 'identity') && Number(raw) > limit;
}

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/**
 * The declared length of a body olp can read as it is: a Content-Length within the limit, not
 * chunked, not compressed, UTF-8 or no charset. Undefined for anything else.
 */
function plainLength(req: Request, limit: number): number | undefined {
  const h = req.headers;
  if (h['transfer-encoding'] !== undefined) return undefined;
  const encoding = h['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return undefined;
  const charset = CHARSET.exec(h['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8') return undefined;
  const raw = h['content-length'];
  if (raw === undefined || !/^\d{1,15}$/.test(raw)) return undefined;
  const length = Number(raw);
  return length <= limit ? length : undefined;
}

/**
 * The JSON body parser of the POST routes. Any content type is read as JSON (`curl -d` sends
 * form encoding by default; the Messages routes refuse anything but application/json before this,
 * as Anthropic does: messages-headers.ts) and an empty body is `{}`, as express.json with `strict: false`.
 * A plain body (see `plainLength`: what OpenAI clients send) is read here: express.json's
 * general path (charset decoding, inflation, its stream plumbing) took 0.2 ms of a request that
 * olp otherwise serves in about 1.5 ms, against 0.1 here. Everything else, and every body over
 * the limit, goes to express.json itself; the errors of this path carry the same `type` as its
 * errors, so the error handler answers both alike.
 */
export function createJsonBody(limit: number): RequestHandler {
  const general = express.json({ limit, type: () => true, strict: false });
  const readOff = readOffLimit(limit);
  return (req: Request, res: Response, next: NextFunction): void => {
    // A declared length over the limit is refused at once: express.json answers only after
    // reading the body, so a client that declares 50 MB and sends none waited for the body
    // timeout (408) instead of hearing 413. The connection is not closed under a client still
    // sending: the error handler reads off the rest, to a bound (see read-off.ts).
    if (declaredTooLarge(req, limit))
      return next(bodyError('request entity too large', 'entity.too.large', undefined, 413));
    const length = plainLength(req, limit);
    if (length === undefined || req.complete || req.readableEnded) {
      // express.json reads a chunked body over the limit to its end before it answers: bounded here.
      capBody(req, readOff);
      return general(req, res, next);
    }
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (err?: Error) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onError);
      if (err) return next(err);
      if (received !== length)
        return next(bodyError('request size did not match content length', 'request.size.invalid'));
      const text = Buffer.concat(chunks, received).toString('utf8');
      try {
        req.body = text.length === 0 ? {} : JSON.parse(text);
      } catch (e) {
        return next(Object.assign(bodyError((e as Error).message, 'entity.parse.failed', e as Error), { body: text }));
      }
      next();
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      // More than it said: stop reading, as express.json does.
      if (received > length)
        return finish(bodyError('request size did not match content length', 'request.size.invalid'));
      chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onClose = () => finish(bodyError('request aborted', 'request.aborted'));
    const onError = (err: Error) => finish(bodyError(err.message, 'request.aborted', err));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
    req.on('error', onError);
  };
}
