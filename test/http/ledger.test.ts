// The usage ledger: one tagged row per request whatever its outcome, equal to what the client got,
// reported by `olp usage`, exported for backfill tools, and intact after a crash mid-write.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { openStore, type LedgerRecord } from '../../src/store/index.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { OLP_BIN, ROOT } from '../support/paths.js';

let t: TestDaemon;
let client: OpenAI;
before(async () => {
  t = await startTestDaemon({ config: { idleTimeout: 1 } });
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => t.close());

/** The ledger row of a request, once the daemon has written it (after the response closed). */
async function row(requestId: string | null | undefined): Promise<LedgerRecord> {
  assert.ok(requestId, 'the response carries x-request-id');
  for (let i = 0; i < 200; i++) {
    const r = t.daemon.store.usage.get(requestId);
    if (r) return r;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`no ledger row for ${requestId}`);
}

const post = (body: unknown, token = t.token) =>
  fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('one row per request', () => {
  it('ok: the response usage equals the row, and the row carries both backfill markers and the native session id', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'sonnet', messages: [{ role: 'user', content: 'ledger me' }] })
      .withResponse();
    const r = await row(response.headers.get('x-request-id'));
    assert.deepEqual(
      {
        prompt: r.usage.prompt_tokens,
        completion: r.usage.completion_tokens,
        total: r.usage.total_tokens,
        cached: r.usage.cached_tokens,
      },
      {
        prompt: data.usage!.prompt_tokens,
        completion: data.usage!.completion_tokens,
        total: data.usage!.total_tokens,
        cached: data.usage!.prompt_tokens_details!.cached_tokens,
      },
    );
    assert.deepEqual([r.api, r.provider, r.client_name, r.schema_version], ['cli', 'claude-cli', 'olp', 5]);
    assert.match(r.session_id ?? '', /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      [r.outcome, r.http_status, r.requested_model, r.served_model, r.key_name, r.session_mode, r.run_mode],
      ['ok', 200, 'sonnet', 'sonnet', 'tester', 'fresh', 'cold'],
    );
    // The fake reports input = ceil(bytes/4), cache creation 3, cache read 5: raw kept as reported.
    assert.equal(r.usage.raw?.cache_creation_input_tokens, 3);
    assert.equal(r.usage.raw?.cache_read_input_tokens, 5);
    assert.equal(r.usage.prompt_tokens, r.usage.raw!.input_tokens! + 3 + 5);
    assert.ok(r.duration_ms !== null && r.ttft_ms !== null && r.queue_ms !== null);
    assert.equal(typeof r.cost_usd, 'number');
    assert.equal(r.usage.partial, false);
  });

  it('streaming: the usage chunk equals the row', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({
        model: 'codex',
        messages: [{ role: 'user', content: 'stream ledger' }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) usage = c.usage ?? usage;
    const r = await row(response.headers.get('x-request-id'));
    assert.deepEqual(
      [r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.cached_tokens, r.usage.reasoning_tokens],
      [
        usage!.prompt_tokens,
        usage!.completion_tokens,
        usage!.prompt_tokens_details!.cached_tokens,
        usage!.completion_tokens_details!.reasoning_tokens,
      ],
    );
    assert.deepEqual([r.api, r.provider], ['cli', 'codex']);
    assert.ok(r.usage.raw && 'cached_input_tokens' in r.usage.raw);
  });

  it('error, timeout, client abort and rejections each leave exactly one row with the right outcome; a bad key leaves none', async () => {
    const cases: [string, () => Promise<Response>, string, number, string | null][] = [
      [
        'error',
        () => post({ model: 'sonnet', messages: [{ role: 'user', content: '[[fake:exit-nonzero]]' }] }),
        'error',
        502,
        'backend_error',
      ],
      [
        'timeout',
        () => post({ model: 'sonnet', messages: [{ role: 'user', content: '[[fake:hang]]' }] }),
        'timeout',
        504,
        'backend_timeout',
      ],
      ['validation', () => post({ model: 'sonnet', messages: [] }), 'rejected', 400, 'invalid_request'],
      [
        'unknown model',
        () => post({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
        'rejected',
        404,
        'model_not_found',
      ],
    ];
    for (const [name, send, outcome, status, code] of cases) {
      const res = await send();
      await res.text();
      const r = await row(res.headers.get('x-request-id'));
      assert.deepEqual([r.outcome, r.http_status, r.error_code], [outcome, status, code], name);
      if (outcome === 'rejected')
        assert.deepEqual([r.api, r.provider, r.backend], [null, null, null], `${name}: no CLI turn, no CLI tags`);
      else assert.equal(r.api, 'cli');
    }
    // Without a valid key there is nobody to bill: no row at all.
    const unauthenticated = await post({ model: 'sonnet', messages: [{ role: 'user', content: 'x' }] }, 'olpk_wrong');
    assert.equal(unauthenticated.status, 401);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(t.daemon.store.usage.get(unauthenticated.headers.get('x-request-id')!), undefined);
    // A client that leaves mid-stream.
    const controller = new AbortController();
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sonnet',
        stream: true,
        messages: [
          { role: 'system', content: '[[fake:slow]]' },
          { role: 'user', content: 'abort me please, I am long enough' },
        ],
      }),
    });
    await res.body!.getReader().read();
    controller.abort();
    const r = await row(res.headers.get('x-request-id'));
    assert.deepEqual([r.outcome, r.http_status], ['client_aborted', 499]);
    const ids = [...t.daemon.store.usage.export({ scope: { all: true } })].map((x) => x.request_id);
    assert.equal(new Set(ids).size, ids.length, 'never two rows for one request');
  });
});

