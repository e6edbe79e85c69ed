import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDetector, type Detection } from '../backends/index.js';
import type { Config } from '../config/index.js';
import { describePlans } from '../plan/index.js';
import { createBackends, toHostEnv } from '../serve.js';
import { findLockHolder, keysWithoutTag, readInstanceTag, readPlanStates } from '../store/index.js';
import { findByHome, describeProcess, starterInfo } from '../process/index.js';
import { createWorkspaces, runDirFor } from '../workspace/index.js';
import { LOGIN, toFoundBy, toRunnableFix, toStatusTimeoutText } from './readiness.js';
import { printable, toColumns } from './output.js';
import { inspectStateDir } from './state-dir.js';
import { describeLogins, loginChecks, type LoginCheck } from './doctor-logins.js';
import { describePort, HEALTH_TIMEOUT_MS } from './doctor-port.js';

/** How long doctor and the start's report wait: the config's, unless a test gives shorter ones. */
export interface ProbeTimes {
  /** For each CLI status command (default: `--status-timeout`). */
  statusTimeoutMs?: number;
  /** For a running olp's /health. */
  healthTimeoutMs?: number;
  /** Stops the status commands early (olp serve shutting down while its start's report runs). */
  signal?: AbortSignal;
}

/**
 * Each backend's CLI as `olp serve` runs it (path, version, login). The status commands run in
 * throwaway homes under a private (0700) temp dir, never in the state dir: it may not exist yet,
 * and a running server's `run/` holds only its requests' workspaces.
 */
