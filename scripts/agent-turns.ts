// An agent client's conversation through olp over HTTP (streamed chat completions, `tools` on every
// request): N user turns, each a parallel tool round trip (the model calls two functions, the client
// answers both, the model answers in text). Per user turn: time to the first token and in all of
// both requests, the CPU of olp and every process under it (olp's own, its reaped children's, its
// live CLIs'), the CLI processes started, and each request's run mode from the usage ledger. Then
// peak memory with `--keys` keys each in such a conversation at once (the summed RSS of olp's whole
// process tree, sampled). On the fake claude (olp's own cost), the real pinned claude and codex
// (loopback stand-in APIs, provider latency 0: the CLIs' start-up cost).
// It reads olp only from outside (HTTP, `olp usage export`, /proc and a wrapper bin that logs each
// CLI start), so it runs unchanged on any build: `--bin` measures another build, `--base` a second
// build alongside this one, alternating runs.
// Usage: node dist/scripts/agent-turns.js [--turns 4] [--runs 3] [--keys 8]
//   [--variants fake,claude,codex] [--bin OTHER/dist/src/cli/main.js] [--base OTHER/dist/src/cli/main.js]
//   [--serve="FLAGS"] [--no-memory]
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { claudeStandInEnv, startAnthropicStandIn, type StandIn } from '../test/support/anthropic-stand-in.js';
import { FAKE_CLAUDE, OLP_BIN, REAL_CLAUDE, REAL_CODEX } from '../test/support/paths.js';
import {
  CODEX_STAND_IN_ENV,
  codexStandInConfig,
  startResponsesStandIn,
  type ResponsesStandIn,
} from '../test/support/responses-stand-in.js';
import { addKey, serve } from './daemon.js';

export type Variant = 'fake' | 'claude' | 'codex';

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];
const CITIES = ['Paris', 'Tokyo'];
/** The fake claude calls tools when the user text holds this directive. */
const FAKE_DIRECTIVE = `[[fake-tools:${JSON.stringify(CITIES.map((city) => ({ name: 'get_weather', arguments: { city } })))}]]`;

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const PAGE_KB = (Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim()) || 4096) / 1024;

// --- olp's process tree, from /proc ----------------------------------------------------------

interface Proc {
  ppid: number;
  /** user + system CPU of the process and of the children it has reaped, in ms. */
  cpuMs: number;
  rssKb: number;
}

function readProcs(): Map<number, Proc> {
  const procs = new Map<number, Proc>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(name), {
        ppid: Number(f[1]),
        cpuMs: ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / CLK_TCK,
        rssKb: Number(f[21]) * PAGE_KB,
      });
    } catch {
      // gone meanwhile
    }
  }
  return procs;
}

interface TreeSample {
  /** CPU of the root and everything under it, reaped or live, in ms. */
  cpuMs: number;
  /** Summed RSS of the root and of the processes under it, in MB. */
  rssMb: number;
  cliRssMb: number;
  clis: number;
}

