import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createClaudeParser } from '../../src/backends/index.js';
import type { ExitInfo } from '../../src/process/index.js';
import { createLineSplitter } from '../../src/process/index.js';
import { REFERENCE, ROOT } from '../support/paths.js';

const exit = (over: Partial<ExitInfo> = {}): ExitInfo => ({
  reason: 'exit',
  exitCode: 0,
  signal: null,
  stderr: '',
  pid: 1,
  durationMs: 10,
  ...over,
});

/** Feeds a captured file through the line splitter in chunks of `size` bytes, then the parser. */
function run(file: string, size: number, ex: Partial<ExitInfo> = {}) {
  const bytes = readFileSync(join(REFERENCE, file));
  const splitter = createLineSplitter();
  const parser = createClaudeParser();
  const events = [];
  for (let off = 0; off < bytes.length; off += size) {
    for (const line of splitter.push(bytes.subarray(off, off + size))) events.push(...parser.push(line));
  }
  for (const line of splitter.end()) events.push(...parser.push(line));
  const text = events
    .filter((e) => e.type === 'text')
    .map((e) => (e as { text: string }).text)
    .join('');
  return { events, text, outcome: parser.finish(exit(ex)) };
}

describe('claude stream-json parser on captured CLI output', () => {
  for (const size of [1, 7, 64, 4096, 1 << 20]) {
    it(`partial-message deltas, chunks of ${size} bytes`, () => {
      const { events, text, outcome } = run('print-stream-json-partial-ok.jsonl', size);
      assert.equal(text, 'echo: ps://claude.com/claude-code)\n</system-reminder>\n hello there');
      // Forwarded as deltas, not as one block at the end.
      assert.ok(events.filter((e) => e.type === 'text').length > 5);
      assert.deepEqual(events[0], {
        type: 'session',
        sessionId: '11111111-2222-4333-8444-555555555555',
        model: 'claude-sonnet-4-5',
      });
      assert.equal(outcome.ok, true);
      assert.deepEqual(
        outcome.usage && {
          p: outcome.usage.promptTokens,
          c: outcome.usage.completionTokens,
          k: outcome.usage.cachedTokens,
        },
        { p: 11, c: 7, k: 0 },
      );
    });
  }

  it('takes the text from the assistant event when there are no partial messages', () => {
    const { text, outcome } = run('print-stream-json-ok.jsonl', 100);
    assert.match(text, /json turn one$/);
    assert.equal(outcome.ok, true);
  });

  it('not logged in: a synthetic message and is_error result become a 503 that says how to log in', () => {
    const { text, outcome } = run('claude-2.1.197-stream-no-credentials.jsonl', 33, { exitCode: 1 });
    assert.equal(text, '', 'the synthetic error text must not be sent as a reply');
    assert.equal(outcome.ok, false);
    if (outcome.ok) return;
    assert.equal(outcome.error.status, 503);
    assert.equal(outcome.error.code, 'backend_not_logged_in');
    assert.match(outcome.error.message, /claude auth login/);
    assert.equal(outcome.error.retryable, false);
  });

  it('HTTP 401 after retries (subtype success, is_error true) is a login problem, not a success', () => {
    const { outcome } = run('claude-2.1.197-stream-http401-after-10-retries.jsonl', 512, { exitCode: 1 });
    assert.equal(outcome.ok, false);
    if (!outcome.ok) assert.equal(outcome.error.code, 'backend_not_logged_in');
  });

  it('HTTP 500 from the API is a retryable 502', () => {
    const { outcome } = run('claude-2.1.197-stream-http500-max-retries-0.jsonl', 512, { exitCode: 1 });
    assert.equal(outcome.ok, false);
    if (outcome.ok) return;
    assert.equal(outcome.error.status, 502);
    assert.equal(outcome.error.retryable, true);
    assert.match(outcome.error.message, /API Error: 500/);
  });

  it('an unknown model is a 404 model_not_found', () => {
    const { outcome } = run('unknown-model.jsonl', 512, { exitCode: 1, stderr: '[claude-code:unrecognized_model]' });
    assert.equal(outcome.ok, false);
    if (!outcome.ok)
      assert.deepEqual(
        [outcome.error.status, outcome.error.code, outcome.error.param],
        [404, 'model_not_found', 'model'],
      );
  });

  it('error_max_turns is a 502 carrying the CLI error text', () => {
    const { outcome } = run('claude-2.1.197-stream-error-max-turns.jsonl', 512, { exitCode: 1 });
    assert.equal(outcome.ok, false);
    if (!outcome.ok) assert.match(outcome.error.message, /maximum number of turns/);
  });

  it('a resume of an unknown session reports the CLI error', () => {
    const { outcome } = run('claude-2.1.197-stream-resume-unknown-session.jsonl', 512, { exitCode: 1 });
    assert.equal(outcome.ok, false);
    if (!outcome.ok) assert.match(outcome.error.message, /No conversation found/);
  });

  it('usage keeps the raw counts and reports the partial usage of a failed run', () => {
    const { outcome } = run('claude-2.1.197-stream-error-max-turns.jsonl', 512, { exitCode: 1 });
    assert.deepEqual(outcome.usage?.raw, {
      input_tokens: 12,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 30,
    });
  });
});

