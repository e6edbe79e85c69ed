import type { NextFunction, Request, Response } from 'express';
import { invalidRequest, unsupportedMediaType } from '../errors/index.js';
import { bounded } from '../log/index.js';

/** An `anthropic-version`: a date, as every version Anthropic has published (`2023-06-01`). */
const VERSION = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/**
 * The media type of a Content-Type, without its parameters (`application/json; charset=utf-8` →
 * `application/json`).
 */
function mediaType(header: string | undefined): string | undefined {
  return header?.split(';', 1)[0]?.trim().toLowerCase();
}

/**
 * The headers Anthropic's Messages API requires of a POST, checked as it checks them, after the
 * key and before the body is read: an `anthropic-version` (its clients all send one; Anthropic
 * answers 400 without it), and a JSON body (`Content-Type: application/json`, 415 otherwise).
 * The OpenAI routes read any body as JSON, as `curl -d` sends form encoding; here nothing does,
 * and a `text/plain` POST is what a web page can send another origin without asking first.
 */
export function checkMessagesHeaders(req: Request, _res: Response, next: NextFunction): void {
  const raw = req.headers['anthropic-version'];
  const version = Array.isArray(raw) ? raw.join(', ') : raw;
  if (version === undefined)
    throw invalidRequest('anthropic-version: header is required (a date, such as 2023-06-01).', 'anthropic-version');
  if (!VERSION.test(version))
    throw invalidRequest(
      `anthropic-version: ${JSON.stringify(bounded(version, 64))} is not a version; send a date, such as 2023-06-01.`,
      'anthropic-version',
    );
  const type = req.headers['content-type'];
  if (mediaType(type) !== 'application/json') throw unsupportedMediaType(type);
  next();
}
