// What olp's live CLIs hold at rest, on the real claude against a loopback stand-in for the
// Anthropic API, with olp's defaults: (a) one key after 12 mixed requests (chat, tools, Responses;
// several new conversations): the CLIs it keeps; (b) four and (c) eight people's 6-turn
// conversations: the PSS and RSS of olp's CLIs 30 s after, then each person's next turn (warm,
// resumed with only the new turn, or cold); (growth) one idle worker's RSS and PSS after 1, 5 and
// 20 turns, with and without the client's tools. Also the budget's default on 8, 16 and 24 GB.
// Prints figures; it is not a test.
// Usage: npm run worker-memory-bench -- [--claude baseline|current] [--only a,b,c,growth] [--rest-s 30]
//   [--worker-memory MB] [--claude-env JSON]
import { readdirSync, readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { claudeStandInEnv, startAnthropicStandIn } from '../test/support/anthropic-stand-in.js';
import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { CLAUDE_BASELINE, CLAUDE_CURRENT } from '../test/support/paths.js';

const { values } = parseArgs({
  options: {
    claude: { type: 'string', default: 'baseline' },
    only: { type: 'string', default: 'a,b,c,growth' },
    'rest-s': { type: 'string', default: '30' },
    /** A budget in MB instead of the default. */
    'worker-memory': { type: 'string' },
    /** Extra variables for the CLIs, as JSON (what `--claude-env` would give them). */
    'claude-env': { type: 'string' },
  },
});
const CLAUDE = values.claude === 'current' ? CLAUDE_CURRENT : CLAUDE_BASELINE;
const ONLY = new Set(values.only.split(','));
const REST_MS = Number(values['rest-s']) * 1000;
// Unset: olp's own default from the machine's memory (not the test daemon's larger one).
const BUDGET = { workerMemory: values['worker-memory'] ? Number(values['worker-memory']) : undefined };
const MB = 1024 * 1024;
const GB = 1024 * MB;
const TOOLS: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** A process and its descendants. */
function tree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++)
    for (const task of (() => {
      try {
        return readdirSync(`/proc/${out[i]}/task`);
      } catch {
        return [];
      }
    })())
      for (const c of (read(`/proc/${out[i]}/task/${task}/children`) ?? '').split(' ')) if (c.trim()) out.push(+c);
  return out;
}

/** PSS and RSS of a process with its descendants, in MB (0 when gone). */
function memory(pid: number): { pss: number; rss: number } {
  let pss = 0;
  let rss = 0;
  for (const p of tree(pid)) {
    const roll = read(`/proc/${p}/smaps_rollup`) ?? '';
    pss += Number(/^Pss:\s+(\d+)/m.exec(roll)?.[1] ?? 0) / 1024;
    rss += Number(/^Rss:\s+(\d+)/m.exec(roll)?.[1] ?? 0) / 1024;
  }
  return { pss: Math.round(pss), rss: Math.round(rss) };
}

const alive = (pid: number) => read(`/proc/${pid}/stat`) !== null && !/\) Z /.test(read(`/proc/${pid}/stat`) ?? '');

/** Every CLI olp started that is still alive, from its debug log. */
function liveClis(t: TestDaemon): number[] {
  const pids = t.logs
    .filter((l) => ['spawned', 'spare_started', 'worker_starting'].includes(String(l.event)))
    .map((l) => Number(l.pid));
  return [...new Set(pids)].filter(alive);
}

function held(t: TestDaemon): { clis: number; pss: number; rss: number } {
  const pids = liveClis(t);
  const m = pids.map(memory);
  return { clis: pids.length, pss: m.reduce((n, x) => n + x.pss, 0), rss: m.reduce((n, x) => n + x.rss, 0) };
}

async function withOlp<T>(config: Record<string, unknown>, run: (t: TestDaemon) => Promise<T>): Promise<T> {
  const api = await startAnthropicStandIn();
  const t = await startTestDaemon({
    config: { claudeBin: CLAUDE, timeout: 60, workers: true, ...BUDGET, ...config },
    claudeEnv: { ...claudeStandInEnv(api.url), ...(values['claude-env'] ? JSON.parse(values['claude-env']) : {}) },
  });
  try {
    return await run(t);
  } finally {
    await t.close();
    await api.close();
  }
}

