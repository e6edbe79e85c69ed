// Latency olp adds to a CLI run: the same fake claude spawned (a) directly by a minimal Node
// script and (b) through a running olp, alternating, one-token non-streaming replies. Then the
// cost of two per-request steps on their own: admission and a workspace's create + remove.
// Prints figures; it is not a test. Usage: npm run bench -- [--runs N] [--hot-runs N] [--warmup N] [--hot-only] [--real-only] [--tools-only] [--agent-only]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseConfig } from '../src/config/index.js';
import { createLogger } from '../src/log/index.js';
import { createAdmission } from '../src/admit/index.js';
import { startDaemon } from '../src/daemon.js';
import { openStore } from '../src/store/index.js';
import { createWorkspaces } from '../src/workspace/index.js';
import { FAKE_CLAUDE } from '../test/support/paths.js';
import { createTimings, throughput } from './stats.js';
import { DEFAULT_WARMUP, printHotPath, runHotPath } from './hot-path.js';
import { printRealCli, runRealCli } from './real-cli.js';
import { printAgentTurns, runAgentTurns } from './agent-turns.js';
import { printToolTurns, runToolTurns } from './tool-turns.js';
import { printWarmPath, runWarmPath } from './warm-path.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '60' },
    'hot-runs': { type: 'string', default: '300' },
    warmup: { type: 'string', default: String(DEFAULT_WARMUP) },
    'hot-only': { type: 'boolean', default: false },
    'real-only': { type: 'boolean', default: false },
    'tools-only': { type: 'boolean', default: false },
    'agent-only': { type: 'boolean', default: false },
  },
});
if (values['tools-only']) {
  const tools = await runToolTurns();
  if (tools) printToolTurns(tools);
  else console.log('real CLIs: not installed (npm ci); skipped');
  process.exit(0);
}
if (values['agent-only']) {
  printAgentTurns(await runAgentTurns());
  process.exit(0);
}
if (values['real-only']) {
  const real = await runRealCli();
  if (real) printRealCli(real);
  else console.log('real claude CLI: not installed (npm ci); skipped');
  process.exit(0);
}
const runs = Number(values.runs);

// olp's own cost, visible: the native fake first.
const hot = await runHotPath(Number(values['hot-runs']), { prestart: true, warmup: Number(values.warmup) });
if (hot) printHotPath(hot);
else console.log('native fake CLI: no C compiler (cc) found; skipped');
const spawned =
  hot && (await runHotPath(Number(values['hot-runs']), { prestart: false, warmup: Number(values.warmup) }));
if (spawned) printHotPath(spawned, 'hotPathSpawn');
const warm = await runWarmPath(Number(values['hot-runs']));
if (warm) printWarmPath(warm);
if (values['hot-only']) process.exit(0);

// Live workers on the real CLI: cold, resumed and warm turns.
const real = await runRealCli();
if (real) printRealCli(real);
else console.log('real claude CLI: not installed (npm ci); skipped');
const tools = await runToolTurns();
if (tools) printToolTurns(tools);
// Agent conversations (tools on every request): per user turn, on the fake and the real CLIs.
printAgentTurns(await runAgentTurns());
const REPLY = 'ok';

function direct(): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      FAKE_CLAUDE,
      [
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        '--include-partial-messages',
        '--model',
        'sonnet',
        '--tools=',
      ],
      {
        env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), FAKE_CLAUDE_REPLY: REPLY },
        stdio: ['pipe', 'pipe', 'ignore'],
      },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('close', () =>
      out.includes('"type":"result"') ? resolve(performance.now() - started) : reject(new Error('no result')),
    );
    child.stdin.end('say ok');
  });
}

async function viaOlp(url: string, token: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'say ok' }] }),
  });
  const body = (await res.json()) as { choices?: { message: { content: string } }[] };
  if (body.choices?.[0]?.message.content !== REPLY) throw new Error(`unexpected reply ${JSON.stringify(body)}`);
  return performance.now() - started;
}

/** ms until the first text_delta line of a directly spawned fake CLI. */
function directFirstToken(): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      FAKE_CLAUDE,
      [
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        '--include-partial-messages',
        '--model',
        'sonnet',
        '--tools=',
      ],
      {
        env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), FAKE_CLAUDE_REPLY: REPLY },
        stdio: ['pipe', 'pipe', 'ignore'],
      },
    );
    let t: number | undefined;
    let buf = '';
    child.stdout.on('data', (c: Buffer) => {
      buf += c.toString();
      if (t === undefined && buf.includes('"text_delta"')) t = performance.now() - started;
    });
    child.on('error', reject);
    child.on('close', () => (t === undefined ? reject(new Error('no delta')) : resolve(t)));
    child.stdin.end('say something');
  });
}