/** One look at the tree under `root` (a process reaped between two looks counts in its parent's). */
function sampleTree(root: number): TreeSample {
  const procs = readProcs();
  const children = new Map<number, number[]>();
  for (const [pid, p] of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const sample: TreeSample = { cpuMs: 0, rssMb: 0, cliRssMb: 0, clis: 0 };
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const p = procs.get(pid);
    if (!p) continue;
    sample.cpuMs += p.cpuMs;
    sample.rssMb += p.rssKb / 1024;
    if (pid !== root) {
      sample.cliRssMb += p.rssKb / 1024;
      if (p.ppid === root) sample.clis++;
    }
    queue.push(...(children.get(pid) ?? []));
  }
  return sample;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// --- one olp, its CLI behind a wrapper that logs each start ----------------------------------

interface Olp {
  url: string;
  pid: number;
  tokens: string[];
  /** CLI processes started so far (version and login checks left out). */
  spawns(): number;
  /** Each request id's run mode, from the usage ledger. */
  runModes(): Map<string, string | null>;
  stop(): Promise<void>;
}

/** A shell script that appends its pid and first arguments to `log`, then becomes `target`. */
function wrapper(dir: string, name: string, target: string, log: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\necho "$$ $1 $2" >> '${log}'\nexec '${target}' "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

interface Apis {
  claude?: StandIn;
  codex?: ResponsesStandIn;
}

async function startOlp(bin: string, variant: Variant, apis: Apis, keys: number, serveArgs: string[]): Promise<Olp> {
  const dir = mkdtempSync(join(tmpdir(), 'olp-agent-'));
  const stateDir = join(dir, 'state');
  const log = join(dir, 'spawns.log');
  writeFileSync(log, '');
  const target = variant === 'fake' ? FAKE_CLAUDE : variant === 'claude' ? REAL_CLAUDE : REAL_CODEX;
  const cli = wrapper(dir, variant === 'codex' ? 'codex' : 'claude', target, log);
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: dir };
  if (apis.claude) env.OLP_CLAUDE_ENV = JSON.stringify(claudeStandInEnv(apis.claude.url));
  if (apis.codex) {
    env.OLP_CODEX_ENV = JSON.stringify(CODEX_STAND_IN_ENV);
    env.OLP_CODEX_CONFIG = JSON.stringify(codexStandInConfig(apis.codex.url));
  }
  const tokens = Array.from({ length: keys }, (_, i) => addKey(stateDir, `agent${i}`, env, bin));
  const { daemon, base } = serve({
    stateDir,
    env,
    bin,
    args: [variant === 'codex' ? '--codex-bin' : '--claude-bin', cli, ...serveArgs],
  });
  daemon.stderr!.resume();
  const url = await base;
  return {
    url,
    pid: daemon.pid!,
    tokens,
    spawns: () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l && !/ (--version|auth status|login status)\b/.test(l)).length,
    runModes() {
      const out = execFileSync(
        process.execPath,
        [bin, 'usage', 'export', '--format', 'jsonl', '--state-dir', stateDir],
        {
          env,
          encoding: 'utf8',
          maxBuffer: 64 << 20,
        },
      );
      const modes = new Map<string, string | null>();
      for (const line of out.split('\n').filter(Boolean)) {
        const row = JSON.parse(line) as { request_id: string; run_mode?: string | null };
        modes.set(row.request_id, row.run_mode ?? null);
      }
      return modes;
    },
    async stop() {
      const exited = new Promise((r) => daemon.once('exit', r));
      daemon.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// --- the client ------------------------------------------------------------------------------

interface Call {
  id: string;
  name: string;
  arguments: string;
}

interface Streamed {
  calls: Call[];
  text: string;
  firstMs: number;
  totalMs: number;
  requestId: string;
}

/** One streamed chat completion: its tool calls, text, first token (call or text) and end, in ms. */
async function stream(url: string, token: string, model: string, messages: unknown[]): Promise<Streamed> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages, tools: TOOLS, stream: true }),
  });
  if (!res.ok || !res.body) throw new Error(`olp answered ${res.status}: ${await res.text()}`);
  const out: Streamed = {
    calls: [],
    text: '',
    firstMs: -1,
    totalMs: 0,
    requestId: res.headers.get('x-request-id') ?? '',
  };
  let buf = '';
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    buf += Buffer.from(chunk).toString('utf8');
    let nl;
    while ((nl = buf.indexOf('\n\n')) !== -1) {
      const data = buf.slice(0, nl).replace(/^data: /, '');
      buf = buf.slice(nl + 2);
      if (!data.startsWith('{')) continue;
      const parsed = JSON.parse(data) as {
        error?: unknown;
        choices?: {
          delta: {
            content?: string | null;
            tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[];
          };
        }[];
      };
      if (parsed.error) throw new Error(`olp streamed an error: ${JSON.stringify(parsed.error)}`);
      const delta = parsed.choices?.[0]?.delta;
      if (!delta) continue;
      if ((delta.content || delta.tool_calls) && out.firstMs < 0) out.firstMs = performance.now() - started;
      out.text += delta.content ?? '';
      for (const d of delta.tool_calls ?? []) {
        if (d.id) out.calls[d.index] = { id: d.id, name: d.function?.name ?? '', arguments: '' };
        out.calls[d.index]!.arguments += d.function?.arguments ?? '';
      }
    }
  }
  out.totalMs = performance.now() - started;
  return out;
}