function chat(t: TestDaemon, token: string, tools?: OpenAI.ChatCompletionTool[]) {
  const client = new OpenAI({ baseURL: t.baseURL, apiKey: token, maxRetries: 0 });
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: 'Be brief.' }];
  return async (text: string): Promise<void> => {
    messages.push({ role: 'user', content: text });
    const r = await client.chat.completions.create({ model: 'sonnet', messages, ...(tools ? { tools } : {}) });
    messages.push({ role: 'assistant', content: r.choices[0]!.message.content ?? '' });
  };
}

/** (a) One key, 12 mixed requests: new chats, continued ones, chats with tools, Responses. */
async function oneKey(): Promise<void> {
  await withOlp({}, async (t) => {
    const responses = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 }).responses;
    const a = chat(t, t.token);
    const b = chat(t, t.token);
    const tools = chat(t, t.token, TOOLS);
    await a('hello');
    await a('and then?');
    await b('a new conversation');
    await chat(t, t.token)('another new one');
    await tools('what is the weather?');
    await tools('and tomorrow?');
    await chat(t, t.token, TOOLS)('a new one with tools');
    const r1 = await responses.create({ model: 'sonnet', input: 'a Responses request' });
    await responses.create({ model: 'sonnet', input: 'continued', previous_response_id: r1.id });
    await responses.create({ model: 'sonnet', input: 'a new Responses conversation' });
    await b('b goes on');
    await a('a goes on');
    await sleep(REST_MS);
    const h = held(t);
    console.log(
      `(a) one key, 12 mixed requests: ${h.clis} CLIs at rest ${REST_MS / 1000} s after (target ≤ 4), PSS ${h.pss} MB, RSS ${h.rss} MB`,
    );
  });
}

/** (b), (c) People's 6-turn conversations, then each one's next turn. */
async function people(n: number, target: number): Promise<void> {
  await withOlp({}, async (t) => {
    const says = Array.from({ length: n }, (_, i) => chat(t, t.daemon.store.keys.add(`person${i}`, 'member').token));
    for (let turn = 1; turn <= 6; turn++) await Promise.all(says.map((say, i) => say(`person ${i}, turn ${turn}`)));
    await sleep(REST_MS);
    const h = held(t);
    const before = t.logs.filter((l) => l.event === 'request').length;
    for (const [i, say] of says.entries()) await say(`person ${i}, turn 7`);
    const modes = t.logs
      .filter((l) => l.event === 'request')
      .slice(before)
      .map((l) => String(l.run ?? '-'));
    const count = (m: string) => modes.filter((x) => x === m).length;
    console.log(
      `(${n === 4 ? 'b' : 'c'}) ${n} people, 6 turns each, ${REST_MS / 1000} s after: ${h.clis} CLIs, PSS ${h.pss} MB ` +
        `(target ≤ ${target}), RSS ${h.rss} MB; next turn: ${count('warm')} warm, ${count('resumed')} resumed, ` +
        `${modes.length - count('warm') - count('resumed')} other (${modes.join(' ')})`,
    );
  });
}

/** One idle worker's memory after 1, 5 and 20 turns, with and without tools. */
async function growth(): Promise<void> {
  for (const withTools of [false, true])
    await withOlp({ prestart: false }, async (t) => {
      const say = chat(t, t.token, withTools ? TOOLS : undefined);
      const figures: string[] = [];
      for (let turn = 1; turn <= 20; turn++) {
        await say(`turn ${turn}`);
        if (![1, 5, 20].includes(turn)) continue;
        await sleep(2000);
        const m = liveClis(t).map(memory);
        figures.push(`${turn}: ${m.map((x) => `RSS ${x.rss} / PSS ${x.pss}`).join(', ')}`);
      }
      console.log(
        `(growth) one worker${withTools ? ' with tools (MCP bridge)' : ''}, MB after turn ${figures.join('; ')}`,
      );
    });
}

const { defaultWorkerMemory } = await import('../src/workers/index.js').catch(() => ({
  defaultWorkerMemory: undefined,
}));
console.log(`claude: ${CLAUDE}`);
console.log(
  `--worker-memory here: ${BUDGET.workerMemory ?? (defaultWorkerMemory ? Math.round(defaultWorkerMemory(totalmem()) / MB) : '?')} MB`,
);
if (defaultWorkerMemory)
  console.log(
    `--worker-memory default: ${[8, 16, 24].map((g) => `${g} GB → ${Math.round(defaultWorkerMemory(g * GB) / MB)} MB`).join(', ')}`,
  );
if (ONLY.has('a')) await oneKey();
if (ONLY.has('b')) await people(4, 600);
if (ONLY.has('c')) await people(8, 800);
if (ONLY.has('growth')) await growth();
