import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createCodexParser, toCodexUsage } from '../../src/backends/index.js';
import { subtractUsage } from '../../src/backends/codex/usage.js';
import { createAppServerParser } from '../../src/backends/codex/live.js';
import type { BackendEvent } from '../../src/backends/index.js';
import type { ExitInfo } from '../../src/process/index.js';
import { createLineSplitter } from '../../src/process/index.js';
import { REFERENCE } from '../support/paths.js';

const exit = (over: Partial<ExitInfo> = {}): ExitInfo => ({
  reason: 'exit',
  exitCode: 0,
  signal: null,
  stderr: '',
  pid: 1,
  durationMs: 10,
  ...over,
});

function run(file: string, size: number, ex: Partial<ExitInfo> = {}) {
  const bytes = readFileSync(join(REFERENCE, file));
  const splitter = createLineSplitter();
  const parser = createCodexParser();
  const events = [];
  for (let off = 0; off < bytes.length; off += size)
    for (const line of splitter.push(bytes.subarray(off, off + size))) events.push(...parser.push(line));
  for (const line of splitter.end()) events.push(...parser.push(line));
  return { events, outcome: parser.finish(exit(ex)) };
}

describe('codex exec --json parser on captured CLI output', () => {
  for (const size of [1, 13, 4096]) {
    it(`a successful turn, chunks of ${size} bytes: reasoning as thinking, text, thread id, usage`, () => {
      const { events, outcome } = run('codex-0.171.0-exec-json-text.jsonl', size);
      assert.deepEqual(events, [
        { type: 'session', sessionId: '01a23641-4807-7983-88df-5af0579c99c5' },
        { type: 'thinking', text: '**Greeting the user**' },
        { type: 'text', text: 'Hello from mock.' },
      ]);
      assert.equal(outcome.ok, true);
      // input_tokens already includes the cached part (ARCHITECTURE section 6).
      assert.deepEqual(
        [
          outcome.usage?.promptTokens,
          outcome.usage?.cachedTokens,
          outcome.usage?.completionTokens,
          outcome.usage?.reasoningTokens,
        ],
        [1200, 200, 12, 4],
      );
    });
  }

  it('HTTP 401 after retries → 503 backend_not_logged_in that says to run codex login', () => {
    const { outcome } = run('codex-0.171.0-exec-json-http401.jsonl', 100, { exitCode: 1 });
    assert.equal(outcome.ok, false);
    if (!outcome.ok) {
      assert.deepEqual([outcome.error.status, outcome.error.code], [503, 'backend_not_logged_in']);
      assert.match(outcome.error.message, /codex login/);
    }
  });

  it('a 500 "high demand" failure → retryable 503 overloaded', () => {
    const { outcome } = run('codex-0.171.0-exec-json-http500.jsonl', 100, { exitCode: 1 });
    assert.equal(outcome.ok, false);
    if (!outcome.ok)
      assert.deepEqual(
        [outcome.error.status, outcome.error.code, outcome.error.retryable],
        [503, 'backend_overloaded', true],
      );
  });

  it('retry notices alone are not fatal; a run killed while waiting for the network is a failure, not a success', () => {
    const { events, outcome } = run('codex-0.171.0-exec-json-no-network-300s.jsonl', 100, {
      exitCode: null,
      signal: 'SIGKILL',
    });
    assert.deepEqual(
      events.filter((e) => e.type === 'text'),
      [],
    );
    assert.equal(outcome.ok, false);
    // Every line after thread.started is a retry (Reconnecting…, the WebSocket fallback item): none is progress.
    const retries = events.filter((e) => e.type === 'retry');
    assert.equal(retries.length, 13);
    assert.match(
      retries.at(-1)!.type === 'retry' ? retries.at(-1)!.message : '',
      /^Reconnecting\.\.\. waiting for network/,
    );
  });

  it('stderr-only failures: input too large → 400, unknown thread → session_not_found', () => {
    const big = createCodexParser();
    big.push('{"type":"thread.started","thread_id":"t"}');
    const o1 = big.finish(
      exit({
        exitCode: 1,
        stderr:
          'Error: turn/start: turn/start failed: Input exceeds the maximum length of 1048576 characters. (code -32602)',
      }),
    );
    assert.equal(!o1.ok && o1.error.code, 'context_length_exceeded');
    const o2 = createCodexParser().finish(
      exit({
        exitCode: 1,
        stderr: 'Error: thread/resume: thread/resume failed: no rollout found for thread id abc (code -32600)',
      }),
    );
    assert.equal(!o2.ok && o2.error.code, 'session_not_found');
  });

  it('usage limits → 429 that says what to do', () => {
    const p = createCodexParser();
    p.push(`{"type":"turn.failed","error":{"message":"You've hit your usage limit. Try again in 2 hours."}}`);
    const o = p.finish(exit({ exitCode: 1 }));
    assert.equal(!o.ok && o.error.status, 429);
  });

  it('separate agent messages are joined by a blank line; a growing item.updated is sent as deltas', () => {
    const p = createCodexParser();
    const ev = [
      ...p.push('{"type":"item.updated","item":{"id":"a","type":"agent_message","text":"Hel"}}'),
      ...p.push('{"type":"item.updated","item":{"id":"a","type":"agent_message","text":"Hello"}}'),
      ...p.push('{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"Hello"}}'),
      ...p.push('{"type":"item.completed","item":{"id":"b","type":"agent_message","text":"Second"}}'),
    ];
    assert.deepEqual(
      ev.map((e) => (e as { text: string }).text),
      ['Hel', 'lo', '\n\nSecond'],
    );
  });
});

