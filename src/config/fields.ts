import { availableParallelism, homedir, totalmem } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

type Kind = 'string' | 'int' | 'list' | 'record' | 'bool';

export interface Field {
  kind: Kind;
  /**
   * For lists: whether a comma separates items. Not where a comma can be part of a value (a
   * codex `key=value` override may hold a TOML inline table); such a list takes one item per
   * flag, or a JSON array in the environment.
   */
  commas?: false;
  schema: z.ZodType;
  /** Flag name without dashes; absent for file-only fields. */
  flag?: string;
  env?: string;
  description: string;
}

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected environment variable names');

/** Every setting olp reads, with its flag, env name and schema. The README's table mirrors this. */
export const FIELDS = {
  host: { kind: 'string', schema: z.string().min(1).default('127.0.0.1'), flag: 'host', env: 'OLP_HOST', description: 'Address to bind. Anything but loopback exposes olp to your network.' },
  port: { kind: 'int', schema: z.number().int().min(0).max(65535).default(8787), flag: 'port', env: 'OLP_PORT', description: 'TCP port (0 picks a free one).' },
  stateDir: { kind: 'string', schema: z.string().min(1).default(join(homedir(), '.olp')), flag: 'state-dir', env: 'OLP_STATE_DIR', description: 'State directory (database, workspaces, config.json), created 0700.' },
  runDir: { kind: 'string', schema: z.string().min(1).optional(), flag: 'run-dir', env: 'OLP_RUN_DIR', description: "Where each request's throwaway home and working directory are made, created 0700 (default: a private folder in /dev/shm when it is tmpfs, else <state-dir>/run)." },
  claudeBin: { kind: 'string', schema: z.string().min(1).default('claude'), flag: 'claude-bin', env: 'OLP_CLAUDE_BIN', description: 'The claude executable (a path, or a name looked up on PATH).' },
  claudeCredentials: { kind: 'string', schema: z.string().min(1).optional(), flag: 'claude-credentials', env: 'OLP_CLAUDE_CREDENTIALS', description: "The claude login file linked into each run's home (default: $CLAUDE_CONFIG_DIR or ~/.claude, /.credentials.json)." },
  claudePassEnv: { kind: 'list', schema: z.array(envName).default([]), flag: 'claude-pass-env', env: 'OLP_CLAUDE_PASS_ENV', description: "Names of the daemon's environment variables handed to claude (e.g. ANTHROPIC_API_KEY). Off by default." },
  claudeEnv: { kind: 'record', schema: z.record(envName, z.string()).default({}), env: 'OLP_CLAUDE_ENV', description: 'Extra environment for claude, as a JSON object (config file or env). Off by default.' },
  codexBin: { kind: 'string', schema: z.string().min(1).default('codex'), flag: 'codex-bin', env: 'OLP_CODEX_BIN', description: 'The codex executable (a path, or a name looked up on PATH).' },
  codexAuth: { kind: 'string', schema: z.string().min(1).optional(), flag: 'codex-auth', env: 'OLP_CODEX_AUTH', description: "The codex login file linked into each run's CODEX_HOME (default: $CODEX_HOME or ~/.codex, /auth.json)." },
  codexPassEnv: { kind: 'list', schema: z.array(envName).default([]), flag: 'codex-pass-env', env: 'OLP_CODEX_PASS_ENV', description: "Names of the daemon's environment variables handed to codex (e.g. CODEX_API_KEY). Off by default." },
  codexEnv: { kind: 'record', schema: z.record(envName, z.string()).default({}), env: 'OLP_CODEX_ENV', description: 'Extra environment for codex, as a JSON object (config file or env). Off by default.' },
  codexConfig: { kind: 'list', commas: false, schema: z.array(z.string().regex(/^[A-Za-z0-9_.-]+=/, 'expected key=value')).default([]), flag: 'codex-config', env: 'OLP_CODEX_CONFIG', description: 'codex `-c key=value` overrides for every run (repeat the flag; in the environment a JSON array), e.g. a model provider.' },
  models: {
    kind: 'record',
    schema: z.record(z.string().min(1), z.union([z.object({ backend: z.enum(['claude', 'codex']), model: z.string().min(1) }), z.null()])).default({}),
    env: 'OLP_MODELS',
    description: 'Model table changes as JSON: {"id": {"backend": "claude"|"codex", "model": "cli name"}} adds or renames, {"id": null} hides.',
  },
  fallbacks: {
    kind: 'record',
    schema: z.record(z.string().min(1), z.array(z.string().min(1)).min(1)).default({}),
    env: 'OLP_FALLBACKS',
    description: 'Fallback chains as JSON: {"sonnet": ["codex"]} tries codex when sonnet is unavailable or rate-limited before any output.',
  },
  imageMaxBytes: { kind: 'int', schema: z.number().int().min(1024).default(5 * 1024 * 1024), flag: 'image-max-bytes', env: 'OLP_IMAGE_MAX_BYTES', description: 'Largest decoded image in a request (400 above).' },
  imageMaxCount: { kind: 'int', schema: z.number().int().min(0).default(8), flag: 'image-max-count', env: 'OLP_IMAGE_MAX_COUNT', description: 'Most images in one request.' },
  imageMaxTotalBytes: { kind: 'int', schema: z.number().int().min(1024).default(20 * 1024 * 1024), flag: 'image-max-total-bytes', env: 'OLP_IMAGE_MAX_TOTAL_BYTES', description: "Largest total of a request's decoded images." },
  imageFetch: { kind: 'bool', schema: z.boolean().default(false), flag: 'image-fetch', env: 'OLP_IMAGE_FETCH', description: 'Fetch http(s) image URLs (true/false); off, such images get a 400.' },
  contextTokens: {
    kind: 'record',
    schema: z.record(z.string().min(1), z.number().int().min(1000)).default({ claude: 200_000, codex: 272_000 }),
    env: 'OLP_CONTEXT_TOKENS',
    description: 'Prompt budget per model id or backend, as JSON ({"claude": 200000, "haiku": 200000}); the model id wins over the backend.',
  },
  contextOverflow: { kind: 'string', schema: z.enum(['refuse', 'trim']).default('refuse'), flag: 'context-overflow', env: 'OLP_CONTEXT_OVERFLOW', description: 'A conversation sent whole over the budget: refuse (400 context_length_exceeded) or trim the oldest turns, to 75 % of the budget, with a note.' },
  logLevel: { kind: 'string', schema: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'), flag: 'log-level', env: 'OLP_LOG_LEVEL', description: 'pino log level; logs go to stderr (see logFormat).' },
  logFormat: { kind: 'string', schema: z.enum(['text', 'json']).default('text'), flag: 'log-format', env: 'OLP_LOG_FORMAT', description: "How olp serve logs to stderr: text (one line a record, for a person) or json (pino's JSON lines, for a collector)." },
  bodyLimit: { kind: 'int', schema: z.number().int().min(1024).default(10 * 1024 * 1024), flag: 'body-limit', env: 'OLP_BODY_LIMIT', description: 'Largest request body in bytes (413 above it).' },
  bodyTimeout: { kind: 'int', schema: z.number().int().min(1).default(30), flag: 'body-timeout', env: 'OLP_BODY_TIMEOUT', description: "Seconds a client may take to send a request's headers and body (408 after)." },
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
    description: "GET /metrics in the Prometheus text format: off, owner (an owner key's bearer token), or open (no key: for a trusted scrape on loopback).",
  },
  sseKeepalive: {
    kind: 'int',
    schema: z.number().int().min(0).default(0),
    flag: 'sse-keepalive',
    env: 'OLP_SSE_KEEPALIVE',
    description: 'Seconds of silence after which a streamed reply gets an SSE comment line (0: off). It starts the stream (200) if it had not started: a later error is then sent in-band.',
  },
  timeout: { kind: 'int', schema: z.number().int().min(1).default(600), flag: 'timeout', env: 'OLP_TIMEOUT', description: 'Seconds a CLI run may take in total before it is stopped (504).' },
  idleTimeout: { kind: 'int', schema: z.number().int().min(1).default(180), flag: 'idle-timeout', env: 'OLP_IDLE_TIMEOUT', description: 'Seconds a CLI run may stay silent before it is stopped (504).' },
  retryTimeout: {
    kind: 'int',
    schema: z.number().int().min(1).default(60),
    flag: 'retry-timeout',
    env: 'OLP_RETRY_TIMEOUT',
    description: "Seconds a CLI run may spend only retrying its provider (claude's api_retry, codex's Reconnecting…) before olp stops it (503 backend_unavailable).",
  },
  corsOrigins: {
    kind: 'list',
    schema: z.array(z.union([z.literal('*'), z.url({ protocol: /^https?$/, error: 'expected an origin like http://localhost:3000, or *' })])).default([]),
    flag: 'cors-origins',
    env: 'OLP_CORS_ORIGINS',
    description: 'Browser origins allowed to call olp (comma-separated, e.g. http://localhost:3000; * for any). Off by default.',
  },
  clientTimeout: {
    kind: 'int',
    schema: z.number().int().min(1).default(120),
    flag: 'client-timeout',
    env: 'OLP_CLIENT_TIMEOUT',
    description: 'Seconds a client may leave a streamed reply unread before olp ends it (the CLI waits meanwhile, without its idle timer running).',
  },
  maxConcurrency: { kind: 'int', schema: z.number().int().min(1).default(defaultConcurrency()), flag: 'max-concurrency', env: 'OLP_MAX_CONCURRENCY', description: 'CLI processes running at once, across all keys (default: 2 per core, at most one per 512 MB of memory).' },
  queueSize: { kind: 'int', schema: z.number().int().min(0).default(100), flag: 'queue-size', env: 'OLP_QUEUE_SIZE', description: 'Requests that may wait for a free CLI slot (429 server_busy beyond).' },
  queueTimeout: { kind: 'int', schema: z.number().int().min(1).default(60), flag: 'queue-timeout', env: 'OLP_QUEUE_TIMEOUT', description: 'Seconds a request may wait for a free CLI slot (429 queue_timeout after).' },
  sessions: { kind: 'bool', schema: z.boolean().default(true), flag: 'sessions', env: 'OLP_SESSIONS', description: 'Resume CLI sessions per key instead of resending the whole history (true/false).' },
  sessionPool: { kind: 'int', schema: z.number().int().min(1).max(64).default(3), flag: 'session-pool', env: 'OLP_SESSION_POOL', description: 'Session slots per key and backend.' },
  sessionLifetime: { kind: 'int', schema: z.number().int().min(60).default(8 * 3600), flag: 'session-lifetime', env: 'OLP_SESSION_LIFETIME', description: 'Seconds after which a session is rotated (8 h).' },
  sessionTurnCap: { kind: 'int', schema: z.number().int().min(1).default(200), flag: 'session-turn-cap', env: 'OLP_SESSION_TURN_CAP', description: 'Turns after which a session is rotated (forked: the CLI keeps its history).' },
  sessionIdleGap: { kind: 'int', schema: z.number().int().min(1).default(2 * 3600), flag: 'session-idle-gap', env: 'OLP_SESSION_IDLE_GAP', description: 'Seconds of silence after which a session is rotated (2 h).' },
  sessionWait: { kind: 'int', schema: z.number().int().min(0).default(2), flag: 'session-wait', env: 'OLP_SESSION_WAIT', description: "Seconds to wait for a free slot of the key's pool before running without a session." },
  workers: { kind: 'bool', schema: z.boolean().default(true), flag: 'workers', env: 'OLP_WORKERS', description: "Keep a session slot's CLI alive between turns so a continued conversation skips the CLI's start-up (true/false; claude)." },
  workerIdle: { kind: 'int', schema: z.number().int().min(1).default(300), flag: 'worker-idle', env: 'OLP_WORKER_IDLE', description: 'Seconds a live worker may wait for its next turn before it is stopped (5 min).' },
  workerMaxAge: { kind: 'int', schema: z.number().int().min(1).default(1800), flag: 'worker-max-age', env: 'OLP_WORKER_MAX_AGE', description: 'Seconds after which a live worker is retired, however busy (30 min).' },
  workerMaxTurns: { kind: 'int', schema: z.number().int().min(1).default(100), flag: 'worker-max-turns', env: 'OLP_WORKER_MAX_TURNS', description: 'Turns after which a live worker is retired.' },
  prestart: { kind: 'bool', schema: z.boolean().default(true), flag: 'prestart', env: 'OLP_PRESTART', description: "With workers: after a key's turn, start a spare CLI for its next new conversation, so a first turn skips the start-up too (true/false)." },
  maxWorkers: { kind: 'int', schema: z.number().int().min(0).optional(), flag: 'max-workers', env: 'OLP_MAX_WORKERS', description: 'Most live workers at once (default: ~300 MiB each from half the memory, at most 4 per core).' },
  maxProcesses: {
    kind: 'int',
    schema: z.number().int().min(1).optional(),
    flag: 'max-processes',
    env: 'OLP_MAX_PROCESSES',
    description: 'Most CLI processes olp holds at once: running turns, live workers, spares, parked tool-call turns and ones being stopped (default: ~300 MiB each from half the memory, at most 6 per core).',
  },
  toolParkTimeout: { kind: 'int', schema: z.number().int().min(5).default(600), flag: 'tool-park-timeout', env: 'OLP_TOOL_PARK_TIMEOUT', description: "Seconds a turn that called the client's functions waits, its CLI alive, for the client's next request with the results (10 min)." },
  usageRetentionDays: { kind: 'int', schema: z.number().int().min(0).default(0), flag: 'usage-retention-days', env: 'OLP_USAGE_RETENTION_DAYS', description: 'Delete usage rows older than this many days (checked at start and daily); 0 keeps everything.' },
  recordMode: { kind: 'string', schema: z.enum(['off', 'record', 'replay']).default('off'), flag: 'record-mode', env: 'OLP_RECORD_MODE', description: 'off, record (write every CLI call to recordFile) or replay (serve calls from recordFile, spawning nothing). Set by `olp recordings`.' },
  recordFile: { kind: 'string', schema: z.string().min(1).optional(), flag: 'record-file', env: 'OLP_RECORD_FILE', description: 'The recording: a managed id (under <state-dir>/recordings) or, for replay, a path.' },
  replaySpeed: { kind: 'int', schema: z.number().min(0).default(0), flag: 'replay-speed', env: 'OLP_REPLAY_SPEED', description: 'Replay pace: 0 as fast as possible, 1 the recorded speed.' },
  shutdownGrace: { kind: 'int', schema: z.number().int().min(0).default(10), flag: 'shutdown-grace', env: 'OLP_SHUTDOWN_GRACE', description: 'Seconds in-flight requests get to finish on SIGTERM/SIGINT before their CLIs are killed.' },
} satisfies Record<string, Field>;

export type ConfigKey = keyof typeof FIELDS;

/** Each CLI is a heavy process (a few hundred MB): two per core, bounded by memory. */
function defaultConcurrency(): number {
  return Math.max(1, Math.min(availableParallelism() * 2, Math.floor(totalmem() / (512 * 1024 * 1024))));
}

/** A parsed value as the frozen config holds it: its arrays and its records' arrays read-only. */
type Frozen<T> = T extends readonly (infer U)[]
  ? readonly U[]
  : T extends object
    ? Readonly<{ [K in keyof T]: T[K] extends readonly (infer V)[] ? readonly V[] : T[K] }>
    : T;

/** The validated settings, one per field of `FIELDS`, typed by that field's schema. */
export type Config = Readonly<{ [K in ConfigKey]: Frozen<z.output<(typeof FIELDS)[K]['schema']>> }>;
