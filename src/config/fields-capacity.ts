import { availableParallelism, totalmem } from 'node:os';
import { z } from 'zod';
import type { Field } from './field.js';

/** How many CLIs run, wait and stay alive, session rotation, recording and shutdown. */
export const CAPACITY_FIELDS = {
  maxConcurrency: {
    kind: 'int',
    schema: z.number().int().min(1).default(defaultConcurrency()),
    flag: 'max-concurrency',
    env: 'OLP_MAX_CONCURRENCY',
    description:
      'CLI processes running at once, across all keys (default: 2 per core, at most one per 512 MB of memory).',
  },
  queueSize: {
    kind: 'int',
    schema: z.number().int().min(0).default(100),
    flag: 'queue-size',
    env: 'OLP_QUEUE_SIZE',
    description: 'Requests that may wait for a free CLI slot (429 server_busy beyond).',
  },
  queueTimeout: {
    kind: 'int',
    schema: z.number().int().min(1).default(60),
    flag: 'queue-timeout',
    env: 'OLP_QUEUE_TIMEOUT',
    description: 'Seconds a request may wait for a free CLI slot (429 queue_timeout after).',
  },
  sessions: {
    kind: 'bool',
    schema: z.boolean().default(true),
    flag: 'sessions',
    env: 'OLP_SESSIONS',
    description: 'Resume CLI sessions per key instead of resending the whole history (true/false).',
  },
  sessionPool: {
    kind: 'int',
    schema: z.number().int().min(1).max(64).default(3),
    flag: 'session-pool',
    env: 'OLP_SESSION_POOL',
    description: 'Session slots per key and backend.',
  },
  maxSessionSlots: {
    kind: 'int',
    schema: z.number().int().min(1).max(256).default(16),
    flag: 'max-session-slots',
    env: 'OLP_MAX_SESSION_SLOTS',
    description:
      "Most session slots a key's pool grows to per backend while its conversations go on at once (a key's " +
      '--concurrency if lower; never below --session-pool).',
  },
  sessionLifetime: {
    kind: 'int',
    schema: z
      .number()
      .int()
      .min(60)
      .default(8 * 3600),
    flag: 'session-lifetime',
    env: 'OLP_SESSION_LIFETIME',
    description: 'Seconds after which a session is rotated (8 h).',
  },
  sessionTurnCap: {
    kind: 'int',
    schema: z.number().int().min(1).default(200),
    flag: 'session-turn-cap',
    env: 'OLP_SESSION_TURN_CAP',
    description: 'Turns after which a session is rotated (forked: the CLI keeps its history).',
  },
  sessionIdleGap: {
    kind: 'int',
    schema: z
      .number()
      .int()
      .min(1)
      .default(2 * 3600),
    flag: 'session-idle-gap',
    env: 'OLP_SESSION_IDLE_GAP',
    description: 'Seconds of silence after which a session is rotated (2 h).',
  },
  sessionWait: {
    kind: 'int',
    schema: z.number().int().min(0).default(2),
    flag: 'session-wait',
    env: 'OLP_SESSION_WAIT',
    description: "Seconds to wait for a free slot of the key's pool before running without a session.",
  },
  workers: {
    kind: 'bool',
    schema: z.boolean().default(true),
    flag: 'workers',
    env: 'OLP_WORKERS',
    description:
      "Keep a session slot's CLI alive between turns so a continued conversation skips the CLI's start-up " +
      '(true/false; claude).',
  },
  workerIdle: {
    kind: 'int',
    schema: z.number().int().min(1).default(300),
    flag: 'worker-idle',
    env: 'OLP_WORKER_IDLE',
    description:
      'Seconds a live worker may wait for its next turn before it is stopped (5 min); also how long a session ' +
      "slot's conversation counts as going on (see --max-session-slots).",
  },
  workerMaxAge: {
    kind: 'int',
    schema: z.number().int().min(1).default(1800),
    flag: 'worker-max-age',
    env: 'OLP_WORKER_MAX_AGE',
    description: 'Seconds after which a live worker is retired, however busy (30 min).',
  },
  workerMaxTurns: {
    kind: 'int',
    schema: z.number().int().min(1).default(100),
    flag: 'worker-max-turns',
    env: 'OLP_WORKER_MAX_TURNS',
    description: 'Turns after which a live worker is retired.',
  },
  prestart: {
    kind: 'bool',
    schema: z.boolean().default(true),
    flag: 'prestart',
    env: 'OLP_PRESTART',
    description:
      "With workers: after a key's turn, start a spare CLI for its next new conversation, so a first turn skips " +
      'the start-up too (true/false).',
  },
  maxWorkers: {
    kind: 'int',
    schema: z.number().int().min(0).optional(),
    flag: 'max-workers',
    env: 'OLP_MAX_WORKERS',
    description: 'Most live workers at once (default: ~300 MiB each from half the memory, at most 4 per core).',
  },
  workerMemory: {
    kind: 'int',
    schema: z.number().int().min(1).optional(),
    flag: 'worker-memory',
    env: 'OLP_WORKER_MEMORY',
    description:
      'MB the live CLIs that run nothing (idle workers, spares) may hold, measured (PSS); beyond it the least ' +
      'valuable are stopped, and each key keeps at most its share ' +
      '(default: 1/8 of the memory, at most 768, at least 600).',
  },
  maxProcesses: {
    kind: 'int',
    schema: z.number().int().min(1).optional(),
    flag: 'max-processes',
    env: 'OLP_MAX_PROCESSES',
    description:
      'Most CLI processes olp holds at once: running turns, live workers, spares, parked tool-call turns and ' +
      'ones being stopped (default: ~300 MiB each from half the memory, at most 6 per core).',
  },
  toolParkTimeout: {
    kind: 'int',
    schema: z.number().int().min(5).default(600),
    flag: 'tool-park-timeout',
    env: 'OLP_TOOL_PARK_TIMEOUT',
    description:
      "Seconds a turn that called the client's functions waits, its CLI alive, for the client's next request " +
      'with the results (10 min).',
  },
  usageRetentionDays: {
    kind: 'int',
    schema: z.number().int().min(0).default(0),
    flag: 'usage-retention-days',
    env: 'OLP_USAGE_RETENTION_DAYS',
    description: 'Delete usage rows older than this many days (checked at start and daily); 0 keeps everything.',
  },
  recordMode: {
    kind: 'string',
    schema: z.enum(['off', 'record', 'replay']).default('off'),
    flag: 'record-mode',
    env: 'OLP_RECORD_MODE',
    description:
      'off, record (write every CLI call to recordFile) or replay (serve calls from recordFile, spawning ' +
      'nothing). Set by `olp recordings`.',
  },
  recordFile: {
    kind: 'string',
    schema: z.string().min(1).optional(),
    flag: 'record-file',
    env: 'OLP_RECORD_FILE',
    description: 'The recording: a managed id (under <state-dir>/recordings) or, for replay, a path.',
  },
  replaySpeed: {
    kind: 'int',
    schema: z.number().min(0).default(0),
    flag: 'replay-speed',
    env: 'OLP_REPLAY_SPEED',
    description: 'Replay pace: 0 as fast as possible, 1 the recorded speed.',
  },
  shutdownGrace: {
    kind: 'int',
    schema: z.number().int().min(0).default(10),
    flag: 'shutdown-grace',
    env: 'OLP_SHUTDOWN_GRACE',
    description: 'Seconds in-flight requests get to finish on SIGTERM/SIGINT before their CLIs are killed.',
  },
} satisfies Record<string, Field>;

/** Each CLI is a heavy process (a few hundred MB): two per core, bounded by memory. */
function defaultConcurrency(): number {
  return Math.max(1, Math.min(availableParallelism() * 2, Math.floor(totalmem() / (512 * 1024 * 1024))));
}