describe('codex usage on resumed threads', () => {
  it('reports the difference from the thread’s previous total, never the running total', () => {
    const second = {
      input_tokens: 2400,
      cached_input_tokens: 400,
      cache_write_input_tokens: 0,
      output_tokens: 24,
      reasoning_output_tokens: 8,
    };
    const first = {
      input_tokens: 1200,
      cached_input_tokens: 200,
      cache_write_input_tokens: 0,
      output_tokens: 12,
      reasoning_output_tokens: 4,
    };
    const u = toCodexUsage(subtractUsage(second, first));
    assert.deepEqual([u?.promptTokens, u?.cachedTokens, u?.completionTokens, u?.totalTokens], [1200, 200, 12, 1212]);
  });
});

/** What a consumer keeps of a turn's events: text and calls, an abandoned attempt's taken back. */
function kept(events: BackendEvent[]): string {
  const out: BackendEvent[] = [];
  for (const e of events) {
    if (e.type === 'abandoned') out.splice(out.length - e.events);
    else if (e.type === 'text' || e.type === 'tool_call' || e.type === 'tool_args') out.push(e);
  }
  return out.map((e) => (e.type === 'text' ? e.text : '')).join('');
}

describe('codex 0.171: the provider stream cut once, codex asks again (captured against the stand-in)', () => {
  const answer = 'responses stand-in heard: say something please';
  it('exec, cut mid-message: no message of the cut attempt was printed; nothing to take back', () => {
    const { events, outcome } = run('codex-0.171.0-exec-json-cut-mid-message-retried.jsonl', 50);
    assert.deepEqual(
      events.filter((e) => e.type === 'abandoned'),
      [],
    );
    assert.equal(kept(events), answer);
    assert.equal(outcome.ok, true);
  });

  it('exec, cut after the message was done: the printed message is taken back at the retry, no blank-line glue', () => {
    const { events, outcome } = run('codex-0.171.0-exec-json-cut-after-message-retried.jsonl', 50);
    assert.deepEqual(
      events.filter((e) => e.type === 'abandoned'),
      [{ type: 'abandoned', text: 'partial reply echo: abandoned attempt', events: 1 }],
    );
    assert.equal(kept(events), answer);
    assert.equal(outcome.ok, true);
  });

  for (const where of ['mid-message', 'after-message']) {
    it(`app-server, cut ${where}: the streamed part is taken back, the reply is the turn's message`, () => {
      const parser = createAppServerParser();
      const events = readFileSync(join(REFERENCE, `codex-0.171.0-app-server-cut-${where}-retried.jsonl`), 'utf8')
        .split('\n')
        .filter(Boolean)
        .flatMap((l) => parser.push(l));
      const gone = events.filter((e) => e.type === 'abandoned');
      assert.equal(gone.length, 1);
      assert.equal(
        (gone[0] as { text: string }).text,
        where === 'mid-message' ? 'partial repl' : 'partial reply echo: abandoned attempt',
      );
      assert.equal(kept(events), answer);
      assert.equal(parser.finish(exit()).ok, true);
    });
  }
});
