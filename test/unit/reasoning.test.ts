// A request's effort and thinking: each wire format's fields into the core's one setting, and that
// setting into each CLI's words (flags, environment, config), as the real CLIs take them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createAppServerParser } from '../../src/backends/codex/live.js';
import {
  createClaudeBackend,
  createCodexBackend,
  createCodexParser,
  type Place,
  type Turn,
} from '../../src/backends/index.js';
import type { ExitInfo } from '../../src/process/index.js';
import { reasoningKey, toReasoningSetting, type Reasoning } from '../../src/core/index.js';
import {
  parseChatRequest,
  parseMessagesRequest,
  parseResponsesRequest,
  toChatReasoning,
  toMessagesReasoning,
  toResponsesReasoning,
} from '../../src/wire/index.js';
import { REFERENCE } from '../support/paths.js';

const chat = (extra: Record<string, unknown>) =>
  toChatReasoning(
    parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra }).reasoning_effort,
  );
const responses = (extra: Record<string, unknown>) =>
  toResponsesReasoning(parseResponsesRequest({ model: 'm', input: 'hi', ...extra }));
const messages = (extra: Record<string, unknown>) =>
  toMessagesReasoning(
    parseMessagesRequest({ model: 'm', max_tokens: 64000, messages: [{ role: 'user', content: 'hi' }], ...extra }).body,
  );

describe('each wire format maps its effort and thinking fields into the core', () => {
  it("chat's reasoning_effort: the effort, and the thinking shown (reasoning_content) unless it is none", () => {
    assert.equal(chat({}), undefined);
    assert.equal(chat({ reasoning_effort: null }), undefined);
    assert.deepEqual(chat({ reasoning_effort: 'high' }), { effort: 'high', shown: true });
    assert.deepEqual(chat({ reasoning_effort: 'max' }), { effort: 'max', shown: true });
    assert.deepEqual(chat({ reasoning_effort: 'none' }), { effort: 'none', shown: false });
    assert.throws(() => chat({ reasoning_effort: 'extreme' }), { param: 'reasoning_effort' });
  });

  it("Responses' reasoning: the effort; shown only with a summary asked for (summary or generate_summary)", () => {
    assert.equal(responses({}), undefined);
    assert.deepEqual(responses({ reasoning: { effort: 'low' } }), { effort: 'low', shown: false });
    assert.deepEqual(responses({ reasoning: { effort: 'xhigh', summary: 'auto' } }), { effort: 'xhigh', shown: true });
    assert.deepEqual(responses({ reasoning: { summary: 'detailed' } }), { shown: true });
    assert.deepEqual(responses({ reasoning: { generate_summary: 'concise' } }), { shown: true });
    assert.equal(responses({ reasoning: { effort: null, summary: 'none' } }), undefined);
    assert.throws(() => responses({ reasoning: { summary: 'verbose' } }), { param: 'reasoning.summary' });
  });

  it("Messages' output_config.effort and thinking, as Claude Code sends them", () => {
    // Claude Code 2.1.197 / 2.1.332 main requests (test/fixtures/reference/clients/README.md).
    assert.deepEqual(messages({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } }), {
      effort: 'high',
      shown: true,
    });
    assert.deepEqual(
      messages({ thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'medium' } }),
      { effort: 'medium', shown: true },
    );
    // Its background (title) request: thinking off, none shown.
    assert.deepEqual(messages({ thinking: { type: 'disabled' } }), { budgetTokens: 0, shown: false });
    assert.deepEqual(messages({ thinking: { type: 'enabled', budget_tokens: 2048 } }), {
      budgetTokens: 2048,
      shown: true,
    });
    // No thinking field: thinking shown, as before the fields were read.
    assert.deepEqual(messages({}), { shown: true });
    assert.throws(() => messages({ output_config: { effort: 'extreme' } }), { param: 'output_config.effort' });
    assert.throws(() => messages({ thinking: { type: 'enabled', budget_tokens: 'lots' } }), {
      param: 'thinking.budget_tokens',
    });
  });

  it("what a CLI is started with, and its key in a live CLI's fit", () => {
    const r = (o: Partial<Reasoning>): Reasoning => ({ shown: true, ...o });
    assert.equal(toReasoningSetting(undefined), undefined);
    assert.equal(toReasoningSetting(r({})), undefined, 'shown alone asks nothing of the CLI');
    assert.deepEqual(toReasoningSetting(r({ effort: 'high' })), { effort: 'high' });
    const keys = [undefined, { effort: 'high' as const }, { effort: 'low' as const }, { budgetTokens: 0 }].map(
      reasoningKey,
    );
    assert.deepEqual(keys, ['', 'high', 'low', ':0']);
    assert.equal(new Set(keys).size, keys.length);
  });
});

const place: Place = { home: '/h', persistent: '/p', cwd: '/w', path: (n) => `/w/${n}` };
const turn = (reasoning?: Turn['reasoning']): Turn => ({
  prompt: { system: 'be brief', text: 'hi' },
  cliModel: 'sonnet',
  ...(reasoning ? { reasoning } : {}),
});

