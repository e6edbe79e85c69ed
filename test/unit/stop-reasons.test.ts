// The stop-sequence matcher (pieces of a streamed reply in, what may go on out) and olp's one
// stop reason in each wire format's words.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StopReason } from '../../src/backends/index.js';
import { createStopMatcher } from '../../src/conversation/index.js';
import { toAnthropicStop, toChatFinishReason, toIncompleteReason } from '../../src/wire/index.js';

/** Feeds the pieces through a matcher; returns what went on (a `|` where each push's output ends) and the match. */
function feed(sequences: string[], pieces: string[]): { out: string; matched?: string } {
  const m = createStopMatcher(sequences)!;
  const out: string[] = [];
  for (const p of pieces) {
    const cut = m.push(p);
    out.push(cut.text);
    if (cut.matched !== undefined) return { out: out.join('|'), matched: cut.matched };
  }
  out.push(m.end());
  return { out: out.join('|') };
}

describe('stop sequences', () => {
  it('none, or only empty ones: no matcher', () => {
    assert.equal(createStopMatcher(undefined), undefined);
    assert.equal(createStopMatcher([]), undefined);
    assert.equal(createStopMatcher(['']), undefined);
  });

  it('cuts before the first match, within a piece or across pieces', () => {
    assert.deepEqual(feed(['STOP'], ['abc STOP def']), { out: 'abc ', matched: 'STOP' });
    assert.deepEqual(feed(['STOP'], ['abc ST', 'OP def']), { out: 'abc |', matched: 'STOP' });
    assert.deepEqual(feed(['STOP'], ['abc S', 'T', 'O', 'P']), { out: 'abc |||', matched: 'STOP' });
  });

  it('holds back only what could start a sequence, and sends it at the end when none came', () => {
    assert.deepEqual(feed(['STOP'], ['abc', ' de', 'f']), { out: 'abc| de|f|' });
    assert.deepEqual(feed(['STOP'], ['abc ST', 'ay']), { out: 'abc |STay|' });
    assert.deepEqual(feed(['STOP'], ['abc STO']), { out: 'abc |STO' });
  });

  it('the earliest match wins; at the same place, the longer', () => {
    assert.deepEqual(feed(['beta', 'HERE', 'STOP'], ['alpha STOPHERE beta']), { out: 'alpha ', matched: 'STOP' });
    assert.deepEqual(feed(['ab', 'abc'], ['xxabcd']), { out: 'xx', matched: 'abc' });
  });

  it('nothing goes on after a match', () => {
    const m = createStopMatcher(['X'])!;
    assert.deepEqual(m.push('aXb'), { text: 'a', matched: 'X' });
    assert.deepEqual(m.push('more'), { text: '' });
    assert.equal(m.end(), '');
  });
});

describe('stop reasons in each wire format', () => {
  const all: StopReason[] = [
    { type: 'end' },
    { type: 'output_cap' },
    { type: 'stop_sequence', sequence: '###' },
    { type: 'tool_use' },
    { type: 'context_window' },
    { type: 'refusal' },
    { type: 'interrupted' },
    { type: 'error' },
  ];

  it('chat', () => {
    assert.deepEqual(
      all.map((r) => toChatFinishReason(r)),
      ['stop', 'length', 'stop', 'tool_calls', 'length', 'content_filter', 'stop', 'stop'],
    );
    assert.equal(toChatFinishReason({ type: 'end' }, true), 'tool_calls');
  });

  it('Anthropic Messages, with the matched sequence', () => {
    assert.deepEqual(
      all.map((r) => toAnthropicStop(r)),
      [
        { stop_reason: 'end_turn', stop_sequence: null },
        { stop_reason: 'max_tokens', stop_sequence: null },
        { stop_reason: 'stop_sequence', stop_sequence: '###' },
        { stop_reason: 'tool_use', stop_sequence: null },
        { stop_reason: 'model_context_window_exceeded', stop_sequence: null },
        { stop_reason: 'refusal', stop_sequence: null },
        { stop_reason: 'pause_turn', stop_sequence: null },
        { stop_reason: 'end_turn', stop_sequence: null },
      ],
    );
    assert.deepEqual(toAnthropicStop({ type: 'end' }, true), { stop_reason: 'tool_use', stop_sequence: null });
  });

  it('Responses: incomplete for the output cap, the context window and a refusal', () => {
    assert.deepEqual(
      all.map((r) => toIncompleteReason(r)),
      [null, 'max_output_tokens', null, null, 'max_output_tokens', 'content_filter', null, null],
    );
  });
});
