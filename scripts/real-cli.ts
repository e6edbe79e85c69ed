// The real `claude` (the pinned devDependency) through olp against the loopback stand-in for the
// Anthropic Messages API, provider latency 0 and 300 ms: how long a turn takes and how much CPU
// it costs when it runs cold (a new process), resumed (a new process with --resume) and warm (a
// live worker), and how much memory a live worker holds. olp runs as its own process; CPU per turn
// is olp's own plus its CLI children's (reaped ones from /proc/<olp>/stat, live ones from theirs).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { findByHome } from '../src/process/index.js';
import { runDirFor } from '../src/workspace/index.js';
import { claudeStandInEnv, startAnthropicStandIn, type StandIn } from '../test/support/anthropic-stand-in.js';
import { REAL_CLAUDE, REAL_CODEX } from '../test/support/paths.js';
import { addKey, serve } from './daemon.js';
import {
  codexStandInConfig,
  startResponsesStandIn,
  type ResponsesStandIn,
} from '../test/support/responses-stand-in.js';

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** user + system CPU of a process in ms; with `children`, also that of the children it has reaped. */
function cpuMs(pid: number, children = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    const ticks = f[11]! + f[12]! + (children ? f[13]! + f[14]! : 0);
    return (ticks * 1000) / CLK_TCK;
  } catch {
    return 0;
  }
}

export interface Olp {
  url: string;
  token: string;
  /** A second key's token. */
  other: string;
  pid: number;
  stateDir: string;
  /** CLI processes olp has started so far. */
  spawns(): number;
  stop(): Promise<void>;
}

export async function startOlp(api: { claude: StandIn; codex: ResponsesStandIn }, workers: boolean): Promise<Olp> {
  const dir = mkdtempSync(join(tmpdir(), 'olp-realbench-'));
  const stateDir = join(dir, 'state');
  const claudeEnv = claudeStandInEnv(api.claude.url);
  const codexConfig = codexStandInConfig(api.codex.url);
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    OLP_CLAUDE_ENV: JSON.stringify(claudeEnv),
    OLP_CODEX_ENV: JSON.stringify({ CODEX_API_KEY: 'sk-dummy-000' }),
    OLP_CODEX_CONFIG: JSON.stringify(codexConfig),
  };
  const token = addKey(stateDir, 'bench', env);
  const other = addKey(stateDir, 'other', env);
  const { daemon, base } = serve({
    stateDir,
    env,
    args: [
      '--claude-bin',
      REAL_CLAUDE,
      '--codex-bin',
      REAL_CODEX,
      '--workers',
      String(workers),
      '--log-level',
      'debug',
    ],
  });
  let spawns = 0;
  createInterface({ input: daemon.stderr! }).on('line', (l) => {
    if (l.includes('"event":"spawned"')) spawns++;
  });
  const url = await base;
  return {
    url,
    token,
    other,
    pid: daemon.pid!,
    stateDir,
    spawns: () => spawns,
    async stop() {
      const exited = new Promise((r) => daemon.once('exit', r));
      daemon.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The live CLI processes of this olp (found by their HOME under its run dir). */
function liveClis(olp: Olp): number[] {
  return findByHome({ under: [runDirFor(olp.stateDir)] });
}

/** CPU of olp, its reaped children and its live CLIs, in ms. */
function totalCpu(olp: Olp, live: number[]): number {
  return cpuMs(olp.pid, true) + live.reduce((n, p) => n + cpuMs(p), 0);
}

/** Waits until the olp has a pre-started CLI that is up (its /health lists it as `spare`). */
async function spareUp(olp: Olp): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const res = await fetch(`${olp.url}/health`, { headers: { authorization: `Bearer ${olp.token}` } });
    const live = ((await res.json()) as { workers: { live: { state: string }[] } }).workers.live;
    if (live.some((w) => w.state === 'spare')) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no spare came up');
}

/**
 * Waits until no CLI of the olp is starting or retiring: a spare the last turn left (or stopped,
 * once the key has gone on with its conversation: see `countTurn`) is not counted in a turn.
 */
async function settled(olp: Olp): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const res = await fetch(`${olp.url}/health`, { headers: { authorization: `Bearer ${olp.token}` } });
    const live = ((await res.json()) as { workers: { live: { state: string }[] } }).workers.live;
    if (!live.some((w) => w.state === 'starting' || w.state === 'retiring')) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the live CLIs did not settle');
}

