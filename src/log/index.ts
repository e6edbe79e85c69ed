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
