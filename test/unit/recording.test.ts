import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createClaudeParser } from '../../src/backends/index.js';
import { scrubToolData } from '../../src/record/scrub.js';
import { REFERENCE } from '../support/paths.js';
import {
  createRecording,
  loadRecording,
  managedPath,
  openAppender,
  parseRecording,
  recordingsDir,
  redact,
} from '../../src/record/index.js';

const H = '{"type":"header","format":1,"olp_version":"0.1.0","created":"2026-12-02T00:00:00Z"}';
const S = (i: number) =>
  `{"type":"call_start","index":${i},"backend":"claude","model":"sonnet","invocation":{"command":"claude","args":[]},"prompt_sha256":"ab"}`;
const E = (i: number) => `{"type":"event","index":${i},"offset_ms":1,"line":"{}"}`;
const END = (i: number) => `{"type":"call_end","index":${i},"exit_code":0,"signal":null,"duration_ms":2,"stderr":""}`;

describe('recording format', () => {
  it('accepts interleaved concurrent calls', () => {
    const r = parseRecording([H, S(0), S(1), E(1), E(0), END(1), E(0), END(0)].join('\n') + '\n');
    assert.deepEqual(
      r.calls.map((c) => c.events.length),
      [2, 1],
    );
  });
  const bad: [string, string[], RegExp][] = [
    ['duplicate header', [H, H], /line 2: a second header/],
    ['header not first', [S(0)], /line 1: the first row must be the header/],
    ['orphan event', [H, E(0)], /line 2: event for call 0, which has not started/],
    ['missing end', [H, S(0), E(0)], /call 0 never ended/],
    ['index gap', [H, S(0), END(0), S(2)], /line 4: call index 2 breaks the sequence \(expected 1\)/],
    ['event after end', [H, S(0), END(0), E(0)], /line 4: event for call 0 after its call_end/],
    ['ended twice', [H, S(0), END(0), END(0)], /line 4: call 0 ended twice/],
    ['unknown row', [H, '{"type":"mystery"}'], /line 2: unknown row type 'mystery'/],
    ['not JSON', [H, '{oops'], /line 2: not valid JSON/],
    [
      'other format',
      ['{"type":"header","format":2,"olp_version":"9","created":""}'],
      /line 1: format 2 is not supported/,
    ],
  ];
  for (const [name, lines, re] of bad) {
    it(`rejects: ${name}`, () => assert.throws(() => parseRecording(lines.join('\n')), re));
  }
});

describe('redaction', () => {
  const cases: [string, string, string][] = [
    ['bearer', 'Authorization: Bearer abc.def-123456', 'abc.def-123456'],
    ['basic', 'authorization: Basic dXNlcjpwYXNzd29yZA==', 'dXNlcjpwYXNzd29yZA=='],
    ['url userinfo', 'https://alice:s3cret@example.com/x', 's3cret'],
    ['query secret', 'https://x.test/v1?api_key=XYZ123&q=1', 'XYZ123'],
    ['anthropic key', 'key sk-ant-api03-abcdefghijklmnop', 'sk-ant-api03-abcdefghijklmnop'],
    ['openai key', 'sk-proj-ABCDEFGHIJKLMNOPQRSTUV', 'ABCDEFGHIJKLMNOPQRSTUV'],
    ['olp key', 'olpk_Zk3n2B9sldkfj2l3kj4lk5j6', 'olpk_Zk3n2B9sldkfj2l3kj4lk5j6'],
    ['github token', 'ghp_abcdefghijklmnopqrstuvwxyz0123', 'ghp_abcdefghijklmnopqrstuvwxyz0123'],
    ['aws key', 'AKIAABCDEFGHIJKLMNOP', 'AKIAABCDEFGHIJKLMNOP'],
    ['json secret field', '{"access_token":"tok-123","ok":1}', 'tok-123'],
    ['env assignment', 'ANTHROPIC_API_KEY=whatever-value', 'whatever-value'],
  ];
  for (const [name, text, secret] of cases) {
    it(`redacts ${name}`, () => {
      const out = redact(text);
      assert.ok(!out.includes(secret), out);
      assert.match(out, /\[REDACTED\]/);
    });
  }
  it('leaves ordinary text alone', () => {
    const line = '{"type":"stream_event","event":{"delta":{"type":"text_delta","text":"Hello there"}}}';
    assert.equal(redact(line), line);
  });
});