type Msg = { role: 'system' | 'user' | 'assistant'; content: string };

async function ask(
  olp: Olp,
  messages: Msg[],
  model: string,
): Promise<{ ms: number; reply: string; run: string | null }> {
  const started = performance.now();
  const res = await fetch(`${olp.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${olp.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages }),
  });
  const body = (await res.json()) as { choices?: { message: { content: string } }[] };
  if (!res.ok || !body.choices) throw new Error(`olp answered ${res.status}: ${JSON.stringify(body)}`);
  return {
    ms: performance.now() - started,
    reply: body.choices[0]!.message.content,
    run: res.headers.get('x-olp-session-mode'),
  };
}

/** One turn's wall time and CPU (olp + every CLI of it, including one that exits during the turn). */
async function measured(olp: Olp, messages: Msg[], model: string): Promise<{ ms: number; cpu: number; reply: string }> {
  const before = liveClis(olp);
  const c0 = totalCpu(olp, before);
  const r = await ask(olp, messages, model);
  // A cold CLI may still be exiting: wait until olp has reaped it, so its CPU is counted.
  for (
    let i = 0;
    i < 50 &&
    before.length === 0 &&
    liveClis(olp).some((p) => !readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('stream-json'));
    i++
  )
    await new Promise((res) => setTimeout(res, 20));
  const after = [...new Set([...before, ...liveClis(olp)])];
  return { ms: r.ms, cpu: totalCpu(olp, after) - c0, reply: r.reply };
}

export interface RealCliRow {
  cli: 'claude' | 'codex';
  latencyMs: number;
  mode: 'cold' | 'resumed' | 'warm' | 'prestarted';
  turnMs: number[];
  cpuMs: number[];
}

export interface RealCliFigures {
  rows: RealCliRow[];
  /** Each live CLI olp lists after the warm claude turns: state, turns and resident memory. */
  workerRss: string[];
}

/** Waits until the olp has a codex worker that has loaded its thread (app-server up). */
async function codexWorkerUp(olp: Olp): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const res = await fetch(`${olp.url}/health`, { headers: { authorization: `Bearer ${olp.token}` } });
    const live = ((await res.json()) as { workers: { live: { slot: string; state: string }[] } }).workers.live;
    if (live.some((w) => w.slot.includes('/codex/') && w.state === 'idle')) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no codex worker came up');
}

type Mode = RealCliRow['mode'];

/** One conversation of turns+1 turns; the first (cold) is not counted. */
async function conversationRow(
  olp: Olp,
  cli: RealCliRow['cli'],
  latencyMs: number,
  mode: Mode,
  turns: number,
  model: string,
  before?: () => Promise<void>,
): Promise<RealCliRow> {
  const row: RealCliRow = { cli, latencyMs, mode, turnMs: [], cpuMs: [] };
  const messages: Msg[] = [];
  for (let i = 0; i <= turns; i++) {
    if (i > 0) await before?.();
    messages.push({ role: 'user', content: `turn ${i}` });
    const m = await measured(olp, messages, model);
    messages.push({ role: 'assistant', content: m.reply });
    if (i > 0) {
      row.turnMs.push(m.ms);
      row.cpuMs.push(m.cpu);
    }
  }
  return row;
}

/** A new conversation per turn. */
async function newConversationsRow(
  olp: Olp,
  cli: RealCliRow['cli'],
  latencyMs: number,
  mode: Mode,
  turns: number,
  model: string,
  before?: () => Promise<void>,
): Promise<RealCliRow> {
  const row: RealCliRow = { cli, latencyMs, mode, turnMs: [], cpuMs: [] };
  for (let i = 0; i < turns; i++) {
    await before?.();
    const m = await measured(olp, [{ role: 'user', content: `a new ${mode} conversation ${latencyMs}-${i}` }], model);
    row.turnMs.push(m.ms);
    row.cpuMs.push(m.cpu);
  }
  return row;
}

/** Cold, resumed, warm and pre-started turns at each provider latency; undefined when the real CLIs are not installed. */
export async function runRealCli(turns = 5, latencies = [0, 300]): Promise<RealCliFigures | undefined> {
  if (!existsSync(REAL_CLAUDE)) return undefined;
  const claude = await startAnthropicStandIn();
  const codex = await startResponsesStandIn();
  const withCodex = existsSync(REAL_CODEX);
  const rows: RealCliRow[] = [];
  const workerRss: string[] = [];
  try {
    for (const latencyMs of latencies) {
      claude.latencyMs = latencyMs;
      codex.latencyMs = latencyMs;
      const off = await startOlp({ claude, codex }, false);
      try {
        rows.push(await newConversationsRow(off, 'claude', latencyMs, 'cold', turns, 'sonnet'));
        rows.push(await conversationRow(off, 'claude', latencyMs, 'resumed', turns, 'sonnet'));
        if (withCodex) {
          rows.push(await newConversationsRow(off, 'codex', latencyMs, 'cold', turns, 'codex'));
          rows.push(await conversationRow(off, 'codex', latencyMs, 'resumed', turns, 'codex'));
        }
      } finally {
        await off.stop();
      }
      const on = await startOlp({ claude, codex }, true);
      try {
        // The spare the first turn leaves is let come up (and, once the key has gone on for two warm turns,
        // stop) before each turn, so its start-up is not counted as a warm turn's.
        rows.push(await conversationRow(on, 'claude', latencyMs, 'warm', turns, 'sonnet', () => settled(on)));
        const health = await fetch(`${on.url}/health`, { headers: { authorization: `Bearer ${on.token}` } });
        for (const w of (
          (await health.json()) as { workers: { live: { state: string; turns: number; rssMb: number | null }[] } }
        ).workers.live) {
          workerRss.push(`${w.state} (${w.turns} turns) ${w.rssMb ?? '?'} MB`);
        }
        // Pre-started: each new conversation's first turn, once the spare the last turn left is up. A key
        // that has just gone on with its conversation keeps no spare: the first new one (not counted)
        // begins a conversation again, and leaves the spare the first counted one takes.
        await measured(on, [{ role: 'user', content: `a conversation begun again ${latencyMs}` }], 'sonnet');
        rows.push(await newConversationsRow(on, 'claude', latencyMs, 'prestarted', turns, 'sonnet', () => spareUp(on)));
        // codex: turns 2.. on the app-server that loaded the thread after turn 1.
        if (withCodex)
          rows.push(await conversationRow(on, 'codex', latencyMs, 'warm', turns, 'codex', () => codexWorkerUp(on)));
      } finally {
        await on.stop();
      }
    }
  } finally {
    await claude.close();
    await codex.close();
  }
  return { rows, workerRss };
}

export function printRealCli(f: RealCliFigures): void {
  console.log(
    "real claude and codex (pinned) through olp, loopback stand-in APIs; medians (min-max) of each mode's turns",
  );
  console.log('  cli     provider latency  mode        turn ms                 CPU ms per turn (olp + CLI)');
  const fmt = (xs: number[]) =>
    `${median(xs).toFixed(0).padStart(5)} (${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})`.padEnd(22);
  for (const r of f.rows)
    console.log(
      `  ${r.cli.padEnd(6)}  ${String(r.latencyMs).padStart(6)} ms         ${r.mode.padEnd(10)}  ${fmt(r.turnMs)}  ${fmt(r.cpuMs)}`,
    );
  console.log(
    "  (a pre-started turn's CPU leaves out starting the spare it used: a cold start's CPU, paid in the background beforehand)",
  );
  if (f.workerRss.length)
    console.log(
      `  live claude CLIs after ${f.rows.find((r) => r.mode === 'warm')?.turnMs.length ?? 0} warm turns: ${f.workerRss.join(', ')}`,
    );
  console.log(JSON.stringify({ realCli: f }));
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
