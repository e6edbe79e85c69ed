import { pino, type DestinationStream, type Logger } from 'pino';

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

/** The daemon's logger: JSON lines to stderr (stdout stays for the one-line base URL), secrets redacted. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'olp' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? pino.destination({ fd: 2, sync: false }),
  );
}

export { redact, sanitizeStderr } from './redact.js';

/** The longest client-given string olp stores or logs (model ids, names, paths). */
export const MAX_STORED_CHARS = 256;

/** A client-given string cut to what olp stores or logs, marked when cut; null and undefined pass. */
export function bounded<T extends string | null | undefined>(text: T, max = MAX_STORED_CHARS): T {
  if (typeof text !== 'string' || text.length <= max) return text;
  return `${text.slice(0, max)}…[cut ${text.length - max} chars]` as T;
}
