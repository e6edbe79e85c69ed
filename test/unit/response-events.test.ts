// The Responses stream mapper alone: the core's events in, the Responses API's stream events out,
// with no response object, socket or timer.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type OpenAI from 'openai';
import type { ConversationEvent, ConversationResult } from '../../src/conversation/index.js';
import { backendFailed } from '../../src/errors/index.js';
import {
  createResponseStreamState,
  toResponseStreamEnd,
  toResponseStreamEvents,
  type ResponseMeta,
  type ResponseStreamEvent,
} from '../../src/wire/index.js';

const meta: ResponseMeta = {
  id: 'resp_1',
  createdAt: 1,
  model: 'sonnet',
  instructions: null,
  previousResponseId: null,
  store: true,
  maxOutputTokens: null,
  metadata: {},
  format: { type: 'text' },
  temperature: null,
  topP: null,
  truncation: 'disabled',
  parallelToolCalls: true,
  tools: [],
  toolChoice: 'auto',
  reasoningEffort: null,
  reasoningSummary: null,
  clientTimeoutMs: 1000,
};
const result = (extra: Partial<ConversationResult> = {}): ConversationResult => ({
  outcome: 'ok',
  error: null,
  stopReason: { type: 'end' },
  usage: null,
  estimated: false,
  model: 'sonnet',
  backend: 'claude',
  servedModel: 'claude-sonnet-5',
  session: null,
  run: null,
  overage: false,
  queueMs: 0,
  firstTokenMs: 1,
  durationMs: 2,
  status: 200,
  headers: { 'x-from-result': '1' },
  ...extra,
});
const failed = () => result({ outcome: 'error', error: backendFailed('claude', 'exited'), status: 502 });
const started: ConversationEvent = {
  type: 'started',
  model: 'claude-sonnet-5',
  backend: 'claude',
  session: { mode: 'ephemeral' },
  headers: { 'x-from-start': '1' },
  promptTokens: 12,
};
const text = (t: string): ConversationEvent => ({ type: 'text', text: t });
const call = (index: number, name: string): ConversationEvent => ({
  type: 'tool_call',
  index,
  id: `call_${index}`,
  name,
});
const args = (index: number, t: string): ConversationEvent => ({ type: 'tool_args', index, text: t });
const think = (t: string, signature?: string): ConversationEvent => ({
  type: 'thinking',
  text: t,
  ...(signature ? { signature } : {}),
});

/** Every event the mapper gives for `events` then `end`, and where the stream started. */
function map(events: ConversationEvent[], end: ConversationResult) {
  let n = 0;
  let r = 0;
  const s = createResponseStreamState(
    meta,
    'msg_1',
    () => `fc_${n++}`,
    () => `rs_${r++}`,
  );
  const out: ResponseStreamEvent[] = [];
  const starts: Readonly<Record<string, string>>[] = [];
  for (const ev of events) {
    const m = toResponseStreamEvents(s, ev);
    if (m.start) starts.push(m.start);
    out.push(...m.events);
  }
  const last = toResponseStreamEnd(s, end);
  if (last.start) starts.push(last.start);
  out.push(...last.events);
  return { types: out.map((e) => e.type), out, starts, final: last.final };
}

const OPEN = ['response.created', 'response.in_progress'];
const MESSAGE = ['response.output_item.added', 'response.content_part.added'];
const MESSAGE_DONE = ['response.output_text.done', 'response.content_part.done', 'response.output_item.done'];
const CALL_DONE = ['response.function_call_arguments.done', 'response.output_item.done'];