describe('claude parser without a result', () => {
  const feed = (lines: string[], ex: Partial<ExitInfo>) => {
    const p = createClaudeParser();
    for (const l of lines) p.push(l);
    return p.finish(exit(ex));
  };
  it('garbage only → 502 backend_bad_output naming the first line', () => {
    const o = feed(['<html>502</html>', 'nope'], { exitCode: 0 });
    assert.equal(o.ok, false);
    if (!o.ok) {
      assert.equal(o.error.code, 'backend_bad_output');
      assert.match(o.error.message, /<html>502/);
      assert.equal(o.error.retryable, false);
    }
  });
  it('killed by a signal mid-stream → 502 backend_error', () => {
    const o = feed(['{"type":"system","subtype":"init","session_id":"s"}'], { exitCode: null, signal: 'SIGKILL' });
    assert.equal(o.ok, false);
    if (!o.ok) {
      assert.equal(o.error.code, 'backend_error');
      assert.match(o.error.message, /SIGKILL/);
    }
  });
  it('non-zero exit with stderr → 502 quoting stderr', () => {
    const o = feed([], { exitCode: 3, stderr: 'Error: something broke\n' });
    assert.equal(o.ok, false);
    if (!o.ok) assert.match(o.error.message, /code 3: Error: something broke/);
  });
  it('unknown event types are ignored', () => {
    const p = createClaudeParser();
    assert.deepEqual(p.push('{"type":"rate_limit_event","x":1}'), []);
    assert.deepEqual(p.push('{"type":"system","subtype":"compact_boundary"}'), []);
  });
  it('api_retry lines (captured, claude 2.1.197) are retry events, not output', () => {
    const p = createClaudeParser();
    const lines = readFileSync(join(REFERENCE, 'claude-2.1.197-stream-http401-after-10-retries.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('api_retry'));
    assert.equal(lines.length, 10);
    const events = lines.flatMap((l) => p.push(l));
    assert.equal(events.length, 10);
    assert.deepEqual(events[0], { type: 'retry', message: 'attempt 1/10: HTTP 401 authentication_failed' });
    assert.equal(p.complete, false);
  });
  it('ignores text of sub-agent (non top-level) messages', () => {
    const p = createClaudeParser();
    const ev = p.push(
      '{"type":"stream_event","parent_tool_use_id":"toolu_1","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"inner"}}}',
    );
    assert.deepEqual(ev, []);
  });
});

describe('line splitter', () => {
  it('handles multi-byte characters split across chunks and CRLF', () => {
    const s = createLineSplitter();
    const bytes = Buffer.from('{"t":"héllo ✓"}\r\n\n{"t":2}');
    const lines: string[] = [];
    for (const b of bytes) lines.push(...s.push(Buffer.from([b])));
    lines.push(...s.end());
    assert.deepEqual(lines, ['{"t":"héllo ✓"}', '{"t":2}']);
  });
});

describe('event types a newer CLI may add', () => {
  it('are ignored but noted, by type and system subtype; the known ignored ones are not', () => {
    const p = createClaudeParser();
    for (const line of [
      { type: 'system', subtype: 'init', session_id: 's' },
      { type: 'system', subtype: 'hook_started' },
      { type: 'system', subtype: 'brand_new_subtype' },
      { type: 'user', message: { role: 'user', content: [] } },
      { type: 'tool_progress' },
      { type: 'shiny_new_event', payload: 1 },
    ]) {
      p.push(JSON.stringify(line));
    }
    assert.deepEqual([...(p.unknown ?? [])].sort(), ['shiny_new_event', 'system/brand_new_subtype']);
  });
});

/** What a consumer keeps of a turn's events: text and calls, an abandoned attempt's taken back. */
function kept(events: ReturnType<ReturnType<typeof createClaudeParser>['push']>) {
  const out: typeof events = [];
  for (const e of events) {
    if (e.type === 'abandoned') out.splice(out.length - e.events);
    else if (e.type === 'text' || e.type === 'tool_call' || e.type === 'tool_args') out.push(e);
  }
  return {
    text: out
      .filter((e) => e.type === 'text')
      .map((e) => (e as { text: string }).text)
      .join(''),
    out,
  };
}

describe('a message the CLI abandons when the provider stream breaks (captured, stand-in cuts once, the retry answers)', () => {
  const answer = 'stand-in heard: say something long please';
  for (const version of ['2.1.197', '2.1.332']) {
    for (const how of ['reset', 'malformed']) {
      it(`claude ${version}, ${how}: the streamed part is taken back once, the reply is the CLI's final answer`, () => {
        const { events, outcome } = run(`claude-${version}-stream-cut-${how}-retried.jsonl`, 97);
        const abandoned = events.filter((e) => e.type === 'abandoned');
        assert.deepEqual(abandoned, [{ type: 'abandoned', text: 'stand-in hea', events: 2 }]);
        // Said before anything of the retried message.
        const at = events.findIndex((e) => e.type === 'abandoned');
        assert.equal(
          events
            .slice(0, at)
            .filter((e) => e.type === 'text')
            .map((e) => (e as { text: string }).text)
            .join(''),
          'stand-in hea',
        );
        assert.equal(kept(events).text, answer);
        assert.equal(outcome.ok, true);
      });
    }
  }

  it('no captured run of a whole reply says abandoned', () => {
    for (const file of readdirSync(REFERENCE).filter(
      (f) => f.endsWith('.jsonl') && !f.includes('-cut-') && !f.startsWith('codex'),
    )) {
      const { events } = run(file, 4096);
      assert.deepEqual(
        events.filter((e) => e.type === 'abandoned'),
        [],
        file,
      );
    }
  });

  const line = (event: Record<string, unknown>) =>
    JSON.stringify({ type: 'stream_event', event, parent_tool_use_id: null });
  const start = (id: string) =>
    line({ type: 'message_start', message: { id, usage: { input_tokens: 3, output_tokens: 1 } } });
  const delta = (text: string) => line({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
  const end = (stop: string) => [
    line({ type: 'message_delta', delta: { stop_reason: stop }, usage: { output_tokens: 4 } }),
    line({ type: 'message_stop' }),
  ];
  const result = (text: string) =>
    JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: text,
      stop_reason: 'end_turn',
      usage: { input_tokens: 3, output_tokens: 4 },
    });

  it('tool calls streamed in an abandoned message are taken back and never become a tool step', () => {
    const p = createClaudeParser();
    const events = [
      start('msg_1'),
      line({
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'mcp__olp__get_weather' },
      }),
      line({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"ci' } }),
      // 2.1.332 closes the broken message itself, without a message_delta.
      line({ type: 'content_block_stop', index: 0 }),
      line({ type: 'message_stop' }),
    ].flatMap((l) => p.push(l));
    assert.equal(p.toolStep, undefined, 'a broken message is no tool step');
    events.push(
      ...p.push(
        JSON.stringify({
          type: 'system',
          subtype: 'api_retry',
          attempt: 1,
          max_retries: 10,
          error_status: null,
          error: 'unknown',
        }),
      ),
    );
    events.push(
      ...[
        start('msg_2'),
        line({
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: 'toolu_2', name: 'mcp__olp__get_weather' },
        }),
        line({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: '{"city":"Oslo"}' },
        }),
        line({ type: 'content_block_stop', index: 0 }),
        ...end('tool_use'),
      ].flatMap((l) => p.push(l)),
    );
    assert.deepEqual(
      events.find((e) => e.type === 'abandoned'),
      { type: 'abandoned', text: '', events: 2 },
    );
    assert.deepEqual((p.toolStep as { calls: unknown[] } | undefined)?.calls, [
      { id: 'toolu_2', name: 'get_weather', arguments: '{"city":"Oslo"}' },
    ]);
    assert.deepEqual(kept(events).out, [
      { type: 'tool_call', index: 0, id: 'toolu_2', name: 'get_weather' },
      { type: 'tool_args', index: 0, text: '{"city":"Oslo"}' },
    ]);
  });

  it('a finished message is never taken back; a new message_start after an unfinished one is', () => {
    const p = createClaudeParser();
    const events = [
      start('msg_1'),
      delta('Hello'),
      ...end('end_turn'),
      start('msg_2'),
      delta('part'),
      start('msg_3'),
      delta('whole'),
      ...end('end_turn'),
      result('whole'),
    ].flatMap((l) => p.push(l));
    assert.deepEqual(
      events.filter((e) => e.type === 'abandoned'),
      [{ type: 'abandoned', text: 'part', events: 1 }],
    );
    assert.equal(kept(events).text, 'Hellowhole');
  });

  it('an abandoned message before a non-streamed retry whose text is the result: the result text is the reply', () => {
    const p = createClaudeParser();
    const events = [
      start('msg_1'),
      delta('partial reply'),
      JSON.stringify({
        type: 'assistant',
        message: { id: 'msg_2', model: 'claude-sonnet-5', content: [{ type: 'text', text: 'the real answer' }] },
        parent_tool_use_id: null,
      }),
      result('the real answer'),
    ].flatMap((l) => p.push(l));
    assert.equal(kept(events).text, 'the real answer');
  });

  it('structured output: text held back in an abandoned message is dropped too', () => {
    const p = createClaudeParser();
    p.push(JSON.stringify({ type: 'system', subtype: 'init', session_id: 's', tools: ['StructuredOutput'] }));
    const events = [
      start('msg_1'),
      delta('Sure, here'),
      start('msg_2'),
      delta('Plain answer'),
      ...end('end_turn'),
      result('Plain answer'),
    ].flatMap((l) => p.push(l));
    assert.equal(kept(events).text, 'Plain answer');
    assert.equal(
      events.some((e) => e.type === 'abandoned'),
      false,
      'nothing held back was ever emitted',
    );
  });
});

describe('thinking (hand-written after the API stream events: thinking_delta, signature_delta)', () => {
  // test/fixtures/claude-stream-thinking.jsonl: the captured 2.1.197 text reply with a thinking block
  // first, its deltas, its signature and its `assistant` line as the CLI writes one per block.
  const lines = readFileSync(join(ROOT, 'test/fixtures/claude-stream-thinking.jsonl'), 'utf8').split('\n');
  const signature = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds';

  it('streamed: thinking events, then the signature, then the text; the assistant lines add nothing', () => {
    const p = createClaudeParser();
    const events = lines.flatMap((l) => p.push(l));
    assert.deepEqual(
      events.filter((e) => e.type !== 'session'),
      [
        { type: 'thinking', text: 'The user says hello.' },
        { type: 'thinking', text: ' A short greeting back.' },
        { type: 'thinking', text: '', signature },
        { type: 'text', text: 'Hello' },
        { type: 'text', text: ' from mock.' },
      ],
    );
    const o = p.finish(exit());
    assert.equal(o.ok, true);
  });

  it('without partial messages: the assistant line thinking block, whole with its signature', () => {
    const p = createClaudeParser();
    const events = lines.filter((l) => !l.includes('"stream_event"')).flatMap((l) => p.push(l));
    assert.deepEqual(
      events.filter((e) => e.type !== 'session'),
      [
        { type: 'thinking', text: 'The user says hello. A short greeting back.', signature },
        { type: 'text', text: 'Hello from mock.' },
      ],
    );
  });

  it("an abandoned message's thinking is not among what it takes back", () => {
    const p = createClaudeParser();
    const ev = (e: object) => JSON.stringify({ type: 'stream_event', event: e, parent_tool_use_id: null });
    const start = (id: string) => ev({ type: 'message_start', message: { id, usage: {} } });
    const think = ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } });
    const text = ev({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hi' } });
    const events = [start('msg_1'), think, text, start('msg_2')].flatMap((l) => p.push(l));
    assert.deepEqual(events.at(-1), { type: 'abandoned', text: 'Hi', events: 1 });
  });
});
