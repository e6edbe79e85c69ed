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
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startAnthropicStandIn } from '../test/support/anthropic-stand-in.js';
import { FAKE_CLAUDE, OLP_BIN, REAL_CLAUDE, REAL_CODEX } from '../test/support/paths.js';
import { startResponsesStandIn } from '../test/support/responses-stand-in.js';
import { CITIES, userTurn, type Variant } from './agent-client.js';
import { type Apis, type Olp, settle, sleep, startOlp } from './olp-outside.js';
import { sampleTree } from './proc-tree.js';

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
  /** olp's daemon alone (without its CLIs), until the tree is quiet again (ms). */
  olpCpuMs: number;
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
    const t0 = sampleTree(olp.pid);
    const { calls, answer } = await userTurn(olp.url, token, variant, messages, turn);
    const c1 = sampleTree(olp.pid).cpuMs;
    await settle(olp);
    const t2 = sampleTree(olp.pid);
    ids.push([calls.requestId, answer.requestId]);
    figures.push({
      callsFirstMs: calls.firstMs,
      callsMs: calls.totalMs,
      answerFirstMs: answer.firstMs,
      answerMs: answer.totalMs,
      cpuMs: t2.cpuMs - t0.cpuMs,
      cpuOnPathMs: c1 - t0.cpuMs,
      olpCpuMs: t2.rootMs - t0.rootMs,
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
export type { Variant } from './agent-client.js';

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
    '    user turn  calls: first / all ms       answer: first / all ms    CPU ms: olp + CLIs    olp alone      spawns  run modes',
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
    const cells = [
      `${spread(of((t) => t.callsFirstMs)).padEnd(12)} / ${spread(of((t) => t.callsMs)).padEnd(13)}`,
      `${spread(of((t) => t.answerFirstMs)).padEnd(11)} / ${spread(of((t) => t.answerMs)).padEnd(11)}`,
      spread(of((t) => t.cpuMs)).padEnd(21),
      spread(of((t) => t.olpCpuMs)).padEnd(14),
      String(median(of((t) => t.spawns))).padEnd(6),
      modes,
    ];
    console.log(`    ${label.padEnd(9)}  ${cells.join(' ')}`);
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
  const round = (_: string, v: unknown) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v);
  console.log(JSON.stringify({ agentTurns: variants }, round));
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
