// Tool round trips on the real CLIs (pinned) through olp, against the loopback stand-in APIs
// (provider latency 0): a request whose model calls two of the client's functions, then the
// client's results. Measured from sending the results to the continuation's first token, when
// the parked CLI answers them (the same key) and when a fresh turn must (another key: the tool
// history is rendered into a new CLI's prompt), with the CLI processes each round trip started.
import { existsSync } from 'node:fs';
import { startAnthropicStandIn } from '../test/support/anthropic-stand-in.js';
import { REAL_CLAUDE, REAL_CODEX } from '../test/support/paths.js';
import { startResponsesStandIn } from '../test/support/responses-stand-in.js';
import { median, startOlp, type Olp } from './real-cli.js';

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

interface Call {
  id: string;
  name: string;
  arguments: string;
}

/** Streams one request; the tool calls it returned, its text and when its first token came (ms from sending). */
async function stream(
  olp: Olp,
  token: string,
  model: string,
  messages: unknown[],
): Promise<{ calls: Call[]; text: string; firstMs: number }> {
  const started = performance.now();
  const res = await fetch(`${olp.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages, tools: TOOLS, stream: true }),
  });
  if (!res.ok || !res.body) throw new Error(`olp answered ${res.status}: ${await res.text()}`);
  const calls: Call[] = [];
  let text = '';
  let firstMs = -1;
  let buf = '';
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    buf += Buffer.from(chunk).toString('utf8');
    let nl;
    while ((nl = buf.indexOf('\n\n')) !== -1) {
      const event = buf.slice(0, nl);
      buf = buf.slice(nl + 2);
      const data = event.replace(/^data: /, '');
      if (data === '[DONE]' || !data.startsWith('{')) continue;
      const delta = (
        JSON.parse(data) as {
          choices?: {
            delta: {
              content?: string;
              tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[];
            };
          }[];
        }
      ).choices?.[0]?.delta;
      if (!delta) continue;
      if ((delta.content || delta.tool_calls) && firstMs < 0) firstMs = performance.now() - started;
      text += delta.content ?? '';
      for (const d of delta.tool_calls ?? []) {
        if (d.id) calls[d.index] = { id: d.id, name: d.function?.name ?? '', arguments: '' };
        calls[d.index]!.arguments += d.function?.arguments ?? '';
      }
    }
  }
  return { calls, text, firstMs };
}

export interface ToolTurnRow {
  cli: 'claude' | 'codex';
  /** Results sent → first continuation token, the parked CLI answering. */
  parkedMs: number[];
  /** The same, a fresh turn answering (no parked CLI for that key). */
  freshMs: number[];
  /** CLI processes started per round trip (calls + continuation), parked and fresh. */
  parkedSpawns: number[];
  freshSpawns: number[];
}

export async function runToolTurns(rounds = 5): Promise<ToolTurnRow[] | undefined> {
  if (!existsSync(REAL_CLAUDE)) return undefined;
  const claude = await startAnthropicStandIn();
  const codex = await startResponsesStandIn();
  claude.toolCalls = [
    { name: 'get_weather', input: { city: 'Paris' } },
    { name: 'get_weather', input: { city: 'Tokyo' } },
  ];
  codex.toolCalls = [
    { name: 'get_weather', arguments: { city: 'Paris' } },
    { name: 'get_weather', arguments: { city: 'Tokyo' } },
  ];
  const rows: ToolTurnRow[] = [];
  const olp = await startOlp({ claude, codex }, false);
  try {
    for (const [cli, model] of [
      ['claude', 'sonnet'],
      ['codex', 'codex'],
    ] as const) {
      if (cli === 'codex' && !existsSync(REAL_CODEX)) continue;
      const row: ToolTurnRow = { cli, parkedMs: [], freshMs: [], parkedSpawns: [], freshSpawns: [] };
      for (let i = 0; i < rounds; i++) {
        const messages: unknown[] = [{ role: 'user', content: `weather in Paris and Tokyo? (round ${i})` }];
        const s0 = olp.spawns();
        const first = await stream(olp, olp.token, model, messages);
        if (first.calls.length !== 2) throw new Error(`${cli}: expected 2 tool calls, got ${JSON.stringify(first)}`);
        const s1 = olp.spawns();
        messages.push({
          role: 'assistant',
          content: null,
          tool_calls: first.calls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: c.arguments },
          })),
        });
        for (const c of first.calls)
          messages.push({ role: 'tool', tool_call_id: c.id, content: `weather for ${c.arguments}` });
        // Another key: its request cannot reach this key's parked CLI, so a fresh turn answers.
        const fresh = await stream(olp, olp.other, model, messages);
        const s2 = olp.spawns();
        const parked = await stream(olp, olp.token, model, messages);
        const s3 = olp.spawns();
        if (!parked.text || !fresh.text) throw new Error(`${cli}: no continuation text`);
        row.freshMs.push(fresh.firstMs);
        row.parkedMs.push(parked.firstMs);
        row.freshSpawns.push(s1 - s0 + (s2 - s1));
        row.parkedSpawns.push(s1 - s0 + (s3 - s2));
      }
      rows.push(row);
    }
  } finally {
    await olp.stop();
    await claude.close();
    await codex.close();
  }
  return rows;
}

export function printToolTurns(rows: ToolTurnRow[]): void {
  console.log(
    'tool round trips on the real CLIs through olp (stand-in APIs, latency 0): results sent → first continuation token, medians (min-max)',
  );
  const fmt = (xs: number[]) =>
    `${median(xs).toFixed(0).padStart(5)} ms (${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})`.padEnd(22);
  for (const r of rows) {
    console.log(
      `  ${r.cli.padEnd(6)}  parked CLI answers: ${fmt(r.parkedMs)} ${median(r.parkedSpawns)} spawn(s) per round trip`,
    );
    console.log(
      `  ${''.padEnd(6)}  fresh turn answers: ${fmt(r.freshMs)} ${median(r.freshSpawns)} spawn(s) per round trip`,
    );
  }
  console.log(JSON.stringify({ toolTurns: rows }));
}
