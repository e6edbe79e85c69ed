// The composition root's larger parts, each built from the config and what was built before it:
// the session and worker pools, the conversation core's dependencies (with its turn runner), and
// the metrics' view of finished requests.
import type { Channel } from 'node:diagnostics_channel';
import { availableParallelism, totalmem } from 'node:os';
import type { Backend } from './backends/index.js';
import type { Config } from './config/index.js';
import type { ConversationDeps, FinishedRequest } from './conversation/index.js';
import type { Logger } from './log/index.js';
import { createRefreshGate } from './logins/index.js';
import { createTurnRunner, type RunDeps } from './run/index.js';
import { createSessionPool } from './sessions/index.js';
import type { Store } from './store/index.js';
import { createTokenCalibration } from './transcript/index.js';
import {
  createMemoryGauge,
  createWorkerPool,
  defaultMaxWorkers,
  defaultWorkerMemory,
  type WorkerPoolOptions,
} from './workers/index.js';

/** The per-key session pool, when sessions are on. */
export function sessionPoolFor(config: Config, store: Store, backends: readonly Backend[]) {
  if (!config.sessions) return undefined;
  return createSessionPool({
    store: store.slots,
    size: config.sessionPool,
    maxSlots: config.maxSessionSlots,
    // A slot whose conversation spoke within a live worker's idle time may still have its worker.
    activeMs: config.workerIdle * 1000,
    lifetimeMs: config.sessionLifetime * 1000,
    turnCap: config.sessionTurnCap,
    idleMs: config.sessionIdleGap * 1000,
    waitMs: config.sessionWait * 1000,
    forks: (backend) => backends.find((b) => b.id === backend)?.forks,
  });
}

/** What tests may set of the worker pool: its clock, its memory-pressure reading, its sampling period. */
export type WorkerPoolHooks = Pick<WorkerPoolOptions, 'now' | 'pressure' | 'sampleMs'>;

/** Live workers continue a slot's session; recording and replaying keep to one process a call. */
export function workerPoolFor(config: Config, logger: Logger, hooks: WorkerPoolHooks = {}) {
  if (!config.sessions || !config.workers || config.recordMode !== 'off') return undefined;
  return createWorkerPool({
    max: config.maxWorkers ?? defaultMaxWorkers(totalmem(), availableParallelism()),
    idleMs: config.workerIdle * 1000,
    maxAgeMs: config.workerMaxAge * 1000,
    maxTurns: config.workerMaxTurns,
    retireGraceMs: 2000,
    logger,
    memoryBytes: (config.workerMemory ?? 0) * 1024 * 1024 || defaultWorkerMemory(totalmem()),
    // A key's session slots, and one spare.
    keySlots: config.sessionPool + 1,
    ...hooks,
  });
}

/** What the run stage is built from, beyond the config. */
export type RunParts = Pick<RunDeps, 'supervisor' | 'cap' | 'workspaces' | 'hostEnv' | 'workers' | 'parked'> & {
  bridge: NonNullable<RunDeps['tools']>['bridge'];
  sessions: ReturnType<typeof sessionPoolFor>;
  refreshGate: boolean | undefined;
};

/** The turn runner: how the conversation core's turns run (src/run). */
export function runnerFor(config: Config, p: RunParts) {
  const { workers, sessions } = p;
  return createTurnRunner({
    tools: { bridge: p.bridge, parkTtlMs: config.toolParkTimeout * 1000 },
    ...(p.parked ? { parked: p.parked } : {}),
    supervisor: p.supervisor,
    ...(p.cap ? { cap: p.cap } : {}),
    ...(p.refreshGate === false ? {} : { refresh: createRefreshGate() }),
    workspaces: p.workspaces,
    hostEnv: p.hostEnv,
    replay: config.recordMode === 'replay',
    unknownEvents: new Set<string>(),
    ...(workers ? { workers } : {}),
    ...(workers && sessions && config.prestart
      ? { prestart: { sessions, minFreeBytes: 1024 ** 3, availableMemory: createMemoryGauge() } }
      : {}),
    limits: {
      timeoutMs: config.timeout * 1000,
      idleTimeoutMs: config.idleTimeout * 1000,
      retryTimeoutMs: config.retryTimeout * 1000,
      killGraceMs: 2000,
    },
  });
}

/** The conversation core's dependencies: the config's request settings and the parts built for it. */
export function conversationDepsFor(
  config: Config,
  parts: Omit<
    ConversationDeps,
    'fallbacks' | 'imageLimits' | 'contextTokens' | 'contextOverflow' | 'calibration' | 'memberLogins'
  >,
): ConversationDeps {
  return {
    ...parts,
    memberLogins: config.memberLogins,
    fallbacks: config.fallbacks,
    imageLimits: {
      maxBytes: config.imageMaxBytes,
      maxCount: config.imageMaxCount,
      maxTotalBytes: config.imageMaxTotalBytes,
      fetchRemote: config.imageFetch,
    },
    contextTokens: config.contextTokens,
    contextOverflow: config.contextOverflow,
    calibration: createTokenCalibration(),
  };
}

/** Counts each finished request in the metrics (a failure to count is logged, never thrown). */
export function observeFinished(
  finished: Channel,
  metrics: { observe(principal: FinishedRequest['principal'], result: FinishedRequest['result']): void },
): void {
  finished.subscribe((message) => {
    const { principal, meta, result } = message as FinishedRequest;
    try {
      metrics.observe(principal, result);
    } catch (err) {
      meta.log.warn({ err, event: 'metrics_failed' }, 'could not count the request in the metrics');
    }
  });
}
