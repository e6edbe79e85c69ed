import { createServer } from 'node:net';
import type { Config } from '../config/index.js';
import { findLockHolder } from '../store/index.js';
import { askHealth } from './doctor-health.js';
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
