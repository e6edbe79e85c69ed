// The real `claude` binary as a client of olp's Messages responses (the writers on a scripted
// conversation, no CLI behind them): it reads pings before message_start, runs the parallel
// tool_use blocks and sends their results back under the ids olp gave, and acts on olp's errors
// as designed (a spent plan window is not retried and says when it resets, a full queue is retried
// after its Retry-After, a conversation over the context is its "Prompt is too long").
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ConversationEvent, ConversationResult } from '../../src/conversation/index.js';
import { contextLengthExceeded, limitExceeded, planLimitReached, type ProxyError } from '../../src/errors/index.js';
import { REAL_CLAUDE, REAL_CLAUDE_VERSION } from '../support/paths.js';
import { startScriptedMessages, type MessagesScript, type ScriptedMessages } from '../support/scripted-messages.js';

const result = (extra: Partial<ConversationResult> = {}): ConversationResult => ({
  outcome: 'ok',
  error: null,
  stopReason: { type: 'end' },
  usage: {
    promptTokens: 2105,
    completionTokens: 7,
    totalTokens: 2112,
    cachedTokens: 2000,
    reasoningTokens: 0,
    raw: { input_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 7 },
  },
  estimated: false,
  model: 'sonnet',
  backend: 'claude',
  servedModel: null,
  session: null,
  run: null,
  overage: false,
  queueMs: 0,
  firstTokenMs: 0,
  durationMs: 0,
  status: 200,
  headers: {},
  ...extra,
});
const failed = (error: ProxyError) => result({ outcome: 'error', error, usage: null, status: error.status });
const started = (model: string): ConversationEvent => ({
  type: 'started',
  model,
  backend: 'claude',
  session: { mode: 'ephemeral' },
  headers: {},
  promptTokens: 2100,
});

let dir: string;
let note: string;
let api: ScriptedMessages;
let answer: (body: ScriptedMessages['requests'][number]) => MessagesScript;

before(async () => {
  assert.ok(existsSync(REAL_CLAUDE), `the real claude CLI is missing at ${REAL_CLAUDE}: run npm ci`);
  dir = mkdtempSync(join(tmpdir(), 'olp-messages-real-'));
  note = join(dir, 'note.txt');
  writeFileSync(note, 'NOTE-CONTENT-42\n');
  // Pings every 200 ms; each reply waits 1 s before `started`, so pings come before message_start.
  api = await startScriptedMessages((body) => answer(body), { keepaliveMs: () => 200 });
});
after(async () => {
  await api?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs `claude -p` against the scripted API in a home of its own; its JSON lines and exit code. */
function runClaude(prompt: string, args: string[], env: Record<string, string> = {}) {
  const home = mkdtempSync(join(dir, 'home-'));
  mkdirSync(join(home, 'tmp'));
  return new Promise<{ code: number | null; lines: Record<string, unknown>[] }>((resolve, reject) => {
    const child = spawn(REAL_CLAUDE, ['-p', prompt, ...args], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        CLAUDE_CONFIG_DIR: join(home, '.claude'),
        TMPDIR: join(home, 'tmp'),
        ANTHROPIC_BASE_URL: api.url,
        ANTHROPIC_API_KEY: 'sk-ant-dummy-000',
        DISABLE_TELEMETRY: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    child.stderr.resume();
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const lines = stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      resolve({ code, lines });
    });
  });
}

const lastResult = (lines: Record<string, unknown>[]) => lines.filter((l) => l.type === 'result').at(-1)!;

describe(`real claude ${REAL_CLAUDE_VERSION} reading olp's Messages responses`, () => {
  it('reads pings before message_start, runs parallel tool_use blocks and answers them under olp’s ids', async () => {
    const from = api.requests.length;
    answer = (body) => {
      const last = body.messages.at(-1)?.content;
      const results = Array.isArray(last) ? last.filter((b: { type?: string }) => b.type === 'tool_result') : [];
      if (results.length > 0)
        return { steps: [1000, started(body.model), { type: 'text', text: 'Both read.' }], end: result() };
      return {
        steps: [
          1000,
          started(body.model),
          { type: 'text', text: 'Reading it twice.' },
          // A codex-style id and an Anthropic one: both go out as they are.
          { type: 'tool_call', index: 0, id: 'call_Zx-9_qAbC', name: 'Read' },
          { type: 'tool_args', index: 0, text: '{"file_path":' },
          { type: 'tool_args', index: 0, text: `${JSON.stringify(note)}}` },
          { type: 'tool_call', index: 1, id: 'toolu_01Second', name: 'Read' },
          { type: 'tool_args', index: 1, text: JSON.stringify({ file_path: note }) },
        ],
        end: result({ stopReason: { type: 'tool_use' } }),
      };
    };
    const run = await runClaude('read the note twice', [
      '--output-format',
      'stream-json',
      '--verbose',
      '--allowedTools',
      'Read',
    ]);
    const done = lastResult(run.lines);
    assert.equal(done.is_error, false, JSON.stringify(done));
    assert.equal(done.result, 'Both read.');
    const [first, second] = api.requests.slice(from).filter((r) => r.messages.length > 0);
    assert.ok(first && second, `${api.requests.length - from} requests`);
    const sentBack = second.messages.at(-1)!.content as { type: string; tool_use_id: string; content: unknown }[];
    // Both ids come back as olp sent them; in the order the CLI's parallel reads finished (either).
    assert.deepEqual(
      sentBack
        .filter((b) => b.type === 'tool_result')
        .map((b) => b.tool_use_id)
        .sort(),
      ['call_Zx-9_qAbC', 'toolu_01Second'],
    );
    assert.match(JSON.stringify(sentBack), /NOTE-CONTENT-42/);
  });

  it('a spent plan window: one 429, not retried, its message saying when the window resets', async () => {
    const from = api.requests.length;
    const now = Date.now();
    answer = () => ({
      steps: [],
      end: failed(
        planLimitReached(
          `The claude login's plan limit is reached: the 5-hour window is spent. It resets at ${new Date(now + 3_600_000).toISOString()}.`,
          now + 3_600_000,
          now,
        ),
      ),
    });
    const run = await runClaude('hello', ['--output-format', 'json']);
    const done = lastResult(run.lines);
    assert.equal(done.is_error, true);
    assert.equal(done.api_error_status, 429);
    assert.match(String(done.result), /It resets at \d{4}-/);
    assert.equal(api.requests.length - from, 1, 'claude did not retry');
  });

  it('a full queue: 529 overloaded, retried after its Retry-After', async () => {
    const from = api.requests.length;
    answer = () => ({ steps: [], end: failed(limitExceeded('server_busy', 'Every CLI slot is busy.', 1)) });
    const run = await runClaude('hello', ['--output-format', 'json'], { CLAUDE_CODE_MAX_RETRIES: '2' });
    const done = lastResult(run.lines);
    assert.equal(done.is_error, true);
    assert.match(String(done.result), /529|Overloaded/i);
    assert.equal(api.requests.length - from, 3, 'the first try and two retries');
  });

  it('a conversation over the context: a 413 claude reads as "Prompt is too long"', async () => {
    answer = () => ({ steps: [], end: failed(contextLengthExceeded('about 250000 tokens; the budget is 200000')) });
    const run = await runClaude('hello', ['--output-format', 'json'], { CLAUDE_CODE_MAX_RETRIES: '0' });
    const done = lastResult(run.lines);
    assert.equal(done.api_error_status, 413);
    assert.equal(done.result, 'Prompt is too long');
  });
});
