import type { Channel } from 'node:diagnostics_channel';
import { existsSync } from 'node:fs';
import { createAlerts, type Alerts } from './alerts/index.js';
import type { Instance } from './auth/index.js';
import type { Backend, Detector } from './backends/index.js';
import type { Config } from './config/index.js';
import type { FinishedRequest } from './conversation/index.js';
import type { PlanReported } from './plan/index.js';
import type { Logger } from './log/index.js';
import type { MemberLoginsDeps } from './http/index.js';
import { createDeviceSignIns, createLoginCliContext, createSignInLimit } from './logins/index.js';
import { createProcessSupervisor, type ProcessSupervisor } from './process/index.js';
import {
  createRecording,
  createRecordingSupervisor,
  createReplaySupervisor,
  loadRecording,
  openAppender,
  resolveRecording,
  type Appender,
} from './record/index.js';
import type { Store } from './store/index.js';
import type { Workspaces } from './workspace/index.js';
import { watchKeyStanding, type KeyHolder } from './workers/index.js';

// Parts of the composition root that stand alone: the spawn boundary for the mode, and the chores
// of a start (the sweep's report, missing CLIs and logins, pruning, the slot recovery).

/** The spawn boundary for the configured mode: real CLIs, real CLIs recorded, or a recording replayed. */
export function createCallLayer(
  config: Config,
  logger: Logger,
  version: string | undefined,
): { supervisor: ProcessSupervisor; replayBackends?: Set<string>; appender?: Appender } {
  const real = createProcessSupervisor(logger);
  if (config.recordMode === 'off') return { supervisor: real };
  if (!config.recordFile)
    throw new Error(
      `recordMode is ${config.recordMode} but no recordFile is set (use olp recordings ${config.recordMode})`,
    );
  if (config.recordMode === 'record') {
    const target = resolveRecording(config.stateDir, config.recordFile);
    // A managed id that does not exist yet is made here, as `olp recordings record` makes it (0600
    // in a 0700 recordings/).
    if (target.managed && !existsSync(target.file))
      createRecording(config.stateDir, config.recordFile, version ?? 'unknown');
    const appender = openAppender(target.file);
    logger.info({ event: 'recording', file: appender.file }, `recording every CLI call to ${appender.file}`);
    return { supervisor: createRecordingSupervisor(real, appender), appender };
  }
  const recording = loadRecording(config.stateDir, config.recordFile);
  const replay = createReplaySupervisor(recording, config.replaySpeed);
  logger.info(
    { event: 'replaying', file: recording.file, calls: recording.calls.length },
    `replaying ${recording.calls.length} recorded call(s) from ${recording.file}; no CLI will be spawned`,
  );
  return { supervisor: replay, replayBackends: replay.backends };
}

/** A start's chores, in order; returns the daily pruning's timer (cleared on close). */
export function runStartupChores(d: {
  config: Config;
  logger: Logger;
  store: Store;
  workspaces: Workspaces;
  backends: readonly Backend[];
  detector: Detector;
}): NodeJS.Timeout {
  const { config, logger, store, workspaces, backends, detector } = d;
  const swept = workspaces.sweep();
  if (swept.workspaces > 0 || swept.processes > 0) {
    logger.warn(
      { event: 'workspace_sweep', removed: swept.workspaces, killed: swept.processes },
      `removed ${swept.workspaces} workspace(s) and stopped ${swept.processes} CLI process(es) left by an earlier run`,
    );
  }

  for (const b of backends) {
    if (!detector.installed(b)) {
      logger.warn({ event: 'backend_missing', backend: b.id, bin: b.bin }, `${b.id} CLI not found at '${b.bin}'`);
      continue;
    }
    for (const file of b.credentials) {
      if (!existsSync(file))
        logger.warn(
          { event: 'credentials_missing', backend: b.id, file },
          `${b.id}: credential file ${file} not found (fine if you use an API key, or only keys bound to logins)`,
        );
    }
  }

  const prune = () => {
    if (config.usageRetentionDays <= 0) return;
    const cutoff = Date.now() - config.usageRetentionDays * 86400_000;
    const n = store.usage.prune(cutoff);
    const responses = store.responses.prune(cutoff);
    if (n + responses > 0)
      logger.info(
        { event: 'usage_pruned', rows: n, responses, olderThanDays: config.usageRetentionDays },
        `pruned ${n} usage row(s) and ${responses} stored response(s)`,
      );
  };
  prune();
  const pruneTimer = setInterval(prune, 86400_000);
  pruneTimer.unref();
  const recovered = store.slots.recover();
  if (recovered > 0)
    logger.warn(
      { event: 'session_recover', slots: recovered },
      `${recovered} session slot(s) were in use when olp stopped; they will rotate`,
    );
  return pruneTimer;
}