/** One user turn: the calls, then the results; both requests' timings and ids. */
async function userTurn(
  url: string,
  token: string,
  variant: Variant,
  messages: unknown[],
  turn: number,
): Promise<{ calls: Streamed; answer: Streamed }> {
  const ask = `What is the weather in ${CITIES.join(' and ')} now? (turn ${turn})`;
  messages.push({ role: 'user', content: variant === 'fake' ? `${ask} ${FAKE_DIRECTIVE}` : ask });
  const model = variant === 'codex' ? 'codex' : 'sonnet';
  const calls = await stream(url, token, model, messages);
  if (calls.calls.length !== CITIES.length)
    throw new Error(`${variant} turn ${turn}: expected ${CITIES.length} tool calls, got ${JSON.stringify(calls)}`);
  messages.push({
    role: 'assistant',
    content: null,
    tool_calls: calls.calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    })),
  });
  for (const c of calls.calls)
    messages.push({ role: 'tool', tool_call_id: c.id, content: `turn ${turn}: sunny, 21 C for ${c.arguments}` });
  const answer = await stream(url, token, model, messages);
  if (!answer.text || answer.calls.length > 0)
    throw new Error(`${variant} turn ${turn}: expected a text answer, got ${JSON.stringify(answer)}`);
  messages.push({ role: 'assistant', content: answer.text });
  return { calls, answer };
}

/**
 * Waits until olp's tree has been quiet (under 25 ms of CPU in 250 ms: idle live CLIs take about 1 %
 * of a core each, a CLI starting up a whole one) with no new CLI start, at most 8 s.
 */
async function settle(olp: Olp): Promise<void> {
  let last = sampleTree(olp.pid).cpuMs;
  let spawns = olp.spawns();
  for (let i = 0; i < 32; i++) {
    await sleep(250);
    const now = sampleTree(olp.pid).cpuMs;
    const s = olp.spawns();
    if (now - last < 25 && s === spawns) return;
    last = now;
    spawns = s;
  }
}

// --- figures ---------------------------------------------------------------------------------

export interface TurnFigures {
  /** Request with the user message → first tool-call delta, and its end (ms). */
  callsFirstMs: number;
  callsMs: number;
  /** Request with the results → first text, and its end (ms). */
  answerFirstMs: number;
  answerMs: number;
  /** CPU of olp and everything under it from the turn's first request until the tree is quiet again (ms). */
  cpuMs: number;
  /** The same, up to the end of the turn's second request. */
  cpuOnPathMs: number;
  spawns: number;
  /** Run modes of the two requests (usage ledger), `calls+answer`. */
  modes: string;
}

export interface MemoryFigures {
  keys: number;
  /** Peak of the summed RSS of olp and its CLIs while the conversations ran, and of the CLIs alone (MB). */
  peakTreeMb: number;
  peakCliMb: number;
  /** Most CLI processes at once. */
  peakClis: number;
  /** What olp's tree holds once every conversation is done and it is quiet (MB, CLIs). */
  heldTreeMb: number;
  heldClis: number;
  wallMs: number;
  spawns: number;
}

export interface AgentRun {
  bin: string;
  turns: TurnFigures[];
  memory?: MemoryFigures;
  load1: number;
}

export interface AgentVariant {
  variant: Variant;
  runs: AgentRun[];
}

/** One conversation of `turns` user turns on one key, measured turn by turn. */
async function conversation(
  olp: Olp,
  token: string,
  variant: Variant,
  turns: number,
  tag: string,
): Promise<TurnFigures[]> {
  const messages: unknown[] = [{ role: 'system', content: `You are a weather agent (${tag}).` }];
  const figures: TurnFigures[] = [];
  const ids: [string, string][] = [];
  for (let turn = 1; turn <= turns; turn++) {
    const s0 = olp.spawns();
    const c0 = sampleTree(olp.pid).cpuMs;
    const { calls, answer } = await userTurn(olp.url, token, variant, messages, turn);
    const c1 = sampleTree(olp.pid).cpuMs;
    await settle(olp);
    const c2 = sampleTree(olp.pid).cpuMs;
    ids.push([calls.requestId, answer.requestId]);
    figures.push({
      callsFirstMs: calls.firstMs,
      callsMs: calls.totalMs,
      answerFirstMs: answer.firstMs,
      answerMs: answer.totalMs,
      cpuMs: c2 - c0,
      cpuOnPathMs: c1 - c0,
      spawns: olp.spawns() - s0,
      modes: '',
    });
  }
  // The ledger's rows are written off the response path: give the last ones a moment.
  let modes = olp.runModes();
  for (let i = 0; i < 20 && ids.some(([a, b]) => !modes.has(a) || !modes.has(b)); i++) {
    await sleep(100);
    modes = olp.runModes();
  }
  ids.forEach(([a, b], i) => {
    figures[i]!.modes = `${modes.get(a) ?? '?'}+${modes.get(b) ?? '?'}`;
  });
  return figures;
}

