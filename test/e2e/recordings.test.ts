// Record real (fake-CLI) traffic through olp, then replay it on a server with no CLI at all.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createRecording, parseRecording } from '../../src/record/index.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { OLP_BIN } from '../support/paths.js';

const REQUESTS = [
  {
    model: 'sonnet',
    stream: true,
    stream_options: { include_usage: true },
    messages: [
      { role: 'system', content: 'Be kind.' },
      { role: 'user', content: 'first recorded question' },
    ],
  },
  { model: 'sonnet', messages: [{ role: 'user', content: 'second recorded question' }] },
  { model: 'codex', stream: true, messages: [{ role: 'user', content: 'a codex question' }] },
  { model: 'sonnet', messages: [{ role: 'user', content: '[[fake:not-logged-in]]' }] },
];

/** The SSE or JSON payloads with the per-response ids and timestamps taken out. */
async function payloads(t: TestDaemon): Promise<string[]> {
  const out: string[] = [];
  for (const body of REQUESTS) {
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = (await res.text())
      .replace(/"id":"chatcmpl-[^"]+"/g, '"id":"X"')
      .replace(/"created":\d+/g, '"created":0');
    out.push(`${res.status} ${text}`);
  }
  return out;
}

describe('record and replay', () => {
  it('a recording made through olp replays the same answers with no CLI installed and no login', async () => {
    // Record: sessions off so both runs make the same calls.
    const rec = await startTestDaemon({ config: { sessions: false } });
    const base = rec.base;
    let recorded: string[];
    try {
      createRecording(rec.stateDir, 'session1', '0.1.0');
      await rec.close(true);
      const recording = await startTestDaemon({
        base,
        config: { sessions: false, recordMode: 'record', recordFile: 'session1' },
      });
      recording.token = rec.token;
      recorded = await payloads(recording);
      // Concurrent requests record whole lines, never interleaved.
      await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          fetch(`${recording.baseURL}/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${rec.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: `concurrent ${i}` }] }),
          }).then((r) => r.text()),
        ),
      );
      await recording.close(true);
      const text = readFileSync(`${rec.stateDir}/recordings/session1.jsonl`, 'utf8');
      const parsed = parseRecording(text);
      assert.equal(parsed.calls.length, 10);
      for (const c of parsed.calls)
        assert.ok(!JSON.stringify(c.start).includes('recorded question'), 'prompts are stored only as hashes');
      assert.ok(!text.includes(rec.token));

      // Replay with no CLI anywhere: bins point nowhere and PATH has none.
      const replay = await startTestDaemon({
        base,
        config: {
          sessions: false,
          recordMode: 'replay',
          recordFile: 'session1',
          claudeBin: '/nonexistent/claude',
          codexBin: '/nonexistent/codex',
        },
        hostEnv: { PATH: '/nonexistent' },
      });
      replay.token = rec.token;
      try {
        const replayed = await payloads(replay);
        assert.deepEqual(replayed, recorded);
        assert.match(recorded[0]!, /^200 data: /);
        assert.match(recorded[3]!, /^503 .*backend_not_logged_in/);
        const models = (await (
          await fetch(`${replay.baseURL}/models`, { headers: { authorization: `Bearer ${rec.token}` } })
        ).json()) as { data: { id: string }[] };
        assert.ok(models.data.some((m) => m.id === 'sonnet') && models.data.some((m) => m.id === 'codex'));
        const miss = await fetch(`${replay.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${rec.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'never recorded' }] }),
        });
        const err = (await miss.json()) as { error: { code: string; message: string } };
        assert.equal(miss.status, 503);
        assert.equal(err.error.code, 'replay_no_match');
        assert.match(err.error.message, /closest recorded call is #\d+ \(backend claude, model sonnet/);
        assert.equal(replay.daemon.children, 0);
      } finally {
        await replay.close();
      }
    } finally {
      await rec.close().catch(() => undefined);
    }
  });
});

describe('olp serve --record-mode record on a fresh state dir', () => {
  it('makes recordings/ (0700) and the recording (0600, with its header), as olp recordings record does, then records into it', async () => {
    const t = await startTestDaemon({ config: { sessions: false, recordMode: 'record', recordFile: 'fresh' } });
    try {
      assert.equal(statSync(join(t.stateDir, 'recordings')).mode & 0o777, 0o700);
      const file = join(t.stateDir, 'recordings', 'fresh.jsonl');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const res = await fetch(`${t.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(res.status, 200);
      await t.close(true);
      assert.equal(parseRecording(readFileSync(file, 'utf8')).calls.length, 1);
    } finally {
      await t.close();
    }
  });
});

describe('olp recordings', () => {
  it('record pre-creates the file then switches config; replay validates first; delete needs confirmation', async () => {
    const t = await startTestDaemon();
    try {
      const olp = (...args: string[]) =>
        spawnSync(process.execPath, [OLP_BIN, 'recordings', ...args, '--state-dir', t.stateDir], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
        });
      const rec = olp('record', '--name', 'demo1');
      assert.equal(rec.status, 0, rec.stderr);
      const cfg = JSON.parse(readFileSync(`${t.stateDir}/config.json`, 'utf8')) as Record<string, unknown>;
      assert.deepEqual([cfg.recordMode, cfg.recordFile], ['record', 'demo1']);
      assert.match(olp('status').stdout, /mode: record/);
      const list = JSON.parse(olp('list', '--json').stdout) as { id: string; calls: number; valid: boolean }[];
      assert.deepEqual(
        list.map((r) => [r.id, r.calls, r.valid]),
        [['demo1', 0, true]],
      );
      assert.equal(olp('replay', 'nope').status, 1, 'an unknown recording is refused before the config changes');
      assert.equal(
        (JSON.parse(readFileSync(`${t.stateDir}/config.json`, 'utf8')) as Record<string, unknown>).recordMode,
        'record',
      );
      assert.equal(olp('replay', 'demo1').status, 0);
      assert.equal(olp('off').status, 0);
      assert.equal(
        (JSON.parse(readFileSync(`${t.stateDir}/config.json`, 'utf8')) as Record<string, unknown>).recordMode,
        'off',
      );
      assert.match(olp('show', 'demo1').stdout, /format 1, olp 0\.1\.0/);
      const refused = olp('delete', 'demo1');
      assert.equal(refused.status, 2);
      assert.match(refused.stderr, /--yes/);
      assert.equal(olp('delete', 'demo1', '--yes').status, 0);
      assert.equal(olp('delete', '../etc', '--yes').status, 1);
      assert.equal(olp('bogus').status, 2);
    } finally {
      await t.close();
    }
  });
});

describe('npm run demo', () => {
  it('replays the shipped recording to an openai-client script with no CLI on PATH', () => {
    const r = spawnSync(process.execPath, [`${OLP_BIN.replace(/src\/cli\/main\.js$/, '')}scripts/demo.js`], {
      encoding: 'utf8',
      env: { PATH: '/nonexistent', HOME: '/nonexistent' },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /no CLI, no login/);
    assert.match(r.stdout, /Hello from fake claude\. You said: Say hello/);
    assert.match(r.stdout, /usage: \d+ prompt \(\d+ cached\) \+ \d+ completion tokens/);
  });
});