/**
 * Retires the live CLIs of a key revoked, disabled, expired, or whose login was removed (`olp keys`
 * and `olp logins` write from another process): a change to the keys or the logins makes it look.
 */
export function watchStanding(store: Store, holders: readonly KeyHolder[], logger: Logger) {
  return watchKeyStanding({
    keys: {
      version: () => store.keys.version() + store.logins.version(),
      standing: (id, now) => store.keys.standing(id, now),
    },
    holders,
    everyMs: 250,
    logger,
  });
}

/** This instance among several behind one front door: its tag (the state dir's) and its peers' URLs (`TAG=URL`). */
export function toInstance(config: Pick<Config, 'peers'>, tag: string | null): Instance {
  const peers: Record<string, string> = {};
  for (const p of config.peers) {
    const at = p.indexOf('=');
    peers[p.slice(0, at)] = p.slice(at + 1);
  }
  return { tag, peers };
}

/**
 * Alerts to the owner's webhook, watching each finished request's key (once its ledger row is
 * written) and each plan report; none without a webhook.
 */
export function watchAlerts(
  config: Pick<Config, 'alertWebhook' | 'alertFormat' | 'alertBudgetThresholds' | 'alertPlanThresholds'>,
  store: Store,
  logger: Logger,
  on: { finished: Channel; reported: Channel },
): Alerts | undefined {
  if (!config.alertWebhook) return undefined;
  const alerts = createAlerts({
    webhook: config.alertWebhook,
    format: config.alertFormat,
    budgetThresholds: config.alertBudgetThresholds,
    planThresholds: config.alertPlanThresholds,
    store,
    logger,
  });
  // A subscriber that throws would surface as an uncaught exception: each failure is logged here.
  on.finished.subscribe((message) => {
    const { principal, meta } = message as FinishedRequest;
    try {
      alerts.afterUsage(principal);
    } catch (err) {
      meta.log.warn({ err, event: 'alert_failed' }, 'could not check the key for alerts');
    }
  });
  // A plan report comes while its turn is still answering: it is looked at once that turn has moved on.
  on.reported.subscribe((message) => {
    const { scope, row } = message as PlanReported;
    setImmediate(() => {
      try {
        alerts.afterPlanReport(scope, row);
      } catch (err) {
        logger.warn({ err, event: 'alert_failed', scope }, 'could not check the plan report for alerts');
      }
    });
  });
  logger.info(
    { event: 'alerts_on', host: new URL(config.alertWebhook).host, format: config.alertFormat },
    `alerts go to ${new URL(config.alertWebhook).host} (${config.alertFormat})`,
  );
  return alerts;
}

/**
 * /olp/me/login's parts: the policy, the login commands on the daemon's own CLIs, the device
 * sign-ins (cancelled with the daemon), the per-key limit on sign-ins.
 */
export function memberLoginsFor(
  config: Config,
  o: {
    store: Store;
    backends: readonly Backend[];
    detector: Detector;
    hostEnv: Readonly<Record<string, string | undefined>>;
  },
  deviceArgs: readonly string[] | undefined,
): MemberLoginsDeps {
  const clis = createLoginCliContext(o.backends, o.hostEnv, config.statusTimeout * 1000);
  const devices = createDeviceSignIns({
    stateDir: config.stateDir,
    clis: () => clis,
    ...(deviceArgs ? { args: deviceArgs } : {}),
  });
  return {
    policy: config.memberLogins,
    connect: { store: o.store, stateDir: config.stateDir, clis, devices, busy: new Set(), limit: createSignInLimit() },
    installed: (cli) => o.detector.installed(cli === 'claude' ? clis.claude : clis.codex),
  };
}