/** ms until the first content chunk of a streamed reply through olp. */
async function olpFirstToken(url: string, token: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sonnet', stream: true, messages: [{ role: 'user', content: 'say something' }] }),
  });
  const reader = res.body!.getReader();
  let t: number | undefined;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (t === undefined && /"content":"[^"]/.test(new TextDecoder().decode(value))) t = performance.now() - started;
  }
  if (t === undefined) throw new Error('no content');
  return t;
}

/** Median by hdr-histogram (no hand-rolled percentile maths). */
const median = (xs: number[]) => {
  const t = createTimings();
  for (const x of xs) t.record(x);
  return t.p(50);
};

const stateDir = mkdtempSync(join(tmpdir(), 'olp-bench-'));
// Sessions off: both paths then run the same CLI invocation (the pool has its own figure below).
const config = parseConfig({
  readFile: false,
  env: {},
  overrides: {
    stateDir,
    port: 0,
    claudeBin: FAKE_CLAUDE,
    logLevel: 'silent',
    sessions: false,
    claudeEnv: { FAKE_CLAUDE_REPLY: REPLY },
  },
});
const daemon = await startDaemon({
  config,
  logger: createLogger('silent'),
  hostEnv: { PATH: process.env.PATH ?? '', HOME: stateDir },
});
const { token } = daemon.store.keys.add('bench');
try {
  // Warm up both paths (page cache, JIT).
  for (let i = 0; i < 5; i++) {
    await direct();
    await viaOlp(daemon.url, token);
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < runs; i++) {
    a.push(await direct());
    b.push(await viaOlp(daemon.url, token));
  }
  const md = median(a);
  const mo = median(b);
  const figures = {
    runs,
    directMedianMs: +md.toFixed(1),
    olpMedianMs: +mo.toFixed(1),
    addedMs: +(mo - md).toFixed(1),
    ratio: +(mo / md).toFixed(3),
  };
  console.log('one-token non-streaming reply, fake claude, alternating runs');
  console.log(`  direct spawn  median ${figures.directMedianMs} ms`);
  console.log(`  through olp   median ${figures.olpMedianMs} ms`);
  console.log(`  olp adds      ${figures.addedMs} ms (olp/direct = ${figures.ratio})`);
  console.log(JSON.stringify(figures));

  // Time to the first text of a streamed reply: the first text_delta line vs the first content chunk.
  const da: number[] = [];
  const ob: number[] = [];
  for (let i = 0; i < runs; i++) {
    da.push(await directFirstToken());
    ob.push(await olpFirstToken(daemon.url, token));
  }
  const ta = median(da);
  const tb = median(ob);
  console.log(
    `streamed reply, time to first token: direct ${ta.toFixed(1)} ms, through olp ${tb.toFixed(1)} ms (olp adds ${(tb - ta).toFixed(1)} ms, ratio ${(tb / ta).toFixed(3)})`,
  );

  // Throughput at concurrency 16: the same number of requests, 16 at a time, each way.
  const n = Math.max(64, runs);
  const ra = await throughput(n, 16, direct);
  const rb = await throughput(n, 16, () => viaOlp(daemon.url, token));
  console.log(
    `throughput at concurrency 16 (${n} requests): direct ${ra.toFixed(1)} req/s, through olp ${rb.toFixed(1)} req/s (ratio ${(rb / ra).toFixed(3)})`,
  );
  console.log(
    JSON.stringify({
      ttft: { directMs: +ta.toFixed(1), olpMs: +tb.toFixed(1) },
      throughput16: { directRps: +ra.toFixed(1), olpRps: +rb.toFixed(1) },
    }),
  );
} finally {
  await daemon.close();
  rmSync(stateDir, { recursive: true, force: true });
}

/** A typical ledger row of a successful claude turn. */
function benchRow(requestId: string, ts: number, keyId: string, keyName: string) {
  return {
    requestId,
    ts,
    keyId,
    keyName,
    backend: 'claude',
    provider: 'claude-cli',
    model: 'sonnet',
    servedModel: 'sonnet',
    outcome: 'ok',
    errorCode: null,
    status: 200,
    queueMs: 0,
    ttftMs: 900,
    durationMs: 1500,
    promptTokens: 100,
    completionTokens: 50,
    cachedTokens: 20,
    reasoningTokens: 0,
    rawUsage: { input_tokens: 60, cache_creation_input_tokens: 20, cache_read_input_tokens: 20, output_tokens: 50 },
    partial: false,
    costUsd: 0.001,
    sessionId: 'a3c1e2d4-0000-4000-8000-000000000000',
    sessionMode: 'resumed',
    rotationReason: null,
  };
}

/** Median of `n` timings of `fn`, in microseconds. */
async function micro(n: number, fn: () => unknown): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    xs.push((performance.now() - t) * 1000);
  }
  return median(xs);
}

