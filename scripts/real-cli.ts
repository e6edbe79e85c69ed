// The real `claude` (the pinned devDependency) through olp against the loopback stand-in for the
// Anthropic Messages API, provider latency 0 and 300 ms: how long a turn takes and how much CPU
// it costs when it runs cold (a new process), resumed (a new process with --resume) and warm (a
// live worker), and how much memory a live worker holds. olp runs as its own process; CPU per turn
// is olp's own plus its CLI children's (reaped ones from /proc/<olp>/stat, live ones from theirs).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { findByHome } from '../src/process/index.js';
import { runDirFor } from '../src/workspace/index.js';
import { startAnthropicStandIn, type StandIn } from '../test/support/anthropic-stand-in.js';
import { OLP_BIN, REAL_CLAUDE } from '../test/support/paths.js';

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** user + system CPU of a process in ms; with `children`, also that of the children it has reaped. */
function cpuMs(pid: number, children = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    const ticks = f[11]! + f[12]! + (children ? f[13]! + f[14]! : 0);
    return (ticks * 1000) / CLK_TCK;
  } catch {
    return 0;
  }
}

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

interface Olp {
  url: string;
  token: string;
  pid: number;
  stateDir: string;
  stop(): Promise<void>;
}

async function startOlp(api: StandIn, workers: boolean): Promise<Olp> {
  const dir = mkdtempSync(join(tmpdir(), 'olp-realbench-'));
  const stateDir = join(dir, 'state');
  const claudeEnv = { ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: 'sk-ant-dummy-000', CLAUDE_CODE_MAX_RETRIES: '0' };
  const env = { PATH: process.env.PATH ?? '', HOME: dir, OLP_CLAUDE_ENV: JSON.stringify(claudeEnv) };
  const token = execFileSync(process.execPath, [OLP_BIN, 'keys', 'add', 'bench', '--state-dir', stateDir], { env, encoding: 'utf8' }).trim().split('\n').at(-1)!;
  const daemon = spawn(process.execPath, [OLP_BIN, 'serve', '--port', '0', '--state-dir', stateDir, '--claude-bin', REAL_CLAUDE, '--workers', String(workers)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  daemon.stderr!.resume();
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: daemon.stdout! }).once('line', (l) => resolve(l.replace(/\/v1$/, '')));
    daemon.once('exit', (code) => reject(new Error(`olp exited ${code}`)));
  });
  daemon.stdout!.resume();
  return {
    url,
    token,
    pid: daemon.pid!,
    stateDir,
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

type Msg = { role: 'system' | 'user' | 'assistant'; content: string };

async function ask(olp: Olp, messages: Msg[]): Promise<{ ms: number; reply: string; run: string | null }> {
  const started = performance.now();
  const res = await fetch(`${olp.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${olp.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sonnet', messages }),
  });
  const body = (await res.json()) as { choices?: { message: { content: string } }[] };
  if (!res.ok || !body.choices) throw new Error(`olp answered ${res.status}: ${JSON.stringify(body)}`);
  return { ms: performance.now() - started, reply: body.choices[0]!.message.content, run: res.headers.get('x-olp-session-mode') };
}

/** One turn's wall time and CPU (olp + every CLI of it, including one that exits during the turn). */
async function measured(olp: Olp, messages: Msg[]): Promise<{ ms: number; cpu: number; reply: string }> {
  const before = liveClis(olp);
  const c0 = totalCpu(olp, before);
  const r = await ask(olp, messages);
  // A cold CLI may still be exiting: wait until olp has reaped it, so its CPU is counted.
  for (let i = 0; i < 50 && before.length === 0 && liveClis(olp).some((p) => !readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('stream-json')); i++) await new Promise((res) => setTimeout(res, 20));
  const after = [...new Set([...before, ...liveClis(olp)])];
  return { ms: r.ms, cpu: totalCpu(olp, after) - c0, reply: r.reply };
}

export interface RealCliRow {
  latencyMs: number;
  mode: 'cold' | 'resumed' | 'warm' | 'prestarted';
  turnMs: number[];
  cpuMs: number[];
}

export interface RealCliFigures {
  rows: RealCliRow[];
  workerRssMb: number[];
}

/** Cold, resumed and warm turns at each provider latency; undefined when the real CLI is not installed. */
export async function runRealCli(turns = 5, latencies = [0, 300]): Promise<RealCliFigures | undefined> {
  if (!existsSync(REAL_CLAUDE)) return undefined;
  const api = await startAnthropicStandIn();
  const rows: RealCliRow[] = [];
  const workerRssMb: number[] = [];
  try {
    for (const latencyMs of latencies) {
      api.latencyMs = latencyMs;
      // Cold and resumed: workers off, a new conversation per turn / one conversation.
      const off = await startOlp(api, false);
      try {
        const cold: RealCliRow = { latencyMs, mode: 'cold', turnMs: [], cpuMs: [] };
        for (let i = 0; i < turns; i++) {
          const m = await measured(off, [{ role: 'user', content: `a new conversation ${latencyMs}-${i}` }]);
          cold.turnMs.push(m.ms);
          cold.cpuMs.push(m.cpu);
        }
        const resumed: RealCliRow = { latencyMs, mode: 'resumed', turnMs: [], cpuMs: [] };
        const messages: Msg[] = [];
        for (let i = 0; i <= turns; i++) {
          messages.push({ role: 'user', content: `turn ${i}` });
          const m = await measured(off, messages);
          messages.push({ role: 'assistant', content: m.reply });
          if (i > 0) {
            resumed.turnMs.push(m.ms);
            resumed.cpuMs.push(m.cpu);
          }
        }
        rows.push(cold, resumed);
      } finally {
        await off.stop();
      }
      const on = await startOlp(api, true);
      try {
        const warm: RealCliRow = { latencyMs, mode: 'warm', turnMs: [], cpuMs: [] };
        const messages: Msg[] = [];
        for (let i = 0; i <= turns; i++) {
          messages.push({ role: 'user', content: `turn ${i}` });
          const m = await measured(on, messages);
          messages.push({ role: 'assistant', content: m.reply });
          if (i > 0) {
            warm.turnMs.push(m.ms);
            warm.cpuMs.push(m.cpu);
          }
        }
        rows.push(warm);
        for (const p of liveClis(on)) workerRssMb.push(rssMb(p));
        // Pre-started: each new conversation's first turn, once the spare the last turn left is up.
        const pre: RealCliRow = { latencyMs, mode: 'prestarted', turnMs: [], cpuMs: [] };
        for (let i = 0; i < turns; i++) {
          await spareUp(on);
          const m = await measured(on, [{ role: 'user', content: `a new conversation on a spare ${latencyMs}-${i}` }]);
          pre.turnMs.push(m.ms);
          pre.cpuMs.push(m.cpu);
        }
        rows.push(pre);
      } finally {
        await on.stop();
      }
    }
  } finally {
    await api.close();
  }
  return { rows, workerRssMb };
}

export function printRealCli(f: RealCliFigures): void {
  console.log('real claude (pinned) through olp, loopback stand-in API; medians (min-max) of each mode\'s turns');
  console.log('  provider latency  mode        turn ms                 CPU ms per turn (olp + CLI)');
  const fmt = (xs: number[]) => `${median(xs).toFixed(0).padStart(5)} (${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})`.padEnd(22);
  for (const r of f.rows) console.log(`  ${String(r.latencyMs).padStart(6)} ms         ${r.mode.padEnd(10)}  ${fmt(r.turnMs)}  ${fmt(r.cpuMs)}`);
  console.log('  (a pre-started turn\'s CPU leaves out starting the spare it used: a cold start\'s CPU, paid in the background beforehand)');
  if (f.workerRssMb.length) console.log(`  RSS of the live CLIs (the worker and spares) after ${f.rows.find((r) => r.mode === 'warm')?.turnMs.length ?? 0} warm turns: ${f.workerRssMb.map((m) => `${m.toFixed(0)} MB`).join(', ')}`);
  console.log(JSON.stringify({ realCli: f }));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