const table: {
  name: string;
  events: ConversationEvent[];
  end: ConversationResult;
  types: string[];
  status: ConversationResult['outcome'] | string;
  text: string;
}[] = [
  {
    name: 'text',
    events: [started, text('he'), text('llo')],
    end: result(),
    types: [
      ...OPEN,
      ...MESSAGE,
      'response.output_text.delta',
      'response.output_text.delta',
      ...MESSAGE_DONE,
      'response.completed',
    ],
    status: 'completed',
    text: 'hello',
  },
  {
    name: 'no events at all: an empty message',
    events: [],
    end: result(),
    types: [...OPEN, ...MESSAGE, ...MESSAGE_DONE, 'response.completed'],
    status: 'completed',
    text: '',
  },
  {
    name: 'cut at the output cap',
    events: [started, text('x')],
    end: result({ stopReason: { type: 'output_cap' } }),
    types: [...OPEN, ...MESSAGE, 'response.output_text.delta', ...MESSAGE_DONE, 'response.incomplete'],
    status: 'incomplete',
    text: 'x',
  },
  {
    name: 'a failure after text',
    events: [started, text('x')],
    end: failed(),
    types: [...OPEN, ...MESSAGE, 'response.output_text.delta', 'response.failed'],
    status: 'failed',
    text: 'x',
  },
  {
    name: 'text, then two calls (arguments of an unknown call are dropped)',
    events: [started, text('pre'), call(0, 'f'), args(0, '{"a"'), args(0, ':1}'), call(1, 'g'), args(5, 'zz')],
    end: result({ stopReason: { type: 'tool_use' } }),
    types: [
      ...OPEN,
      ...MESSAGE,
      'response.output_text.delta',
      ...MESSAGE_DONE,
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.output_item.added',
      ...CALL_DONE,
      ...CALL_DONE,
      'response.completed',
    ],
    status: 'completed',
    text: 'pre',
  },
  {
    name: 'calls alone: no message item',
    events: [started, call(0, 'f')],
    end: result({ stopReason: { type: 'tool_use' } }),
    types: [...OPEN, 'response.output_item.added', ...CALL_DONE, 'response.completed'],
    status: 'completed',
    text: '',
  },
];

