import { createLogins } from './logins/index.js';
import { channel } from 'node:diagnostics_channel';
import { availableParallelism, totalmem } from 'node:os';
import { createAdmission } from './admit/index.js';
import { createBackends, createDetector, withoutOwnBins } from './backends/index.js';

export { createBackends };
import type { Config } from './config/index.js';
import { estimatePromptTokens, openConversation } from './conversation/index.js';
import {
  conversationDepsFor,
  observeFinished,
  runnerFor,
  sessionPoolFor,
  type WorkerPoolHooks,
  workerPoolFor,
} from './compose-pools.js';
import { createApp, createLifecycle } from './http/index.js';
import type { Logger } from './log/index.js';
import { createModelRegistry } from './models/index.js';
import {
  createCallLayer,
  memberLoginsFor,
  runStartupChores,
  toInstance,
  watchAlerts,
  watchStanding,
} from './compose-parts.js';
import { lockStateDir, openStore, type StateLock, type Store } from './store/index.js';
import { createWorkspaces } from './workspace/index.js';
import { createProcessCap, defaultMaxProcesses } from './workers/index.js';
import { createMetrics } from './metrics/index.js';
import { createPlans } from './plan/index.js';
import { createParkedTurns, createToolBridge, type ParkedTurns } from './tools/index.js';
import type { ToolParkedTurn } from './run/index.js';

export interface DaemonOptions {
  config: Config;
  logger: Logger;
  /** The daemon's environment: the only source of host variables for children. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** olp's version, as the state dir's lock names its holder (and a new recording's header says). */
  version?: string;
  /** Tests only: false leaves out the one refresher per login file (to show the race it prevents). */
  refreshGate?: false;
  /** Tests only: the live workers' clock, memory-pressure reading and how often the budget is applied. */
  workerPool?: WorkerPoolHooks;
  /** Tests only: appended to `codex login --device-auth` (`--experimental_issuer URL` of a stand-in). */
  codexDeviceArgs?: readonly string[];
}

/** The daemon's environment as its children see it: PATH without olp's own pinned CLIs. */
export function toHostEnv(env: DaemonOptions['hostEnv']): DaemonOptions['hostEnv'] {
  return { ...env, PATH: withoutOwnBins(env.PATH) };
}

/**
 * Every part of a daemon, built from the config and wired together, not yet listening: the app,
 * the conversation core's dependencies and what shutdown must stop. Tests build one in-process.
 */
export function composeDaemon({ hostEnv: rawEnv, ...o }: DaemonOptions) {
  const hostEnv = toHostEnv(rawEnv);
  // First: the sweep and the slot recovery below assume no other olp runs on this state dir.
  const lock = lockStateDir(o.config.stateDir);
  try {
    return composeLocked({ ...o, hostEnv }, lock);
  } catch (err) {
    lock.release();
    throw err;
  }
}