export async function runDetection(
  config: Config,
  rawEnv: Readonly<Record<string, string | undefined>>,
  logins: readonly LoginCheck[] = [],
  times: ProbeTimes = {},
): Promise<Detection[] & { logins?: Map<string, Detection> }> {
  const hostEnv = toHostEnv(rawEnv);
  const { backends, probes } = createBackends(config, hostEnv);
  const scratch = mkdtempSync(join(tmpdir(), 'olp-probe-'));
  try {
    const detector = createDetector(
      hostEnv,
      probes,
      createWorkspaces(scratch, { runDir: join(scratch, 'run'), path: hostEnv.PATH }),
      {
        ttlMs: 0,
        timeoutMs: times.statusTimeoutMs ?? config.statusTimeout * 1000,
        ...(times.signal ? { signal: times.signal } : {}),
      },
    );
    const machine = Promise.all(backends.map((b) => detector.detect(b)));
    // Each login's credential, as its runs get it (its token or file, none of the machine's).
    const byLogin = Promise.all(
      logins.map(async (c) => {
        const b = backends.find((x) => x.id === c.cli)!;
        return [`${c.login}/${c.cli}`, await detector.detect(b, c.use)] as const;
      }),
    );
    return Object.assign(await machine, { logins: new Map(await byLogin) });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

type Found = Awaited<ReturnType<typeof runDetection>>;
type Accounts = ReturnType<typeof describeLogins>;

/** `olp doctor`: a readable report on every backend and the state; exit 1 when no backend can serve. */
export async function runDoctor(
  config: Config,
  rawEnv: Readonly<Record<string, string | undefined>>,
  out: (s: string) => void,
  times: ProbeTimes = {},
): Promise<number> {
  const { checks, logins, keys, sharing } = loginChecks(config);
  const found = await runDetection(config, rawEnv, checks, times);
  out(backendTable(config, found));
  out('\n');
  const state = inspectStateDir(config.stateDir);
  const port = await describePort(config, times.healthTimeoutMs ?? HEALTH_TIMEOUT_MS);
  out(`state dir  ${state.ok ? 'ok' : 'PROBLEM'}  ${state.text}\n`);
  out(runningText(config));
  const accounts = describeLogins(config, rawEnv, logins, keys, sharing, found.logins ?? new Map());
  out(`logins     ${accounts.lines[0]}\n`);
  for (const line of accounts.lines.slice(1)) out(`           ${line}\n`);
  out(instanceText(config, accounts));
  out(spawningText());
  out(`port       ${port}\n`);
  out(holderText(config));
  const fixes = [
    ...found.flatMap((d) => d.fixes.map((f) => `${d.backend}: ${toRunnableFix(d, f)}`)),
    ...(state.fix ? [`state dir: ${state.fix}`] : []),
    ...unlinkedLogins(found),
    ...accounts.fixes,
  ];
  // A status command that ran out of time: said as such, with how to wait longer.
  accounts.warnings.unshift(...statusTimeouts(found));
  if (fixes.length > 0) out(`\nTo fix:\n${fixes.map((f) => `  ${f}`).join('\n')}\n`);
  if (accounts.warnings.length > 0) out(`\nWarnings:\n${accounts.warnings.map((w) => `  ${w}`).join('\n')}\n`);
  const ready = found.filter((d) => d.ready && d.path);
  out(
    ready.length > 0
      ? `\nolp can serve: ${ready.map((d) => d.backend).join(', ')}\n`
      : '\nNo backend can serve requests yet.\n',
  );
  return ready.length > 0 ? 0 : 1;
}

/** One row per backend: its binary, version, login, credentials, readiness and how it was found. */
function backendTable(config: Config, found: Found): string {
  const configured: Record<string, string> = { claude: config.claudeBin, codex: config.codexBin };
  // VERSION is the version of the binary in BINARY: the one `olp serve` runs.
  const rows = [['BACKEND', 'BINARY', 'VERSION', 'LOGIN', 'CREDENTIALS', 'READY', 'FOUND BY']];
  for (const d of found) {
    const creds = d.credentials.map((c) => `${c.file} (${c.exists ? 'found' : 'missing'})`).join(', ');
    rows.push([
      d.backend,
      d.path ?? `not found (${d.bin})`,
      d.version ?? '-',
      d.path ? (d.loginTimeout ? 'not checked' : LOGIN[d.login]) : '-',
      creds,
      d.ready ? 'yes' : 'no',
      toFoundBy(d, configured[d.backend]),
    ]);
  }
  const onPath = found.some((d) => d.path && !configured[d.backend]?.includes('/'));
  return (
    toColumns(rows) +
    (onPath
      ? "(names are looked up on PATH, skipping olp's own node_modules/.bin: its copies are pinned for its tests)\n"
      : '')
  );
}

/**
 * The CLIs a running olp on this state dir has (live workers and turns in flight, found by their HOME),
 * and the plan.
 */
function runningText(config: Config): string {
  const clis = findByHome({ under: [runDirFor(config.stateDir, config.runDir)] })
    .map(describeProcess)
    .filter((p) => p !== null);
  const running = `${clis.length} running for this state dir (live workers and turns in flight)`;
  let text = `CLIs       ${clis.length === 0 ? 'none running' : running}\n`;
  for (const p of clis)
    text += `           pid ${p.pid}  ${printable(p.command)}  ${p.rssMb} MB  up ${formatAge(p.ageS)}\n`;
  const plans = describePlans(readPlanStates(config.stateDir), Date.now());
  text += `plan       ${plans.length === 0 ? 'no limit reported' : plans[0]}\n`;
  for (const line of plans.slice(1)) text += `           ${line}\n`;
  return text;
}

/** The instance tag and peers, if tagged; keys without the tag are added to the warnings. */
function instanceText(config: Config, accounts: Accounts): string {
  const tag = config.instanceTag ?? readInstanceTag(config.stateDir);
  if (tag === null) return '';
  const untagged = keysWithoutTag(config.stateDir, tag);
  const peers = config.peers.length === 0 ? 'no peers listed' : `peers ${config.peers.join(', ')}`;
  if (untagged.length > 0)
    accounts.warnings.push(
      `keys without the instance tag '${tag}' (${untagged.join(', ')}): a front door routes them only with ` +
        `--untagged ${tag}; or rotate each (olp keys rotate NAME)`,
    );
  return `instance   ${tag} (keys made here carry it); ${peers}\n`;
}

/** How children are started: the native starter, or Node's slower child_process. */
function spawningText(): string {
  const starter = starterInfo();
  const how =
    starter.kind === 'posix_spawn'
      ? 'ok  posix_spawn (native starter)'
      : `slower  Node's child_process (${starter.reason}; about 2-4 ms more per request)`;
  return `spawning   ${how}\n`;
}

/** This state dir's olp listening elsewhere than the port checked above. */
function holderText(config: Config): string {
  const running = findLockHolder(config.stateDir);
  if (!running || running.holder?.port === config.port) return '';
  const h = running.holder;
  const where =
    h === null
      ? 'running for this state dir (starting)'
      : `running for this state dir: pid ${h.pid}, version ${h.version ?? 'unknown'}` +
        (h.url ? `, ${h.url}/v1` : ', starting');
  return `olp        ${where}\n`;
}

/** Logged-in CLIs whose login is not in the file olp links. */
function unlinkedLogins(found: Found): string[] {
  return found.flatMap((d) =>
    d.path && d.login !== 'api_key' && d.credentials.some((c) => !c.exists) && d.login === 'logged_in'
      ? [
          `${d.backend}: the login is not in the file olp links (${d.credentials.map((c) => c.file).join(', ')}); ` +
            `point --${d.backend === 'claude' ? 'claude-credentials' : 'codex-auth'} at it`,
        ]
      : [],
  );
}

/** Status commands that ran out of time, with how to wait longer. */
function statusTimeouts(found: Found): string[] {
  return found.flatMap((d) =>
    d.loginTimeout
      ? [
          `${toStatusTimeoutText(d.backend, d.loginTimeout.command, d.loginTimeout.seconds)}; ` +
            'is the machine busy? --status-timeout SECONDS waits longer',
        ]
      : [],
  );
}

/** `5m 3s`, `2h 10m`. */
function formatAge(s: number): string {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}