describe('toResponseStreamEvents and toResponseStreamEnd', () => {
  for (const row of table) {
    it(row.name, () => {
      const { types, final } = map(row.events, row.end);
      assert.deepEqual(types, row.types);
      assert.equal(final.status, row.status);
      assert.equal(final.output_text, row.text);
    });
  }

  it("the stream starts once, with the first started event's headers and model", () => {
    const { starts, out } = map([started, text('a'), started], result());
    assert.deepEqual(starts, [{ 'x-from-start': '1' }]);
    assert.equal((out[0]!.data.response as { model: string }).model, 'claude-sonnet-5');
  });

  it("without a started event the end starts it, with the result's headers and served model", () => {
    const { starts, out } = map([], result({ servedModel: 'claude-opus-5' }));
    assert.deepEqual(starts, [{ 'x-from-result': '1' }]);
    assert.equal((out[0]!.data.response as { model: string }).model, 'claude-opus-5');
  });

  it('output indexes follow the order items start; call ids come from the state', () => {
    const { out, final } = map(
      [started, text('t'), call(0, 'f'), args(0, '{}')],
      result({ stopReason: { type: 'tool_use' } }),
    );
    const added = out
      .filter((e) => e.type === 'response.output_item.added')
      .map((e) => [e.data.output_index, (e.data.item as { type: string }).type]);
    assert.deepEqual(added, [
      [0, 'message'],
      [1, 'function_call'],
    ]);
    assert.deepEqual(
      final.output.map((o) => o.id),
      ['msg_1', 'fc_0'],
    );
    const delta = out.find((e) => e.type === 'response.function_call_arguments.delta')!;
    assert.deepEqual(delta.data, { item_id: 'fc_0', output_index: 1, delta: '{}' });
  });

  it('thinking (shown: a summary was asked for) is a reasoning item before the answer, one per block', () => {
    const { out, types, final } = map(
      [started, think('Let me '), think('see.'), think('', 'sig-1'), think('Again.'), text('hi'), think('late')],
      result(),
    );
    const REASONING = ['response.output_item.added', 'response.reasoning_summary_part.added'];
    const REASONING_DONE = [
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
    ];
    assert.deepEqual(types, [
      ...OPEN,
      ...REASONING,
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      ...REASONING_DONE,
      ...REASONING,
      'response.reasoning_summary_text.delta',
      ...REASONING_DONE,
      ...MESSAGE,
      'response.output_text.delta',
      ...MESSAGE_DONE,
      'response.completed',
    ]);
    const delta = out.find((e) => e.type === 'response.reasoning_summary_text.delta')!;
    assert.deepEqual(delta.data, { item_id: 'rs_0', output_index: 0, summary_index: 0, delta: 'Let me ' });
    // Thinking after the answer started is not shown; the items' order is their output indexes'.
    assert.deepEqual(
      final.output.map((o) => o.id),
      ['rs_0', 'rs_1', 'msg_1'],
    );
    const first: OpenAI.Responses.ResponseReasoningItem = final.output[0] as Extract<
      (typeof final.output)[number],
      { type: 'reasoning' }
    >;
    assert.deepEqual(first, {
      id: 'rs_0',
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Let me see.' }],
    });
    const done = out.filter((e) => e.type === 'response.output_item.done').map((e) => e.data.output_index);
    assert.deepEqual(done, [0, 1, 2]);
    const partDone = out.find((e) => e.type === 'response.reasoning_summary_part.done')!;
    const sdk: Omit<OpenAI.Responses.ResponseReasoningSummaryPartDoneEvent, 'sequence_number' | 'type'> =
      partDone.data as never;
    assert.deepEqual(sdk.part, { type: 'summary_text', text: 'Let me see.' });
  });

  it('a failed response carries the error, and its text so far as an incomplete message', () => {
    const { out, final } = map([started, text('partial')], failed());
    assert.equal(out.at(-1)!.type, 'response.failed');
    assert.equal(final.error?.code, 'server_error');
    assert.deepEqual(
      final.output.map((o) => ('status' in o ? o.status : undefined)),
      ['incomplete'],
    );
  });

  it('shell and apply_patch calls: added, then done whole, with no argument events; the SDK types fit', () => {
    const wire = new Map([
      ['shell', { type: 'shell' as const, name: 'shell' }],
      ['apply_patch', { type: 'apply_patch' as const, name: 'apply_patch' }],
    ]);
    let n = 0;
    const s = createResponseStreamState({ ...meta, toolWire: wire }, 'msg_1', () => `fc_${n++}`);
    const events = [
      started,
      call(0, 'shell'),
      args(0, '{"commands":["ls"],'),
      args(0, '"timeout_ms":10}'),
      call(1, 'apply_patch'),
      args(1, '{"type":"create_file","path":"a","diff":"+x"}'),
    ];
    const out = events.flatMap((ev) => toResponseStreamEvents(s, ev).events);
    const end = toResponseStreamEnd(s, result({ stopReason: { type: 'tool_use' } }));
    assert.deepEqual(
      [...out, ...end.events].map((e) => e.type),
      [
        ...OPEN,
        'response.output_item.added',
        'response.output_item.added',
        'response.output_item.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    const [shell, patch] = end.final.output;
    // Checked against the openai SDK's own types: a mismatch is a compile error.
    const sh: OpenAI.Responses.ResponseFunctionShellToolCall = shell as Extract<typeof shell, { type: 'shell_call' }>;
    const ap: OpenAI.Responses.ResponseApplyPatchToolCall = patch as Extract<
      typeof patch,
      { type: 'apply_patch_call' }
    >;
    assert.deepEqual(sh, {
      id: 'fc_0',
      type: 'shell_call',
      call_id: 'call_0',
      action: { commands: ['ls'], timeout_ms: 10, max_output_length: null },
      environment: null,
      status: 'completed',
    });
    assert.deepEqual(ap.operation, { type: 'create_file', path: 'a', diff: '+x' });
  });
});
