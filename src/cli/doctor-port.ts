import { createServer } from 'node:net';
import type { Config } from '../config/index.js';
import { findLockHolder } from '../store/index.js';
import { toSeconds } from './output.js';

// `olp doctor`'s port line. A port in use is asked GET /health, and what happens decides the words:
// olp answers, something else answers (or drops the connection), nothing listens after all, or the
// connection is accepted but no answer comes in time. On a busy machine the last is most often an olp
// whose /health waits on its CLIs' status commands: a time-out is said as one, never as a verdict.

/** How long doctor waits for an answer from /health (a running olp may first ask its CLIs' status). */
export const HEALTH_TIMEOUT_MS = 5000;

/** Why host:port cannot be bound right now (EADDRINUSE, EACCES…), or null when it can. */
function bindError(host: string, port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    s.listen(port, host, () => s.close(() => resolve(null)));
  });
}

/** The address to reach a listener on `host` from this machine (a wildcard bind answers on loopback). */
function toReachable(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** What GET /health at a port in use came to. */
export type HealthAnswer =
  /** olp's answer: `{"status": "ok" | "degraded" | "draining"}`. */
  | { kind: 'olp'; status: string }
  /** An answer that is not olp's, or a connection closed without one. */
  | { kind: 'other' }
  /** Nothing listens (the connection was refused). */
  | { kind: 'refused' }
  /** The connection was accepted, but no whole answer came within the time. */
  | { kind: 'timeout' };

/** fetch's cause codes (one per address tried when a name resolves to several). */
function causeCodes(err: unknown): string[] {
  const cause = (err as { cause?: { code?: unknown; errors?: { code?: unknown }[] } }).cause;
  const all = [cause, ...(cause?.errors ?? [])];
  return all.map((c) => c?.code).filter((c): c is string => typeof c === 'string');
}

/** Asks GET /health at host:port, waiting at most `timeoutMs` for the whole answer. */
export async function askHealth(host: string, port: number, timeoutMs: number): Promise<HealthAnswer> {
  try {
    const res = await fetch(`http://${toReachable(host)}:${port}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await res.json()) as { status?: unknown };
    return typeof body.status === 'string' ? { kind: 'olp', status: body.status } : { kind: 'other' };
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') return { kind: 'timeout' };
    const codes = causeCodes(err);
    if (codes.length > 0 && codes.every((c) => c === 'ECONNREFUSED')) return { kind: 'refused' };
    return { kind: 'other' };
  }
}

/** The port line: free, this state dir's olp on it (asked through /health), or why olp could not listen there. */
export async function describePort(config: Config, timeoutMs = HEALTH_TIMEOUT_MS): Promise<string> {
  const where = `${config.host}:${config.port}`;
  const bind = await bindError(config.host, config.port);
  if (bind === null) return `ok  ${where} is free`;
  if (bind.code !== 'EADDRINUSE') return `PROBLEM  ${where} cannot be used: ${bind.message}`;
  const answer = await askHealth(config.host, config.port, timeoutMs);
  const h = findLockHolder(config.stateDir)?.holder;
  // This state dir's olp, as its lock names it, listening on this very port.
  const ours = h && h.port === config.port ? `pid ${h.pid}, version ${h.version ?? 'unknown'}` : null;
  const late = `did not answer /health within ${toSeconds(timeoutMs / 1000)}`;
  switch (answer.kind) {
    case 'olp':
      return ours
        ? `ok  ${where}: olp is running here (${ours}; /health: ${answer.status})`
        : `PROBLEM  ${where}: another olp answers here (/health: ${answer.status}), not this state dir's; ` +
            'stop it or pick another --port';
    case 'timeout':
      return ours
        ? `busy  ${where}: olp is running here (${ours}) but ${late}`
        : `PROBLEM  ${where} is in use: something accepted the connection but ${late} ` +
            '(an olp of another state dir on a busy machine, or another program); pick another with --port';
    case 'refused':
      return (
        `PROBLEM  ${where} was in use, but nothing answered on it (it may just have stopped); ` + 'run olp doctor again'
      );
    case 'other':
      return `PROBLEM  ${where} is taken by another program; pick another with --port`;
  }
}
