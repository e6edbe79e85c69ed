import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseConfig, type ConfigKey } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { startDaemon, type Daemon } from '../../src/daemon.js';
import type { DaemonOptions } from '../../src/serve.js';
import { FAKE_CLAUDE, FAKE_CODEX } from './paths.js';

export interface TestDaemon {
  url: string;
  baseURL: string;
  token: string;
  daemon: Daemon;
  stateDir: string;
  /** A stand-in for the operator's real home (where credentials would be). */
  operatorHome: string;
  /** The fake CLI's record dir (pids, argv). */
  recordDir: string;
  logs: Record<string, unknown>[];
  /** Stops the daemon; removes its files unless `keep` (to start again on the same state). */
  close(keep?: boolean): Promise<void>;
  base: string;
}

/** Starts a real listening olp (in this process) on the fake claude, with one owner key. */
export async function startTestDaemon(
  opts: {
    config?: Partial<Record<ConfigKey, unknown>>;
    claudeEnv?: Record<string, string>;
    codexEnv?: Record<string, string>;
    hostEnv?: Record<string, string>;
    base?: string;
    /** false: no one refresher per login file (see DaemonOptions.refreshGate). */
    refreshGate?: false;
    /** The live workers' clock, memory-pressure reading and sampling period (see DaemonOptions.workerPool). */
    workerPool?: DaemonOptions['workerPool'];
    /** Appended to `codex login --device-auth` (see DaemonOptions.codexDeviceArgs). */
    codexDeviceArgs?: readonly string[];
  } = {},
): Promise<TestDaemon> {
  const base = opts.base ?? mkdtempSync(join(tmpdir(), 'olp-test-'));
  const stateDir = join(base, 'state');
  const operatorHome = join(base, 'operator-home');
  const recordDir = join(base, 'records');
  mkdirSync(operatorHome, { recursive: true });
  mkdirSync(recordDir, { recursive: true });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const config = parseConfig({
    readFile: false,
    env: {},
    overrides: {
      stateDir,
      port: 0,
      claudeBin: FAKE_CLAUDE,
      codexBin: FAKE_CODEX,
      logLevel: 'debug',
      claudeEnv: { FAKE_CLAUDE_RECORD_DIR: recordDir, ...opts.claudeEnv },
      codexEnv: { FAKE_CODEX_RECORD_DIR: recordDir, ...opts.codexEnv },
      // Most tests pin the cold path (one process per turn); test/e2e/workers.test.ts turns workers on.
      workers: false,
      // A budget that holds every live CLI of a test, whatever the machine's memory (a CLI not
      // measured yet is reckoned at 300 MB): the budget's own tests set theirs.
      workerMemory: 4000,
      ...opts.config,
    },
  });
  const logger = createLogger(config.logLevel, sink);
  const daemon = await startDaemon({
    config,
    logger,
    hostEnv: { PATH: process.env.PATH ?? '', HOME: operatorHome, ...opts.hostEnv },
    ...(opts.refreshGate === false ? { refreshGate: false as const } : {}),
    ...(opts.workerPool ? { workerPool: opts.workerPool } : {}),
    ...(opts.codexDeviceArgs ? { codexDeviceArgs: opts.codexDeviceArgs } : {}),
  });
  const token = opts.base ? '' : daemon.store.keys.add('tester', 'owner').token;
  return {
    url: daemon.url,
    baseURL: `${daemon.url}/v1`,
    token,
    daemon,
    stateDir,
    operatorHome,
    recordDir,
    logs,
    async close(keep = false) {
      await daemon.close();
      if (!keep) rmSync(base, { recursive: true, force: true });
    },
    base,
  };
}

/**
 * Waits until the live worker of the daemon's `nth` start (0: its first; see the `worker_starting`
 * log event) is up and idle, by its pid in /health.
 */
export async function startedWorkerIdle(t: TestDaemon, nth = 0, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const started = t.logs.filter((l) => l.event === 'worker_starting')[nth];
    if (started) {
      const health = (await (
        await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })
      ).json()) as { workers: { live: { pid: number; state: string }[] } };
      if (health.workers.live.some((w) => w.pid === started.pid && w.state === 'idle')) return;
    }
    if (Date.now() > end) throw new Error('no live worker came up');
    await new Promise((r) => setTimeout(r, 20));
  }
}