describe('olp usage', () => {
  it('groups by key, day and model; --json for scripts; export round-trips with the tags', () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [OLP_BIN, 'usage', ...args, '--state-dir', t.stateDir], { encoding: 'utf8' });
    const byKey = run();
    assert.equal(byKey.status, 0, byKey.stderr);
    assert.match(byKey.stdout, /KEY\s+REQUESTS\s+OK\s+ERRORS\s+PROMPT\s+CACHED\s+COMPLETION\s+CACHE HIT\s+COST USD/);
    assert.match(byKey.stdout, /tester\s+\d+\s+\d+\s+\d+/);
    const byModel = JSON.parse(run('--by', 'model', '--json').stdout) as {
      by: string;
      groups: { group: string; requests: number; cacheHitShare: number | null }[];
    };
    assert.equal(byModel.by, 'model');
    assert.ok(byModel.groups.some((g) => g.group === 'sonnet') && byModel.groups.some((g) => g.group === 'codex'));
    const byDay = JSON.parse(run('--by', 'day', '--json', '--since', '1d').stdout) as { groups: { group: string }[] };
    assert.deepEqual(
      byDay.groups.map((g) => g.group),
      [new Date().toISOString().slice(0, 10)],
    );
    assert.match(run('--since', '2001-01-01', '--until', '2001-01-02').stdout, /no usage recorded/);
    assert.equal(run('--by', 'colour').status, 2);

    const exported = run('export', '--format', 'jsonl');
    assert.equal(exported.status, 0, exported.stderr);
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as LedgerRecord);
    assert.equal(lines.length, [...t.daemon.store.usage.export({ scope: { all: true } })].length);
    for (const l of lines) {
      assert.equal(l.schema_version, 5);
      assert.equal(l.client_name, 'olp');
      if (l.backend)
        assert.ok(l.api === 'cli' && (l.provider === 'claude-cli' || l.provider === 'codex'), JSON.stringify(l));
    }
  });

  it('a member-scoped query sees only that key’s rows', () => {
    const other = t.daemon.store.keys.add('someone-else').key;
    const mine = [...t.daemon.store.usage.export({ scope: { keyId: other.id } })];
    assert.equal(mine.length, 0);
    assert.ok([...t.daemon.store.usage.export({ scope: { all: true } })].length > 0);
  });
});

describe('crash safety and retention', () => {
  it('a SIGKILL while rows are being written leaves a sound store and no partial row', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'olp-crash-'));
    const child = spawn(process.execPath, [join(ROOT, 'test/fixtures/ledger-writer.mjs'), dir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let committed = 0;
    await new Promise<void>((resolve) => {
      createInterface({ input: child.stdout! }).on('line', (l) => {
        committed = Number(l);
        if (committed === 500) {
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    await new Promise((r) => child.on('exit', r));
    const store = openStore(dir);
    try {
      assert.equal(store.check(), 'ok');
      const rows = [...store.usage.export({ scope: { all: true } })];
      assert.ok(
        rows.length >= committed && rows.length <= committed + 1,
        `${rows.length} rows after ${committed} reported commits`,
      );
      for (const r of rows) assert.ok(r.request_id && r.usage.prompt_tokens === 10 && r.api === 'cli');
    } finally {
      store.close();
    }
  });

  it('prune deletes rows older than the cutoff and keeps the rest', () => {
    const dir = mkdtempSync(join(tmpdir(), 'olp-prune-'));
    const store = openStore(dir);
    try {
      const base = {
        keyId: null,
        keyName: null,
        backend: null,
        model: null,
        servedModel: null,
        outcome: 'rejected',
        errorCode: 'invalid_request',
        status: 400,
        queueMs: null,
        ttftMs: null,
        durationMs: 1,
        promptTokens: 0,
        completionTokens: 0,
        cachedTokens: 0,
        reasoningTokens: 0,
        rawUsage: null,
        partial: false,
        costUsd: null,
        sessionId: null,
        sessionMode: null,
        rotationReason: null,
      };
      store.usage.record({ ...base, requestId: 'old', ts: Date.now() - 40 * 86400_000 });
      store.usage.record({ ...base, requestId: 'new', ts: Date.now() });
      assert.equal(store.usage.prune(Date.now() - 30 * 86400_000), 1);
      assert.deepEqual(
        [...store.usage.export({ scope: { all: true } })].map((r) => r.request_id),
        ['new'],
      );
    } finally {
      store.close();
    }
  });
});
