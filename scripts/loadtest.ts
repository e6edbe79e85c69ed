// npm run loadtest -- [--target URL --key KEY] [--concurrency N] [--requests N | --duration S]
//   [--stream-ratio 0..1] [--abort-ratio 0..1] [--keys N] [--prompt-bytes N] [--delay-ms N]
//   [--reply-bytes N] [--replay FILE] [--json]
// Drives olp the way OpenAI clients do (streaming and not, some aborted mid-stream, over several
// keys) and prints throughput, latency, time to first token, olp's peak RSS and CPU, and what was
// left behind. Without --target it starts its own olp on the fake CLI (or a replay recording).
// Bounded in count and time; loopback targets only. Exits 1 on a leak or an unexpected status.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { FAKE_CLAUDE, OLP_BIN } from '../test/support/paths.js';
import { createTimings } from './stats.js';

const { values } = parseArgs({
  options: {
    target: { type: 'string' },
    key: { type: 'string' },
    concurrency: { type: 'string', default: '16' },
    requests: { type: 'string' },
    duration: { type: 'string' },
    'stream-ratio': { type: 'string', default: '0.5' },
    'abort-ratio': { type: 'string', default: '0.1' },
    keys: { type: 'string', default: '4' },
    'prompt-bytes': { type: 'string', default: '200' },
    'delay-ms': { type: 'string', default: '5' },
    'reply-bytes': { type: 'string', default: '0' },
    replay: { type: 'string' },
    model: { type: 'string', default: 'sonnet' },
    json: { type: 'boolean', default: false },
  },
});

const concurrency = Number(values.concurrency);
const maxRequests = values.requests ? Number(values.requests) : values.duration ? Infinity : 200;
const durationMs = Math.min(values.duration ? Number(values.duration) * 1000 : 120_000, 600_000);
const streamRatio = Number(values['stream-ratio']);
const abortRatio = Number(values['abort-ratio']);
const promptBytes = Number(values['prompt-bytes']);

function loopbackOnly(url: string): void {
  const host = new URL(url).hostname;
  if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\]|::1)$/.test(host)) {
    console.error(`loadtest: refusing to load ${host}: only loopback targets are allowed`);
    process.exit(2);
  }
}

interface Target {
  baseURL: string;
  tokens: string[];
  olp?: ChildProcess;
  stateDir?: string;
  records?: string;
  stop(): Promise<void>;
}

/** Starts olp (the built CLI, as a user would) on the fake CLI or a recording, with N keys. */
async function startOwnOlp(): Promise<Target> {
  const base = mkdtempSync(join(tmpdir(), 'olp-load-'));
  const stateDir = join(base, 'state');
  const records = join(base, 'records');
  mkdirSync(records);
  const keyCount = Math.max(1, Number(values.keys));
  const tokens = Array.from({ length: keyCount }, (_, i) => {
    const r = spawnSync(process.execPath, [OLP_BIN, 'keys', 'add', `load${i}`, '--state-dir', stateDir], {
      encoding: 'utf8',
    });
    return r.stdout.trim().split('\n').at(-1)!;
  });
  const claudeEnv: Record<string, string> = {
    FAKE_CLAUDE_RECORD_DIR: records,
    FAKE_CLAUDE_DELAY_MS: values['delay-ms']!,
  };
  if (Number(values['reply-bytes']) > 0) claudeEnv.FAKE_CLAUDE_REPLY = 'x'.repeat(Number(values['reply-bytes']));
  const args = [
    OLP_BIN,
    'serve',
    '--state-dir',
    stateDir,
    '--port',
    '0',
    '--claude-bin',
    FAKE_CLAUDE,
    '--max-concurrency',
    String(Math.max(concurrency, 4)),
    '--log-level',
    'warn',
    '--sessions',
    'false',
  ];
  if (values.replay) args.push('--record-mode', 'replay', '--record-file', values.replay);
  const olp = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', HOME: base, OLP_CLAUDE_ENV: JSON.stringify(claudeEnv) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => olp.on('exit', (code) => resolve(code)));
  const baseURL = await new Promise<string>((resolve, reject) => {
    createInterface({ input: olp.stdout! }).once('line', resolve);
    olp.once('exit', () => reject(new Error('olp exited before listening')));
  });
  return {
    baseURL,
    tokens,
    olp,
    stateDir,
    records,
    async stop() {
      olp.kill('SIGTERM');
      await exited;
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** Peak RSS (VmHWM) in MB and CPU seconds (user + system) of a process. */
function processFigures(pid: number): { peakRssMb: number; cpuSeconds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { peakRssMb: hwm, cpuSeconds: ticks / 100 };
}

function alive(pid: number): boolean {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) [ZX] /.test(s);
  } catch {
    return false;
  }
}

const target: Target = values.target
  ? { baseURL: values.target.replace(/\/$/, ''), tokens: [values.key ?? ''], stop: async () => undefined }
  : await startOwnOlp();
loopbackOnly(target.baseURL);

const latency = createTimings();
const ttft = createTimings();
const statuses: Record<string, number> = {};
const note = (k: string) => (statuses[k] = (statuses[k] ?? 0) + 1);
const filler = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(promptBytes / 27)).slice(0, promptBytes);
const started = performance.now();
const deadline = started + durationMs;
let issued = 0;
const cpuBefore = target.olp ? processFigures(target.olp.pid!).cpuSeconds : 0;

