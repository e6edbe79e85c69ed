// claude and codex side by side behind one endpoint: routing, codex failures, sessions, fallback, doctor.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { FAKE_CLAUDE, FAKE_CODEX, OLP_BIN } from '../support/paths.js';
import { readRecord, recordedPids, waitGone } from '../support/procs.js';

let t: TestDaemon;
let client: OpenAI;
before(async () => {
  t = await startTestDaemon({ config: { idleTimeout: 2, fallbacks: { sonnet: ['codex'], opus: ['codex'] } } });
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => t.close());

const ask = (model: string, content: string, system?: string) =>
  client.chat.completions.create({
    model,
    messages: [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user', content }],
  });

function newRuns(before: Set<number>) {
  return recordedPids(t.recordDir)
    .runs.filter((p) => !before.has(p))
    .map(
      (p) =>
        readRecord(t.recordDir, p) as ReturnType<typeof readRecord> & {
          backend?: string;
          developer?: string;
          env?: string[];
        },
    );
}

describe('codex through olp', () => {
  it('lists both CLIs’ models, owned_by naming the backend', async () => {
    const models = [];
    for await (const m of client.models.list()) models.push(m);
    assert.equal(models.find((m) => m.id === 'codex')?.owned_by, 'codex');
    assert.equal(models.find((m) => m.id === 'sonnet')?.owned_by, 'claude-cli');
  });

  it('a codex model answers, non-streaming and streaming, with usage; the system prompt travels in a file', async () => {
    const before = new Set(recordedPids(t.recordDir).runs);
    const res = await ask('codex', 'hello codex', 'SYSTEM-MARK-7');
    assert.equal(res.choices[0]?.message.content, 'Hello from fake codex. You said: hello codex');
    assert.equal(res.model, 'codex');
    assert.ok((res.usage?.prompt_tokens ?? 0) > 100);
    assert.equal(res.usage?.prompt_tokens_details?.cached_tokens, 20);
    const run = newRuns(before).find((r) => r.backend === 'codex')!;
    assert.equal(run.developer, 'SYSTEM-MARK-7');
    assert.ok(!run.argv.some((a) => a.includes('SYSTEM-MARK') || a.includes('hello codex')), 'no prompt text in argv');
    for (const f of ['--skip-git-repo-check', '--json', 'read-only']) assert.ok(run.argv.includes(f), f);
    assert.ok(!run.env?.includes('OPENAI_API_KEY') && !run.env?.includes('CODEX_API_KEY'));

    const stream = await client.chat.completions.create({
      model: 'gpt-6.2-sol',
      messages: [{ role: 'user', content: 'stream me' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      usage = c.usage ?? usage;
    }
    assert.equal(text, 'Hello from fake codex. You said: stream me');
    assert.ok(usage && usage.completion_tokens === 10);
  });

  it('an unknown model gets 404 listing valid ids of both backends', async () => {
    await assert.rejects(
      ask('no-such-model', 'x'),
      (err: unknown) => err instanceof OpenAI.NotFoundError && /sonnet/.test(err.message) && /codex/.test(err.message),
    );
  });

  const failures: [string, number, string][] = [
    ['not-logged-in', 503, 'backend_not_logged_in'],
    ['rate-limited', 429, 'backend_rate_limited'],
    ['overloaded', 503, 'backend_overloaded'],
    ['exit-early', 502, 'backend_error'],
    ['crash-mid-stream', 502, 'backend_error'],
    ['garbage', 502, 'backend_bad_output'],
    ['exit-nonzero', 502, 'backend_error'],
    ['input-too-large', 400, 'context_length_exceeded'],
    ['hang', 504, 'backend_timeout'],
  ];
  for (const [scenario, status, code] of failures) {
    it(`codex ${scenario} → ${status} ${code}`, async () => {
      const before = new Set(recordedPids(t.recordDir).runs);
      await assert.rejects(
        ask('codex', 'x', `[[fake:${scenario}]]`),
        (err: unknown) => err instanceof OpenAI.APIError && err.status === status && err.code === code,
      );
      assert.deepEqual(await waitGone(newRuns(before).map((r) => r.pid)), []);
    });
  }
  it('the not-logged-in message says to run codex login', async () => {
    await assert.rejects(ask('codex', 'x', '[[fake:not-logged-in]]'), /codex login/);
  });

  it('resumes codex threads and reports each turn’s own usage, not the thread’s running total', async () => {
    const m: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'thread turn one' }];
    const first = await client.chat.completions.create({ model: 'codex', messages: m });
    m.push(
      { role: 'assistant', content: first.choices[0]!.message.content! },
      { role: 'user', content: 'thread turn two' },
    );
    const before = new Set(recordedPids(t.recordDir).runs);
    const { data: second, response } = await client.chat.completions
      .create({ model: 'codex', messages: m })
      .withResponse();
    assert.equal(response.headers.get('x-olp-session-mode'), 'resumed');
    const run = newRuns(before)[0]!;
    assert.deepEqual([run.session, run.historyTurns, run.stdin], ['resume', 1, 'thread turn two']);
    assert.ok(run.argv.includes('resume'));
    // The fake's running totals grow each turn; olp reports only this turn's part.
    assert.equal(second.usage?.completion_tokens, 10);
    assert.equal(second.usage?.prompt_tokens_details?.cached_tokens, 20);
    assert.ok((second.usage?.prompt_tokens ?? 0) < (first.usage?.prompt_tokens ?? 0) + 50);
  });
});

describe('fallback', () => {
  it('a claude that is not logged in falls back to codex before any output; model and log name codex', async () => {
    const res = await ask('sonnet', 'fall back please', '[[fake-claude:not-logged-in]]');
    assert.equal(res.model, 'codex');
    assert.match(res.choices[0]!.message.content!, /fake codex/);
    assert.ok(t.logs.some((l) => l.event === 'fallback' && l.from === 'sonnet' && l.to === 'codex'));
    assert.ok(t.logs.some((l) => l.event === 'request' && l.servedModel === 'codex'));
  });

  it('streaming too: the chunks carry the model that served', async () => {
    const stream = await client.chat.completions.create({
      model: 'opus',
      messages: [
        { role: 'system', content: '[[fake-claude:rate-limited]]' },
        { role: 'user', content: 'x' },
      ],
      stream: true,
    });
    const models = new Set<string>();
    for await (const c of stream) models.add(c.model);
    assert.deepEqual([...models], ['codex']);
  });

  it('no fallback once output began: a crash mid-stream ends the stream with an error', async () => {
    const stream = await client.chat.completions.create({
      model: 'sonnet',
      messages: [
        { role: 'system', content: '[[fake-claude:crash-mid-stream]]' },
        { role: 'user', content: 'long enough for a few deltas to go out first' },
      ],
      stream: true,
    });
    const models = new Set<string>();
    await assert.rejects(async () => {
      for await (const c of stream) models.add(c.model);
    }, OpenAI.APIError);
    assert.deepEqual([...models], ['sonnet']);
  });

  it('failures that another model would not fix do not fall back', async () => {
    await assert.rejects(
      ask('sonnet', 'x', '[[fake-claude:exit-nonzero]]'),
      (err: unknown) => err instanceof OpenAI.APIError && err.status === 502,
    );
  });
});

describe('olp doctor', () => {
  const bin = mkdtempSync(join(tmpdir(), 'olp-doctor-'));
  const doctor = (path: string, extra: string[] = [], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [OLP_BIN, 'doctor', '--state-dir', join(bin, 'state'), '--port', '0', ...extra], {
      encoding: 'utf8',
      env: { PATH: path, HOME: bin, ...env },
    });
  const nodeDir = process.execPath.replace(/\/node$/, '');

  it('no CLI on PATH: exit 1, says what to install', () => {
    const r = doctor(`${nodeDir}:/usr/bin:/bin`);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /claude\s+not found/);
    assert.match(r.stdout, /npm install -g @anthropic-ai\/claude-code/);
    assert.match(r.stdout, /npm install -g @openai\/codex/);
    assert.match(r.stdout, /No backend can serve/);
  });

  it('one CLI, logged in: exit 0, with version and login', () => {
    const only = join(bin, 'one');
    spawnSync('mkdir', ['-p', only]);
    symlinkSync(FAKE_CLAUDE, join(only, 'claude'));
    const r = doctor(`${only}:${nodeDir}:/usr/bin:/bin`);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /claude\s+\S+\s+2\.1\.197 \(Claude Code\)\s+logged in/);
    assert.match(r.stdout, /codex\s+not found/);
    assert.match(r.stdout, /olp can serve: claude/);
  });

  it('both CLIs, one not logged in: exit 0, and the fix for the other', () => {
    const both = join(bin, 'both');
    spawnSync('mkdir', ['-p', both]);
    symlinkSync(FAKE_CLAUDE, join(both, 'claude'));
    symlinkSync(FAKE_CODEX, join(both, 'codex'));
    // The status commands get only the backend's allow-listed env: the fakes' switches go through OLP_*_ENV.
    const r = doctor(`${both}:${nodeDir}:/usr/bin:/bin`, [], {
      OLP_CODEX_ENV: JSON.stringify({ FAKE_CODEX_LOGGED_IN: '0' }),
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /codex\s+\S+\s+codex-cli 0\.171\.0\s+NOT logged in/);
    // The fix runs as printed: the binary olp resolved, by its full path.
    assert.ok(r.stdout.includes(`codex: ${join(both, 'codex')} login`), r.stdout);
    const none = doctor(`${both}:${nodeDir}:/usr/bin:/bin`, [], {
      OLP_CODEX_ENV: JSON.stringify({ FAKE_CODEX_LOGGED_IN: '0' }),
      OLP_CLAUDE_ENV: JSON.stringify({ FAKE_CLAUDE_LOGGED_IN: '0' }),
    });
    assert.equal(none.status, 1);
    assert.ok(none.stdout.includes(`claude: ${join(both, 'claude')} auth login`), none.stdout);
  });
});
