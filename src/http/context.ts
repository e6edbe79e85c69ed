import type { Response } from 'express';
import type { Principal } from '../auth/index.js';
import type { Usage } from '../backends/types.js';
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
  /** Set once a backend was chosen and the turn began (so a failure is not a rejection). */
  backend?: string;
  queueMs?: number;
  session?: { mode: string; id?: string; reason?: string };
  /**
   * Keeps the request's log line and ledger row from being written until the caller releases
   * it (a handler still tearing down a turn after the client left).
   */
  hold(): () => void;
  principal?: Principal;
  /** Set by the chat route for the request's log line. */
  model?: string;
  /** The model that actually answered (differs from `model` after a fallback). */
  servedModel?: string;
  usage?: Usage | null;
  firstTokenMs?: number | null;
  aborted?: boolean;
  error?: ProxyError;
  /** What an estimate of the request's cost starts from: its prompt and the reply text it was sent. */
  charge?: { promptChars: number; sent: { chars: number } };
}

export function ctx(res: Response): RequestContext {
  return res.locals.ctx as RequestContext;
}
