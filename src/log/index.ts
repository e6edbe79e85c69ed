import { pino, type DestinationStream, type Logger } from 'pino';
import { createLogOutput } from './output.js';

export type { Logger } from 'pino';

/** Paths whose values never reach a log line. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'authorization',
  'token',
  'apiKey',
  'env.ANTHROPIC_API_KEY',
  'env.ANTHROPIC_AUTH_TOKEN',
  'env.CLAUDE_CODE_OAUTH_TOKEN',
  'env.OPENAI_API_KEY',
  'env.CODEX_API_KEY',
];

export { createLogOutput, type LogFormat, type LogOutput } from './output.js';
export { toTextLine } from './text-line.js';

/**
 * The daemon's logger: pino records (secrets redacted) to `destination`, by default stderr as JSON
 * lines through `createLogOutput` (stdout stays for the one-line base URL).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'olp' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? createLogOutput(process.stderr, 'json'),
  );
}

export { redact } from './redact.js';
export { sanitizeStderr } from './stderr.js';

/** The longest client-given string olp stores or logs (model ids, names, paths). */
export const MAX_STORED_CHARS = 256;

/** A client-given string cut to what olp stores or logs, marked when cut; null and undefined pass. */
export function bounded<T extends string | null | undefined>(text: T, max = MAX_STORED_CHARS): T {
  if (typeof text !== 'string' || text.length <= max) return text;
  return `${text.slice(0, max)}…[cut ${text.length - max} chars]` as T;
}