// Admission for a key with every limit set, over a ledger of 20,000 rows (10,000 of them its own).
const admitDir = mkdtempSync(join(tmpdir(), 'olp-bench-admit-'));
const store = openStore(admitDir);
try {
  const { key } = store.keys.add('busy', 'member', {
    rpm: 1_000_000,
    concurrency: 1000,
    dailyTokens: 1e12,
    monthlyTokens: 1e12,
  });
  const other = store.keys.add('other').key;
  const day = Date.now() - 3600_000;
  for (let i = 0; i < 20_000; i++) {
    const mine = i % 2 === 0;
    store.usage.record(benchRow(`r${i}`, day + i, mine ? key.id : other.id, mine ? 'busy' : 'other'));
  }
  const admission = createAdmission({
    maxConcurrent: 4,
    queueSize: 100,
    queueTimeoutMs: 60_000,
    tokensSince: (id, since) => store.usage.tokensSince(id, since),
  });
  const who = { keyId: key.id, name: key.name, policy: key.policy };
  const signal = new AbortController().signal;
  const limited = await micro(5000, async () => (await admission.admit(who, 1000, signal)).release());
  const free = { ...who, policy: { ...who.policy, rpm: null, dailyTokens: null, monthlyTokens: null } };
  const unlimited = await micro(5000, async () => (await admission.admit(free, 1000, signal)).release());
  console.log(
    `admission (admit + release), median: ${limited.toFixed(1)} µs with rpm and day/month budgets over a 20k-row ledger; ${unlimited.toFixed(1)} µs without limits`,
  );

  const workspaces = createWorkspaces(admitDir);
  const creds = join(admitDir, 'olp.db');
  let n = 0;
  const ws = await micro(500, () => {
    const w = workspaces.create({
      keyId: 'k',
      requestId: `r${n++}`,
      links: [{ from: creds, to: '.claude/.credentials.json' }],
    });
    w.writeFile('system-prompt.txt', 'You are a helpful assistant.');
    w.remove();
  });
  console.log(`workspace create + link + files + remove, median: ${(ws / 1000).toFixed(2)} ms`);
  let w = 0;
  const ledger = await micro(5000, () => store.usage.record(benchRow(`w${w++}`, Date.now(), key.id, 'busy')));
  console.log(`ledger row write (one transaction: row + daily total), median: ${ledger.toFixed(1)} µs`);
} finally {
  store.close();
  rmSync(admitDir, { recursive: true, force: true });
}

// Session pool: stdin bytes per turn of a 30-turn conversation, pool on vs off (fake claude).
async function conversationBytes(sessions: boolean): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'olp-bench-sessions-'));
  const records = join(dir, 'records');
  const { mkdirSync, readdirSync, readFileSync } = await import('node:fs');
  mkdirSync(records);
  const cfg = parseConfig({
    readFile: false,
    env: {},
    overrides: {
      stateDir: join(dir, 'state'),
      port: 0,
      claudeBin: FAKE_CLAUDE,
      logLevel: 'silent',
      sessions,
      claudeEnv: { FAKE_CLAUDE_RECORD_DIR: records },
    },
  });
  const d = await startDaemon({
    config: cfg,
    logger: createLogger('silent'),
    hostEnv: { PATH: process.env.PATH ?? '', HOME: dir },
  });
  const tok = d.store.keys.add('bench').token;
  const bytes: number[] = [];
  try {
    const messages: { role: string; content: string }[] = [{ role: 'system', content: 'You are a helpful assistant.' }];
    for (let i = 1; i <= 30; i++) {
      messages.push({
        role: 'user',
        content: `Turn ${i}: here is a question of ordinary length about something that matters to me.`,
      });
      const seen = new Set(readdirSync(records));
      const res = await fetch(`${d.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tok}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sonnet', messages }),
      });
      const body = (await res.json()) as { choices: { message: { content: string } }[] };
      messages.push({ role: 'assistant', content: body.choices[0]!.message.content });
      const fresh = readdirSync(records).filter((f) => !seen.has(f));
      bytes.push(
        fresh.reduce(
          (n, f) =>
            n + ((JSON.parse(readFileSync(join(records, f), 'utf8')) as { stdinBytes?: number }).stdinBytes ?? 0),
          0,
        ),
      );
    }
  } finally {
    await d.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return bytes;
}

const on = await conversationBytes(true);
const offBytes = await conversationBytes(false);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
console.log('session pool, 30-turn conversation, stdin bytes sent to the CLI:');
console.log(`  turn:      ${[1, 2, 10, 20, 30].map((n) => String(n).padStart(7)).join('')}`);
console.log(`  pool on:   ${[1, 2, 10, 20, 30].map((n) => String(on[n - 1]).padStart(7)).join('')}   total ${sum(on)}`);
console.log(
  `  pool off:  ${[1, 2, 10, 20, 30].map((n) => String(offBytes[n - 1]).padStart(7)).join('')}   total ${sum(offBytes)}`,
);
console.log(
  JSON.stringify({
    sessionsOn: { perTurn: on, total: sum(on) },
    sessionsOff: { perTurn: offBytes, total: sum(offBytes) },
  }),
);