async function one(i: number): Promise<void> {
  const stream = Math.random() < streamRatio;
  const abort = stream && Math.random() < abortRatio;
  const token = target.tokens[i % target.tokens.length]!;
  const controller = new AbortController();
  const t0 = performance.now();
  try {
    const res = await fetch(`${target.baseURL}/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: values.model, stream, messages: [{ role: 'user', content: `${filler} #${i}` }] }),
    });
    if (!stream || res.status !== 200) {
      await res.text();
      note(String(res.status));
      latency.record(performance.now() - t0);
      return;
    }
    const reader = res.body!.getReader();
    let first = true;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (first && new TextDecoder().decode(value).includes('"content"')) {
        ttft.record(performance.now() - t0);
        first = false;
        if (abort) {
          controller.abort();
          note('aborted');
          return;
        }
      }
    }
    note('200');
    latency.record(performance.now() - t0);
  } catch (err) {
    note(controller.signal.aborted ? 'aborted' : `error:${(err as Error).name}`);
  }
}

await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (issued < maxRequests && performance.now() < deadline) await one(issued++);
  }),
);
const wallS = (performance.now() - started) / 1000;

// What was left behind: wait for in-flight work to wind down, then count by pid and directory.
let leftoverWorkspaces = 0;
let survivors = 0;
let figures: { peakRssMb: number; cpuSeconds: number } | undefined;
if (target.olp && target.stateDir && target.records) {
  const until = Date.now() + 15_000;
  for (;;) {
    // The load figures are for an owner's key only (the first key added is the owner).
    const h = (await (
      await fetch(`${target.baseURL.replace(/\/v1$/, '')}/health`, {
        headers: { authorization: `Bearer ${target.tokens[0]}` },
      })
    ).json()) as { cli: { running: number } };
    if (h.cli.running === 0 || Date.now() > until) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, 100));
  figures = processFigures(target.olp.pid!);
  const pids = readdirSync(target.records)
    .filter((f) => f.endsWith('.json'))
    .map((f) => Number(f.split('.')[0]));
  survivors = pids.filter(alive).length;
  const run = join(target.stateDir, 'run');
  const countWorkspaces = () => {
    try {
      return readdirSync(run).reduce((n, k) => n + readdirSync(join(run, k)).length, 0);
    } catch {
      return 0;
    }
  };
  // Workspaces are removed off the event loop just after each response: allow that a moment.
  for (let i = 0; i < 40 && (leftoverWorkspaces = countWorkspaces()) > 0; i++)
    await new Promise((r) => setTimeout(r, 50));
}
await target.stop();

const total = Object.values(statuses).reduce((a, b) => a + b, 0);
const unexpected = Object.keys(statuses).filter((k) => k !== '200' && k !== 'aborted');
const result = {
  requests: total,
  statuses,
  throughputRps: +(total / wallS).toFixed(1),
  latencyMs: { p50: +latency.p(50).toFixed(1), p95: +latency.p(95).toFixed(1), p99: +latency.p(99).toFixed(1) },
  ttftMs: { p50: +ttft.p(50).toFixed(1), p95: +ttft.p(95).toFixed(1) },
  ...(figures
    ? {
        olpPeakRssMb: +figures.peakRssMb.toFixed(1),
        olpCpuSeconds: +(figures.cpuSeconds - cpuBefore).toFixed(2),
        olpCpuPercent: +(((figures.cpuSeconds - cpuBefore) / wallS) * 100).toFixed(0),
      }
    : {}),
  survivingCliProcesses: survivors,
  leftoverWorkspaces,
  concurrency,
  wallSeconds: +wallS.toFixed(1),
};
if (values.json) console.log(JSON.stringify(result));
else {
  const rows: [string, string][] = [
    ['requests', `${result.requests} in ${result.wallSeconds} s at concurrency ${concurrency}`],
    [
      'by status',
      Object.entries(statuses)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', '),
    ],
    ['throughput', `${result.throughputRps} req/s`],
    ['latency p50/p95/p99', `${result.latencyMs.p50} / ${result.latencyMs.p95} / ${result.latencyMs.p99} ms`],
    ['time to first token p50/p95', `${result.ttftMs.p50} / ${result.ttftMs.p95} ms`],
    ...(figures
      ? ([
          ['olp peak RSS', `${result.olpPeakRssMb} MB`],
          ['olp CPU', `${result.olpCpuSeconds} s (${result.olpCpuPercent}% of one core)`],
        ] as [string, string][])
      : []),
    ['surviving CLI processes', String(survivors)],
    ['leftover workspaces', String(leftoverWorkspaces)],
  ];
  for (const [k, v] of rows) console.log(`${k.padEnd(28)} ${v}`);
}
if (survivors > 0 || leftoverWorkspaces > 0 || unexpected.length > 0) {
  console.error(
    `loadtest: FAILED (${[survivors ? `${survivors} surviving processes` : '', leftoverWorkspaces ? `${leftoverWorkspaces} leftover workspaces` : '', unexpected.length ? `unexpected: ${unexpected.join(', ')}` : ''].filter(Boolean).join('; ')})`,
  );
  process.exit(1);
}