describe('the CLIs are given the effort in their own words', () => {
  const claude = createClaudeBackend({ bin: 'claude', credentials: '/c/creds.json', passEnv: [], env: {} });
  const claudeSays = (reasoning?: Turn['reasoning']) => {
    const args = claude.prepare(turn(reasoning), place).invocation.args;
    const at = args.indexOf('--effort');
    return {
      effort: at === -1 ? undefined : args[at + 1],
      thinking: claude.envPolicy(turn(reasoning), place).set.MAX_THINKING_TOKENS,
    };
  };

  it('claude: --effort (its least for none and minimal), MAX_THINKING_TOKENS for a budget or none', () => {
    assert.deepEqual(claudeSays(), { effort: undefined, thinking: undefined });
    for (const e of ['low', 'medium', 'high', 'xhigh', 'max'] as const)
      assert.deepEqual(claudeSays({ effort: e }), { effort: e, thinking: undefined });
    assert.deepEqual(claudeSays({ effort: 'minimal' }), { effort: 'low', thinking: undefined });
    assert.deepEqual(claudeSays({ effort: 'none' }), { effort: 'low', thinking: '0' });
    assert.deepEqual(claudeSays({ budgetTokens: 0, effort: 'high' }), { effort: 'high', thinking: '0' });
    assert.deepEqual(claudeSays({ budgetTokens: 4096 }), { effort: undefined, thinking: '4096' });
    // A spare is started with the effort too: the turn it serves must have asked for the same.
    const spare = claude.prepare({ ...turn({ effort: 'xhigh' }), prestart: true }, place).invocation.args;
    assert.deepEqual(spare.slice(spare.indexOf('--effort'), spare.indexOf('--effort') + 2), ['--effort', 'xhigh']);
  });

  const codex = createCodexBackend({ bin: 'codex', auth: '/a.json', passEnv: [], env: {}, config: ['model="x"'] });
  const execEffort = (reasoning?: Turn['reasoning']) =>
    codex
      .prepare({ ...turn(reasoning), cliModel: 'codex' }, place)
      .invocation.args.filter((a) => a.startsWith('model_reasoning_effort='));
  const resumeConfig = (reasoning?: Turn['reasoning']) => {
    const t = { ...turn(reasoning), cliModel: 'codex', session: { mode: 'resumed' as const, sessionId: 'th-1' } };
    const lines = codex.live!.resume!(t, place).invocation.stdin!.split('\n').filter(Boolean);
    return (JSON.parse(lines.at(-1)!) as { params: { config?: Record<string, unknown> } }).params.config;
  };

  it("codex exec: -c model_reasoning_effort after the operator's overrides; a budget of 0 is none", () => {
    assert.deepEqual(execEffort(), []);
    assert.deepEqual(execEffort({ effort: 'high' }), ['model_reasoning_effort="high"']);
    assert.deepEqual(execEffort({ effort: 'max' }), ['model_reasoning_effort="max"']);
    assert.deepEqual(execEffort({ budgetTokens: 0, effort: 'high' }), ['model_reasoning_effort="none"']);
    assert.deepEqual(execEffort({ budgetTokens: 2048 }), [], 'codex has no thinking budget');
    const args = codex.prepare({ ...turn({ effort: 'low' }), cliModel: 'codex' }, place).invocation.args;
    assert.ok(args.indexOf('model_reasoning_effort="low"') > args.indexOf('model="x"'));
  });

  it("codex app-server: the effort in thread/resume's config (a resumed thread takes no -c for it)", () => {
    assert.equal(resumeConfig(), undefined);
    assert.deepEqual(resumeConfig({ effort: 'minimal' }), { model_reasoning_effort: 'minimal' });
  });
});

/** How a live CLI's turn ends while its process stays up. */
const LIVE_EXIT: ExitInfo = { reason: 'done', exitCode: 0, signal: null, stderr: '', pid: undefined, durationMs: 0 };

describe("codex's reasoning comes back as thinking", () => {
  it('app-server: the summary deltas as they stream (captured, 0.171), then the message', () => {
    const lines = readFileSync(join(REFERENCE, 'codex-0.171.0-app-server-reasoning-summary.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean);
    const parser = createAppServerParser();
    const events = lines.slice(lines.findIndex((l) => l.startsWith('{"id":"t1"'))).flatMap((l) => parser.push(l));
    assert.deepEqual(
      events.filter((e) => e.type !== 'session'),
      [
        { type: 'thinking', text: '**Thinking** ' },
        { type: 'thinking', text: 'about it' },
        { type: 'text', text: 'hi there' },
      ],
    );
    assert.equal(parser.finish(LIVE_EXIT).ok, true);
  });

  it('app-server: a summary that came without deltas is taken whole; parts and items a blank line apart', () => {
    const parser = createAppServerParser();
    const note = (method: string, params: Record<string, unknown>) => parser.push(JSON.stringify({ method, params }));
    const events = [
      ...note('item/completed', { item: { type: 'reasoning', id: 'rs_1', summary: ['First.', 'Second.'] } }),
      ...note('item/reasoning/summaryTextDelta', { itemId: 'rs_2', summaryIndex: 0, delta: 'Third' }),
      ...note('item/reasoning/summaryTextDelta', { itemId: 'rs_2', summaryIndex: 1, delta: 'Fourth' }),
      ...note('item/completed', { item: { type: 'reasoning', id: 'rs_2', summary: ['Third', 'Fourth'] } }),
    ];
    assert.equal(
      events.map((e) => (e.type === 'thinking' ? e.text : '')).join(''),
      'First.\n\nSecond.\n\nThird\n\nFourth',
    );
  });

  it('exec: each reasoning item whole, a blank line between two', () => {
    const parser = createCodexParser();
    const item = (id: string, type: string, text: string) =>
      parser.push(JSON.stringify({ type: 'item.completed', item: { id, type, text } }));
    const events = [
      ...item('item_0', 'reasoning', '**Planning**'),
      ...item('item_1', 'reasoning', '**Answering**'),
      ...item('item_2', 'agent_message', 'done'),
    ];
    assert.deepEqual(events, [
      { type: 'thinking', text: '**Planning**' },
      { type: 'thinking', text: '\n\n**Answering**' },
      { type: 'text', text: 'done' },
    ]);
  });
});