/** `keys` conversations at once, one per key, with olp's tree sampled every 100 ms. */
async function memory(olp: Olp, variant: Variant, turns: number): Promise<MemoryFigures> {
  const peak = { tree: 0, cli: 0, clis: 0 };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const s = sampleTree(olp.pid);
      peak.tree = Math.max(peak.tree, s.rssMb);
      peak.cli = Math.max(peak.cli, s.cliRssMb);
      peak.clis = Math.max(peak.clis, s.clis);
      await sleep(100);
    }
  })();
  const s0 = olp.spawns();
  const started = performance.now();
  try {
    await Promise.all(
      olp.tokens.map(async (token, k) => {
        const messages: unknown[] = [{ role: 'system', content: `You are a weather agent (key ${k}).` }];
        for (let turn = 1; turn <= turns; turn++) await userTurn(olp.url, token, variant, messages, turn);
      }),
    );
  } finally {
    sampling = false;
    await sampler;
  }
  const wallMs = performance.now() - started;
  await settle(olp);
  const held = sampleTree(olp.pid);
  return {
    keys: olp.tokens.length,
    peakTreeMb: peak.tree,
    peakCliMb: peak.cli,
    peakClis: peak.clis,
    heldTreeMb: held.rssMb,
    heldClis: held.clis,
    wallMs,
    spawns: olp.spawns() - s0,
  };
}

export interface AgentOptions {
  turns?: number;
  runs?: number;
  keys?: number;
  variants?: Variant[];
  /** olp builds to measure (main.js paths); with two, runs alternate between them. */
  bins?: string[];
  serveArgs?: string[];
  memory?: boolean;
}

/** Every variant whose CLI is installed, `runs` times on each build (a fresh olp each, after one unmeasured conversation). */
export async function runAgentTurns(opts: AgentOptions = {}): Promise<AgentVariant[]> {
  const turns = opts.turns ?? 4;
  const runs = opts.runs ?? 3;
  const keys = opts.keys ?? 8;
  const bins = opts.bins ?? [OLP_BIN];
  const wanted = opts.variants ?? ['fake', 'claude', 'codex'];
  const installed = (v: Variant) => existsSync(v === 'fake' ? FAKE_CLAUDE : v === 'claude' ? REAL_CLAUDE : REAL_CODEX);
  const out: AgentVariant[] = [];
  const apis: Apis = {};
  try {
    for (const variant of wanted) {
      if (!installed(variant)) {
        console.log(`agent turns, ${variant}: CLI not installed (npm ci); skipped`);
        continue;
      }
      if (variant === 'claude') {
        apis.claude ??= await startAnthropicStandIn();
        apis.claude.toolCalls = CITIES.map((city) => ({ name: 'get_weather', input: { city } }));
      }
      if (variant === 'codex') {
        apis.codex ??= await startResponsesStandIn();
        apis.codex.toolCalls = CITIES.map((city) => ({ name: 'get_weather', arguments: { city } }));
      }
      const row: AgentVariant = { variant, runs: [] };
      for (let r = 0; r < runs; r++) {
        // With two builds, the order swaps every run so neither always goes first.
        for (const bin of r % 2 === 0 ? bins : [...bins].reverse()) {
          const olp = await startOlp(bin, variant, apis, keys, opts.serveArgs ?? []);
          try {
            // One unmeasured conversation first: a running daemon's state (compiled code, the key's spare).
            await conversation(olp, olp.tokens[0]!, variant, turns, `warm-up ${r}`);
            const run: AgentRun = {
              bin,
              turns: await conversation(olp, olp.tokens[0]!, variant, turns, `run ${r}`),
              load1: loadavg()[0]!,
            };
            if (opts.memory !== false) run.memory = await memory(olp, variant, turns);
            row.runs.push(run);
          } finally {
            await olp.stop();
          }
        }
      }
      out.push(row);
    }
  } finally {
    await apis.claude?.close();
    await apis.codex?.close();
  }
  return out;
}

// --- printing --------------------------------------------------------------------------------