describe('recording files', () => {
  it('are 0600 in a 0700 directory; wrong modes, links and traversal are refused', () => {
    const state = mkdtempSync(join(tmpdir(), 'olp-rec-'));
    const file = createRecording(state, 'one', '0.1.0');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(recordingsDir(state)).mode & 0o777, 0o700);
    assert.equal(loadRecording(state, 'one').calls.length, 0);
    chmodSync(file, 0o644);
    assert.throws(() => loadRecording(state, 'one'), /mode 644; it must be 600/);
    chmodSync(file, 0o600);
    chmodSync(recordingsDir(state), 0o755);
    assert.throws(() => loadRecording(state, 'one'), /mode 755; it must be 700/);
    chmodSync(recordingsDir(state), 0o700);
    const outside = join(state, 'elsewhere.jsonl');
    writeFileSync(outside, `${H}\n`, { mode: 0o600 });
    symlinkSync(outside, join(recordingsDir(state), 'link.jsonl'));
    assert.ok(lstatSync(join(recordingsDir(state), 'link.jsonl')).isSymbolicLink());
    assert.throws(() => loadRecording(state, 'link'), /symbolic link/);
    for (const id of ['../x', 'a/b', '..', '.hidden'])
      assert.throws(() => managedPath(state, id), /not a valid recording id/);
    assert.throws(() => createRecording(state, 'one', '0.1.0'), /EEXIST/);
  });

  it('one writer at a time: a second appender on the same file is refused', () => {
    const state = mkdtempSync(join(tmpdir(), 'olp-rec-'));
    const file = createRecording(state, 'locked', '0.1.0');
    const a = openAppender(file);
    try {
      assert.throws(() => openAppender(file), /is being written by process/);
    } finally {
      a.close();
    }
    openAppender(file).close();
  });
});

describe('tool data in recordings', () => {
  const lines = readFileSync(join(REFERENCE, 'claude-2.1.197-stream-mcp-tools-parallel.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);

  it("keeps neither the model's tool arguments nor the client's results; a replay still shows the calls", () => {
    const scrubbed = lines.map(scrubToolData);
    const text = scrubbed.join('\n');
    for (const secret of ['"city', '\\"Par', '"text":"sunny in Paris"', '"text":"sunny in Tokyo"'])
      assert.ok(!text.includes(secret), `${secret} is gone`);
    // Lines without tool data are kept byte for byte.
    for (const [i, line] of lines.entries())
      if (!/tool_use|tool_result|input_json_delta/.test(line)) assert.equal(scrubbed[i], line);
    const parser = createClaudeParser();
    const events = scrubbed.flatMap((l) => parser.push(l));
    const calls = events.filter((e) => e.type === 'tool_call');
    assert.deepEqual(
      calls.map((c) => (c as { name: string }).name),
      ['get_weather', 'get_weather'],
    );
    const args = [0, 1].map((i) =>
      events
        .filter((e) => e.type === 'tool_args' && e.index === i)
        .map((e) => (e as { text: string }).text)
        .join(''),
    );
    assert.deepEqual(args, ['{}', '{}'], 'each call still has a JSON object of arguments');
  });

  it('takes codex tool items apart the same way and leaves garbage alone', () => {
    const item = JSON.stringify({
      type: 'item.completed',
      item: {
        id: 'item_5',
        type: 'mcp_tool_call',
        server: 'olp',
        tool: 'get_weather',
        arguments: { city: 'Oslo' },
        result: { content: [{ type: 'text', text: 'snow' }], structured_content: null },
        error: null,
        status: 'completed',
      },
    });
    const out = JSON.parse(scrubToolData(item)) as {
      item: { arguments: unknown; result: { content: { text: string }[] }; tool: string };
    };
    assert.deepEqual(out.item.arguments, {});
    assert.equal(out.item.result.content[0]!.text, '[tool result omitted]');
    assert.equal(out.item.tool, 'get_weather');
    assert.equal(scrubToolData('{"tool_use" not json'), '{"tool_use" not json');
  });
});
