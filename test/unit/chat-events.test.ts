// The chat stream mapper alone: the core's events in, `chat.completion.chunk`s out.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConversationEvent, ConversationResult } from '../../src/conversation/index.js';
import {
  createChatStreamState,
  toChatStreamEnd,
  toChatStreamEvents,
  type ChatCompletionChunk,
} from '../../src/wire/index.js';

const result = (extra: Partial<ConversationResult> = {}): ConversationResult => ({
  outcome: 'ok',
  error: null,
  stopReason: { type: 'end' },
  usage: { promptTokens: 3, completionTokens: 2, totalTokens: 5, cachedTokens: 1, reasoningTokens: 0, raw: {} },
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
const started: ConversationEvent = {
  type: 'started',
  model: 'claude-sonnet-5',
  backend: 'claude',
  session: { mode: 'ephemeral' },
  headers: { 'x-from-start': '1' },
  promptTokens: 12,
};

/** A chunk as a short description: its delta's keys (or `usage`), its finish reason when set. */
const describeChunk = (c: ChatCompletionChunk) => {
  const choice = c.choices[0];
  if (!choice) return 'usage';
  return [Object.keys(choice.delta).join('+') || '{}', choice.finish_reason].filter(Boolean).join(':');
};

function map(events: ConversationEvent[], end: ConversationResult, includeUsage: boolean) {
  const s = createChatStreamState({ id: 'chatcmpl-1', created: 1, model: 'sonnet', includeUsage });
  const chunks: ChatCompletionChunk[] = [];
  const starts: Readonly<Record<string, string>>[] = [];
  for (const m of [...events.map((ev) => toChatStreamEvents(s, ev)), toChatStreamEnd(s, end)]) {
    if (m.start) starts.push(m.start);
    chunks.push(...m.chunks);
  }
  return { chunks, starts, shape: chunks.map(describeChunk) };
}

const table: {
  name: string;
  events: ConversationEvent[];
  end: ConversationResult;
  includeUsage: boolean;
  shape: string[];
}[] = [
  {
    name: 'text',
    events: [started, { type: 'text', text: 'he' }, { type: 'text', text: 'llo' }],
    end: result(),
    includeUsage: false,
    shape: ['role+content', 'content', 'content', '{}:stop'],
  },
  {
    name: 'with include_usage',
    events: [started, { type: 'text', text: 'x' }],
    end: result({ stopReason: { type: 'output_cap' } }),
    includeUsage: true,
    shape: ['role+content', 'content', '{}:length', 'usage'],
  },
  {
    name: 'no events: the end announces',
    events: [],
    end: result(),
    includeUsage: false,
    shape: ['role+content', '{}:stop'],
  },
  {
    name: 'a call and its arguments',
    events: [
      started,
      { type: 'tool_call', index: 0, id: 'call_0', name: 'f' },
      { type: 'tool_args', index: 0, text: '{}' },
    ],
    end: result({ stopReason: { type: 'tool_use' } }),
    includeUsage: false,
    shape: ['role+content', 'tool_calls', 'tool_calls', '{}:tool_calls'],
  },
  {
    name: 'thinking (shown: the request sent reasoning_effort) as reasoning_content; a signature says nothing',
    events: [
      started,
      { type: 'thinking', text: 'hm' },
      { type: 'thinking', text: '', signature: 'sig' },
      { type: 'text', text: 'x' },
    ],
    end: result(),
    includeUsage: false,
    shape: ['role+content', 'reasoning_content', 'content', '{}:stop'],
  },
];

describe('toChatStreamEvents and toChatStreamEnd', () => {
  for (const row of table) {
    it(row.name, () => {
      assert.deepEqual(map(row.events, row.end, row.includeUsage).shape, row.shape);
    });
  }

  it('chunks name the model that answers; the stream starts once, with the first headers', () => {
    const { chunks, starts } = map([started, { type: 'text', text: 'a' }, started], result(), true);
    assert.deepEqual(starts, [{ 'x-from-start': '1' }]);
    assert.deepEqual(new Set(chunks.map((c) => c.model)), new Set(['claude-sonnet-5']));
    assert.deepEqual(
      chunks.slice(0, -1).map((c) => c.usage),
      [null, null, null],
    );
    assert.equal(chunks.at(-1)!.usage?.total_tokens, 5);
  });

  it("without a started event the end starts the stream with the result's headers and served model", () => {
    const { chunks, starts } = map([], result({ servedModel: 'claude-opus-5' }), false);
    assert.deepEqual(starts, [{ 'x-from-result': '1' }]);
    assert.equal(chunks[0]!.model, 'claude-opus-5');
  });
});