/** The middle figure (the mean of the two middle ones for an even count). */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** `median (min-max)` of some figures, with `d` decimals (the median alone when they all agree). */
function spread(xs: number[], d = 0): string {
  const [mid, lo, hi] = [median(xs), Math.min(...xs), Math.max(...xs)].map((x) => x.toFixed(d));
  return lo === hi ? mid! : `${mid} (${lo}-${hi})`;
}

const LABEL: Record<Variant, string> = {
  fake: 'fake claude (test/fixtures/bin/claude)',
  claude: 'real claude (pinned), Anthropic stand-in',
  codex: 'real codex (pinned), Responses stand-in',
};

/** The figures of one build's runs of a variant. */
function printRuns(variant: Variant, runs: AgentRun[], turns: number): void {
  console.log(`  ${LABEL[variant]}: ${runs[0]!.bin}`);
  console.log(
    '    user turn  calls: first / all ms      answer: first / all ms    CPU ms (olp+CLIs)     on path     spawns  run modes',
  );
  const row = (label: string, pick: (r: AgentRun) => TurnFigures[]) => {
    const of = (f: (t: TurnFigures) => number) => runs.map((r) => pick(r).reduce((n, t) => n + f(t), 0));
    const modes = [
      ...new Set(
        runs.map((r) =>
          pick(r)
            .map((t) => t.modes)
            .join(' '),
        ),
      ),
    ].join(' | ');
    console.log(
      `    ${label.padEnd(9)}  ${spread(of((t) => t.callsFirstMs)).padEnd(12)} / ${spread(of((t) => t.callsMs)).padEnd(12)} ${spread(of((t) => t.answerFirstMs)).padEnd(11)} / ${spread(of((t) => t.answerMs)).padEnd(11)} ${spread(of((t) => t.cpuMs)).padEnd(20)} ${spread(of((t) => t.cpuOnPathMs)).padEnd(17)} ${String(median(of((t) => t.spawns))).padEnd(6)}  ${modes}`,
    );
  };
  for (let t = 0; t < turns; t++) row(String(t + 1), (r) => [r.turns[t]!]);
  row('all', (r) => r.turns);
  const mem = runs.map((r) => r.memory).filter((m): m is MemoryFigures => m !== undefined);
  if (mem.length)
    console.log(
      `    ${mem[0]!.keys} keys at once: peak RSS of olp's tree ${spread(mem.map((m) => m.peakTreeMb))} MB, of its CLIs ${spread(mem.map((m) => m.peakCliMb))} MB, at most ${spread(mem.map((m) => m.peakClis))} CLIs; held after ${spread(mem.map((m) => m.heldTreeMb))} MB with ${spread(mem.map((m) => m.heldClis))} CLIs; ${spread(mem.map((m) => m.wallMs))} ms in all, ${spread(mem.map((m) => m.spawns))} spawns`,
    );
}

export function printAgentTurns(variants: AgentVariant[]): void {
  const runs = variants[0]?.runs ?? [];
  const turns = runs[0]?.turns.length ?? 0;
  const bins = [...new Set(runs.map((r) => r.bin))];
  console.log(
    `agent conversations through olp (streamed, tools on every request): ${turns} user turns, each 2 parallel calls + results; medians (min-max) of ${runs.length / Math.max(1, bins.length)} runs; load average ${loadavg()[0]!.toFixed(2)}`,
  );
  for (const v of variants)
    for (const bin of bins)
      printRuns(
        v.variant,
        v.runs.filter((r) => r.bin === bin),
        turns,
      );
  console.log(JSON.stringify({ agentTurns: variants }));
}

// Run alone: node dist/scripts/agent-turns.js [options].
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      turns: { type: 'string', default: '4' },
      runs: { type: 'string', default: '3' },
      keys: { type: 'string', default: '8' },
      variants: { type: 'string', default: 'fake,claude,codex' },
      bin: { type: 'string', default: OLP_BIN },
      base: { type: 'string' },
      serve: { type: 'string', default: '' },
      'no-memory': { type: 'boolean', default: false },
    },
  });
  const figures = await runAgentTurns({
    turns: Number(values.turns),
    runs: Number(values.runs),
    keys: Number(values.keys),
    variants: values.variants.split(',').filter(Boolean) as Variant[],
    bins: values.base ? [values.base, values.bin] : [values.bin],
    serveArgs: values.serve.split(' ').filter(Boolean),
    memory: !values['no-memory'],
  });
  printAgentTurns(figures);
}
