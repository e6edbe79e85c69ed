import { createLogins, createRefreshGate } from './logins/index.js';
import { channel } from 'node:diagnostics_channel';
import { availableParallelism, totalmem } from 'node:os';
import { createAdmission } from './admit/index.js';
import { createSessionPool } from './sessions/index.js';
import { createTokenCalibration } from './transcript/index.js';
import { createBackends, createDetector, withoutOwnBins } from './backends/index.js';

export { createBackends };
import type { Config } from './config/index.js';
import {
  estimatePromptTokens,
  openConversation,
  type ConversationDeps,
  type FinishedRequest,
} from './conversation/index.js';
import { createApp, createLifecycle } from './http/index.js';
import type { Logger } from './log/index.js';
import { createModelRegistry } from './models/index.js';
import { createCallLayer, runStartupChores, toInstance, watchAlerts, watchStanding } from './compose-parts.js';
import { lockStateDir, openStore, type StateLock } from './store/index.js';
import { createWorkspaces } from './workspace/index.js';
import {
  createMemoryGauge,
  createProcessCap,
  createWorkerPool,
  defaultMaxProcesses,
  defaultMaxWorkers,
} from './workers/index.js';
import { createMetrics } from './metrics/index.js';
import { createPlans } from './plan/index.js';
import { createParkedTurns, createToolBridge } from './tools/index.js';
import { createTurnRunner, type ToolParkedTurn } from './run/index.js';

export interface DaemonOptions {
  config: Config;
  logger: Logger;
  /** The daemon's environment: the only source of host variables for children. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** olp's version, as the state dir's lock names its holder (and a new recording's header says). */
  version?: string;
  /** Tests only: false leaves out the one refresher per login file (to show the race it prevents). */
  refreshGate?: false;
}

/** The daemon's environment as its children see it: PATH without olp's own pinned CLIs. */
export function toHostEnv(env: DaemonOptions['hostEnv']): DaemonOptions['hostEnv'] {
  return { ...env, PATH: withoutOwnBins(env.PATH) };
}

/**
 * Every part of a daemon, built from the config and wired together, not yet listening: the app,
 * the conversation core's dependencies and what shutdown must stop. Tests build one in-process.
 */
export function composeDaemon({ config, logger, hostEnv: rawEnv, version, refreshGate }: DaemonOptions) {
  const hostEnv = toHostEnv(rawEnv);
  // First: the sweep and the slot recovery below assume no other olp runs on this state dir.
  const lock = lockStateDir(config.stateDir);
  try {
    return composeLocked({ config, logger, hostEnv, version, refreshGate }, lock);
  } catch (err) {
    lock.release();
    throw err;
  }
}

