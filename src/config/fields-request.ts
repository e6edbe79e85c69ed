import { z } from 'zod';
import type { Field } from './field.js';

/** What a request may hold, how olp logs, and how long each side may take. */
export const REQUEST_FIELDS = {
  imageMaxBytes: {
    kind: 'int',
    schema: z
      .number()
      .int()
      .min(1024)
      .default(5 * 1024 * 1024),
    flag: 'image-max-bytes',
    env: 'OLP_IMAGE_MAX_BYTES',
    description: 'Largest decoded image in a request (400 above).',
  },
  imageMaxCount: {
    kind: 'int',
    schema: z.number().int().min(0).default(8),
    flag: 'image-max-count',
    env: 'OLP_IMAGE_MAX_COUNT',
    description: 'Most images in one request.',
  },
  imageMaxTotalBytes: {
    kind: 'int',
    schema: z
      .number()
      .int()
      .min(1024)
      .default(20 * 1024 * 1024),
    flag: 'image-max-total-bytes',
    env: 'OLP_IMAGE_MAX_TOTAL_BYTES',
    description: "Largest total of a request's decoded images.",
  },
  imageFetch: {
    kind: 'bool',
    schema: z.boolean().default(false),
    flag: 'image-fetch',
    env: 'OLP_IMAGE_FETCH',
    description: 'Fetch http(s) image URLs (true/false); off, such images get a 400.',
  },
  contextTokens: {
    kind: 'record',
    schema: z.record(z.string().min(1), z.number().int().min(1000)).default({ claude: 200_000, codex: 272_000 }),
    env: 'OLP_CONTEXT_TOKENS',
    description:
      'Prompt budget per model id or backend, as JSON ({"claude": 200000, "haiku": 200000}); the model id wins ' +
      'over the backend.',
  },
  contextOverflow: {
    kind: 'string',
    schema: z.enum(['refuse', 'trim']).default('refuse'),
    flag: 'context-overflow',
    env: 'OLP_CONTEXT_OVERFLOW',
    description:
      'A conversation sent whole over the budget: refuse (400 context_length_exceeded) or trim the oldest turns, ' +
      'to 75 % of the budget, with a note.',
  },
  logLevel: {
    kind: 'string',
    schema: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
    flag: 'log-level',
    env: 'OLP_LOG_LEVEL',
    description: 'pino log level; logs go to stderr (see logFormat).',
  },
  logFormat: {
    kind: 'string',
    schema: z.enum(['text', 'json']).default('text'),
    flag: 'log-format',
    env: 'OLP_LOG_FORMAT',
    description:
      "How olp serve logs to stderr: text (one line a record, for a person) or json (pino's JSON lines, for a " +
      'collector).',
  },
  bodyLimit: {
    kind: 'int',
    schema: z
      .number()
      .int()
      .min(1024)
      .default(10 * 1024 * 1024),
    flag: 'body-limit',
    env: 'OLP_BODY_LIMIT',
    description: 'Largest request body in bytes (413 above it).',
  },
  bodyTimeout: {
    kind: 'int',
    schema: z.number().int().min(1).default(30),
    flag: 'body-timeout',
    env: 'OLP_BODY_TIMEOUT',
    description: "Seconds a client may take to send a request's headers and body (408 after).",
  },
  maxClientConnections: {
    kind: 'int',
    schema: z.number().int().min(1).default(256),
    flag: 'max-client-connections',
    env: 'OLP_MAX_CLIENT_CONNECTIONS',
    description: 'Open connections one client address may hold (429 too_many_connections beyond).',
  },
  metrics: {
    kind: 'string',
    schema: z.enum(['off', 'owner', 'open']).default('off'),
    flag: 'metrics',
    env: 'OLP_METRICS',
    description:
      "GET /metrics in the Prometheus text format: off, owner (an owner key's bearer token), or open (no key: " +
      'for a trusted scrape on loopback).',
  },
  memberLogins: {
    kind: 'string',
    schema: z.enum(['required', 'preferred', 'off']).default('preferred'),
    flag: 'member-logins',
    env: 'OLP_MEMBER_LOGINS',
    description:
      "Members' own CLI logins, connected on the usage page: required (a member key on the machine's login " +
      'is refused, 403 own_login_required), preferred (served, the page asks them to connect one) or off ' +
      '(only the owner sets logins up).',
  },
  sseKeepalive: {
    kind: 'int',
    schema: z.number().int().min(0).default(0),
    flag: 'sse-keepalive',
    env: 'OLP_SSE_KEEPALIVE',
    description:
      'Seconds of silence after which a streamed reply gets an SSE comment line (0: off). It starts the stream ' +
      '(200) if it had not started: a later error is then sent in-band.',
  },
  timeout: {
    kind: 'int',
    schema: z.number().int().min(1).default(600),
    flag: 'timeout',
    env: 'OLP_TIMEOUT',
    description: 'Seconds a CLI run may take in total before it is stopped (504).',
  },
  idleTimeout: {
    kind: 'int',
    schema: z.number().int().min(1).default(180),
    flag: 'idle-timeout',
    env: 'OLP_IDLE_TIMEOUT',
    description: 'Seconds a CLI run may stay silent before it is stopped (504).',
  },
  retryTimeout: {
    kind: 'int',
    schema: z.number().int().min(1).default(60),
    flag: 'retry-timeout',
    env: 'OLP_RETRY_TIMEOUT',
    description:
      "Seconds a CLI run may spend only retrying its provider (claude's api_retry, codex's Reconnecting…) before " +
      'olp stops it (503 backend_unavailable).',
  },
  corsOrigins: {
    kind: 'list',
    schema: z
      .array(
        z.union([
          z.literal('*'),
          z.url({ protocol: /^https?$/, error: 'expected an origin like http://localhost:3000, or *' }),
        ]),
      )
      .default([]),
    flag: 'cors-origins',
    env: 'OLP_CORS_ORIGINS',
    description:
      'Browser origins allowed to call olp (comma-separated, e.g. http://localhost:3000; * for any). Off by default.',
  },
  clientTimeout: {
    kind: 'int',
    schema: z.number().int().min(1).default(120),
    flag: 'client-timeout',
    env: 'OLP_CLIENT_TIMEOUT',
    description:
      'Seconds a client may leave a streamed reply unread before olp ends it (the CLI waits meanwhile, without ' +
      'its idle timer running).',
  },
} satisfies Record<string, Field>;
