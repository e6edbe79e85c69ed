import type { Response } from 'express';
import type { Principal } from '../auth/index.js';
import type { Conversation } from '../conversation/index.js';
import type { ProxyError } from '../errors/index.js';
import type { Logger } from '../log/index.js';

/** Per-request state kept in `res.locals`. */
export interface RequestContext {
  requestId: string;
  log: Logger;
  /** performance.now() at arrival, for durations. */
  started: number;
  /** Date.now() at arrival, for the ledger. */
  startedAt: number;
  /**
   * Keeps the request's log line and ledger row from being written until the caller releases
   * it (a handler still tearing down a turn after the client left).
   */
  hold(): () => void;
  principal?: Principal;
  /** A conversation endpoint's request: its result feeds the log line. */
  conversation?: Conversation;
  aborted?: boolean;
  error?: ProxyError;
}

export function ctx(res: Response): RequestContext {
  return res.locals.ctx as RequestContext;
}