function composeLocked({ config, logger, hostEnv, version, refreshGate }: DaemonOptions, lock: StateLock) {
  const store = openStore(config.stateDir, { instanceTag: config.instanceTag });
  const workspaces = createWorkspaces(config.stateDir, {
    ...(config.runDir ? { runDir: config.runDir } : {}),
    path: hostEnv.PATH,
  });
  const { backends, probes } = createBackends(config, hostEnv);
  // The CLIs' status checks count under the process cap (made below; asked only once serving).
  const detector = createDetector(hostEnv, probes, workspaces, {
    timeoutMs: config.statusTimeout * 1000,
    room: (n) => cap.tryTake(n),
  });
  const pruneTimer = runStartupChores({ config, logger, store, workspaces, backends, detector });
  const sessions = config.sessions
    ? createSessionPool({
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
      })
    : undefined;
  const { supervisor, replayBackends, appender } = createCallLayer(config, logger, version);
  // Live workers continue a slot's session; recording and replaying keep to one process a call.
  const workers =
    config.sessions && config.workers && config.recordMode === 'off'
      ? createWorkerPool({
          max: config.maxWorkers ?? defaultMaxWorkers(totalmem(), availableParallelism()),
          idleMs: config.workerIdle * 1000,
          maxAgeMs: config.workerMaxAge * 1000,
          maxTurns: config.workerMaxTurns,
          retireGraceMs: 2000,
          logger,
        })
      : undefined;
  const parked = createParkedTurns<ToolParkedTurn>({ ttlMs: config.toolParkTimeout * 1000, logger });
  // One count of every CLI olp holds; a turn that needs one at the cap frees the least valuable.
  const cap = createProcessCap(supervisor, {
    max: config.maxProcesses ?? defaultMaxProcesses(totalmem(), availableParallelism()),
    waitMs: config.queueTimeout * 1000,
    shed: [() => workers?.shedSpare() ?? false, (k) => workers?.shedIdle(k) ?? false, (k) => parked.shedOldest(k)],
  });
  const admission = createAdmission({
    maxConcurrent: config.maxConcurrency,
    queueSize: config.queueSize,
    queueTimeoutMs: config.queueTimeout * 1000,
    tokensSince: (keyId, since) => store.usage.tokensSince(keyId, since),
    held: parked,
  });
  const lifecycle = createLifecycle();
  // The client's functions reach the model through olp's own MCP server (started with the daemon).
  const bridge = createToolBridge(logger);
  const standing = watchStanding(store, workers ? [workers, parked] : [parked], logger);
  // What the CLIs last said of their logins' plan windows (kept across restarts).
  const reported = channel(Symbol('olp.plan.reported'));
  const plans = createPlans({ store: store.plans, logger, reported });
  // Each key's login: its credential for each CLI (secrets in <state>/logins, rows in the store).
  const logins = createLogins({ stateDir: config.stateDir, store: store.logins });
  // Replaying, the models are the recording's: no CLI needs to be installed.
  const registry = createModelRegistry(backends, config.models, (b) =>
    replayBackends ? replayBackends.has(b.id) : detector.installed(b),
  );
  const metrics =
    config.metrics === 'off'
      ? undefined
      : createMetrics({
          admission,
          supervisor: cap.supervisor,
          processes: cap,
          workers,
          parked,
          plans,
          models: registry,
        });
  // Each finished request's result, for its observers (this daemon's own channel: tests run several).
  const finished = channel(Symbol('olp.request.finished'));
  // The owner's webhook hears of keys and logins nearing their limits (src/alerts).
  const alerts = watchAlerts(config, store, logger, { finished, reported });
  if (metrics) {
    finished.subscribe((message) => {
      const { principal, meta, result } = message as FinishedRequest;
      try {
        metrics.observe(principal, result);
      } catch (err) {
        meta.log.warn({ err, event: 'metrics_failed' }, 'could not count the request in the metrics');
      }
    });
  }
  const conversation: ConversationDeps = {
    store,
    registry,
    backends,
    admission,
    sessions,
    detector,
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
    plans,
    logins,
    finished,
    runner: createTurnRunner({
      tools: { bridge, parkTtlMs: config.toolParkTimeout * 1000 },
      parked,
      supervisor: cap.supervisor,
      cap,
      ...(refreshGate === false ? {} : { refresh: createRefreshGate() }),
      workspaces,
      hostEnv,
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
    }),
  };
  const app = createApp({
    logger,
    bodyLimit: config.bodyLimit,
    corsOrigins: config.corsOrigins,
    instance: toInstance(config, store.instanceTag),
    clientTimeoutMs: config.clientTimeout * 1000,
    keepaliveMs: config.sseKeepalive * 1000,
    metrics: metrics ? { mode: config.metrics as 'owner' | 'open', render: () => metrics.render() } : undefined,
    store,
    registry,
    backends,
    detector,
    lifecycle,
    admission,
    open: (principal, meta) => openConversation(conversation, principal, meta),
    countTokens: (principal, input) => estimatePromptTokens(conversation, principal.keyId, input),
    anthropicModels: config.anthropicModels,
    plans,
    workers,
    processes: cap,
    parked,
  });
  // Stopping comes in two steps so that a listening daemon can let its requests end between them.
  const stopChildren = async (): Promise<void> => {
    // Idle workers first, cleanly (stdin closed: the CLI flushes its session and exits).
    await Promise.all([workers?.stopAll(), parked.stopAll(), supervisor.killAll()]);
    await bridge.close();
  };
  let closing: Promise<void> | undefined;
  /** Lets go of everything composing opened: CLIs, the tool bridge, timers, the recording, workspaces, store, lock. */
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      try {
        await stopChildren();
      } finally {
        await alerts?.close();
        clearInterval(pruneTimer);
        standing.stop();
        appender?.close();
        await workspaces.settled();
        workspaces.sweep();
        workspaces.close();
        store.close();
        lock.release();
      }
    })());
  const parts = { app, store, workspaces, supervisor, workers, lifecycle, conversation, backends, detector, bridge };
  return { ...parts, lock, stopChildren, close };
}