function composeLocked(o: DaemonOptions, lock: StateLock) {
  const { config, logger, hostEnv, version, refreshGate, workerPool } = o;
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
  const sessions = sessionPoolFor(config, store, backends);
  const { supervisor, replayBackends, appender } = createCallLayer(config, logger, version);
  const workers = workerPoolFor(config, logger, workerPool);
  const parked = createParkedTurns<ToolParkedTurn>({ ttlMs: config.toolParkTimeout * 1000, logger });
  // One count of every CLI olp holds; a turn that needs one at the cap frees the least valuable.
  const cap = createProcessCap(supervisor, {
    max: config.maxProcesses ?? defaultMaxProcesses(totalmem(), availableParallelism()),
    waitMs: config.queueTimeout * 1000,
    shed: [() => workers?.shedSpare() ?? false, (k) => workers?.shedIdle(k) ?? false, (k) => parked.shedOldest(k)],
  });
  const admission = admissionFor(config, store, parked);
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
  const watched = { admission, supervisor: cap.supervisor, processes: cap, workers, parked, plans, models: registry };
  const metrics = config.metrics === 'off' ? undefined : createMetrics(watched);
  // Each finished request's result, for its observers (this daemon's own channel: tests run several).
  const finished = channel(Symbol('olp.request.finished'));
  // The owner's webhook hears of keys and logins nearing their limits (src/alerts).
  const alerts = watchAlerts(config, store, logger, { finished, reported });
  if (metrics) observeFinished(finished, metrics);
  const runParts = { bridge, parked, supervisor: cap.supervisor, cap, refreshGate, workspaces, hostEnv, workers };
  const runner = runnerFor(config, { ...runParts, sessions });
  const conversation = conversationDepsFor(config, {
    ...{ store, registry, backends, admission, sessions, detector, plans, logins, finished, runner },
  });
  const memberLogins = memberLoginsFor(config, { store, backends, detector, hostEnv }, o.codexDeviceArgs);
  const app = createApp({
    ...appSettings(config, store),
    memberLogins,
    metrics: metrics ? { mode: config.metrics as 'owner' | 'open', render: () => metrics.render() } : undefined,
    ...{ logger, store, registry, backends, detector, lifecycle, admission, plans, workers, processes: cap, parked },
    open: (principal, meta) => openConversation(conversation, principal, meta),
    countTokens: (principal, input) => estimatePromptTokens(conversation, principal.keyId, input),
  });
  // Stopping comes in two steps so that a listening daemon can let its requests end between them.
  const stopChildren = async (): Promise<void> => {
    // Idle workers first, cleanly (stdin closed: the CLI flushes its session and exits); no device
    // sign-in's codex outlives the daemon.
    await Promise.all([
      workers?.stopAll(),
      parked.stopAll(),
      supervisor.killAll(),
      memberLogins.connect.devices.cancelAll(),
    ]);
    await bridge.close();
  };
  const close = closeOnce(stopChildren, () =>
    release({ alerts, pruneTimer, standing, appender, workspaces, store, lock }),
  );
  const parts = { app, store, workspaces, supervisor, workers, lifecycle, conversation, backends, detector, bridge };
  return { ...parts, lock, stopChildren, close };
}

/** What composing opened besides the CLIs, let go of in order once they are stopped. */
async function release(o: {
  alerts: { close(): Promise<void> } | undefined;
  pruneTimer: ReturnType<typeof setInterval>;
  standing: { stop(): void };
  appender: { close(): void } | undefined;
  workspaces: ReturnType<typeof createWorkspaces>;
  store: Store;
  lock: StateLock;
}): Promise<void> {
  await o.alerts?.close();
  clearInterval(o.pruneTimer);
  o.standing.stop();
  o.appender?.close();
  await o.workspaces.settled();
  o.workspaces.sweep();
  o.workspaces.close();
  o.store.close();
  o.lock.release();
}

/** The app's settings read off the config. */
function appSettings(config: Config, store: { instanceTag: string | null }) {
  return {
    bodyLimit: config.bodyLimit,
    corsOrigins: config.corsOrigins,
    instance: toInstance(config, store.instanceTag),
    clientTimeoutMs: config.clientTimeout * 1000,
    keepaliveMs: config.sseKeepalive * 1000,
    anthropicModels: config.anthropicModels,
  };
}

/**
 * Lets go of everything composing opened, once however often it is called: the CLIs and the tool
 * bridge first (`stop`), then timers, the recording, workspaces, store and lock (`release`).
 */
function closeOnce(stop: () => Promise<void>, release: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () =>
    (closing ??= (async () => {
      try {
        await stop();
      } finally {
        await release();
      }
    })());
}

/** Admission: per-key limits and the daemon's CLI slots, with the key's parked turns counted. */
function admissionFor(config: Config, store: Store, parked: ParkedTurns) {
  return createAdmission({
    maxConcurrent: config.maxConcurrency,
    queueSize: config.queueSize,
    queueTimeoutMs: config.queueTimeout * 1000,
    tokensSince: (keyId, since) => store.usage.tokensSince(keyId, since),
    held: parked,
  });
}
