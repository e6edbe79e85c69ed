import type { Response } from 'express';
import type { Principal } from '../auth/index.js';
import type { Usage } from '../backends/types.js';
import type { ProxyError } from '../errors/index.js';
import type { Logger } from '../log/index.js';

/** Per-request state kept in `res.locals`. */
export interface RequestContext {
  requestId: string;
  log: Logger;
  started: number;
  principal?: Principal;
  /** Set by the chat route for the request's log line. */
  model?: string;
  usage?: Usage | null;
  firstTokenMs?: number | null;
  aborted?: boolean;
  error?: ProxyError;
}

export function ctx(res: Response): RequestContext {
  return res.locals.ctx as RequestContext;
}
