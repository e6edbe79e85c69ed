// GET /metrics: off by default, behind an owner key, or open; the Prometheus text format with the
// requests, tokens, latencies, queue, CLIs and plan windows.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import request from 'supertest';
import { startTestDaemon } from '../support/daemon.js';

/** A strict reading of the text exposition format: HELP/TYPE comments, then `name{labels} value` samples. */
function parseExposition(text: string): {
  types: Map<string, string>;
  samples: { name: string; labels: Record<string, string>; value: number }[];
} {
  const types = new Map<string, string>();
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .+$/.test(line)) continue;
    const m =
      /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*)\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$/.exec(
        line,
      );
    assert.ok(m, `not an exposition line: ${line}`);
    const labels = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]),
    );
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { types, samples };
}

describe('GET /metrics', () => {
  it('is not served by default', async () => {
    const t = await startTestDaemon();
    try {
      assert.equal((await request(t.url).get('/metrics').set('authorization', `Bearer ${t.token}`)).status, 404);
    } finally {
      await t.close();
    }
  });

  it('owner mode: owner keys only; the exposition counts requests and tokens by key and model, and reads the queue and CLIs', async () => {
    const t = await startTestDaemon({
      config: { metrics: 'owner' },
      claudeEnv: { FAKE_CLAUDE_PLAN: JSON.stringify({ status: 'allowed', utilization: 0.42, resetsIn: 3600 }) },
    });
    try {
      const kid = t.daemon.store.keys.add('kid', 'member').token;
      for (const token of [t.token, kid, kid]) {
        const r = await request(t.url)
          .post('/v1/chat/completions')
          .set('authorization', `Bearer ${token}`)
          .send({ model: 'sonnet', messages: [{ role: 'user', content: 'count me' }] });
        assert.equal(r.status, 200);
      }
      await new Promise((r) => setTimeout(r, 50));
      assert.equal((await request(t.url).get('/metrics')).status, 401);
      assert.equal((await request(t.url).get('/metrics').set('authorization', `Bearer ${kid}`)).status, 403);
      const res = await request(t.url).get('/metrics').set('authorization', `Bearer ${t.token}`);
      assert.equal(res.status, 200);
      assert.match(res.headers['content-type'] ?? '', /^text\/plain; version=0\.0\.4/);
      const { types, samples } = parseExposition(res.text);
      const value = (name: string, labels: Record<string, string>) =>
        samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
      assert.equal(types.get('olp_requests_total'), 'counter');
      assert.equal(
        value('olp_requests_total', { key: 'kid', model: 'sonnet', backend: 'claude', status: '200', outcome: 'ok' }),
        2,
      );
      assert.equal(value('olp_requests_total', { key: 'tester', model: 'sonnet', status: '200' }), 1);
      assert.ok((value('olp_tokens_total', { key: 'kid', model: 'sonnet', kind: 'prompt' }) ?? 0) > 0);
      assert.equal(types.get('olp_request_duration_seconds'), 'histogram');
      assert.equal(value('olp_request_duration_seconds_count', { backend: 'claude', outcome: 'ok' }), 3);
      assert.equal(value('olp_time_to_first_token_seconds_count', { backend: 'claude' }), 3);
      assert.equal(value('olp_queue_length', {}), 0);
      assert.equal(value('olp_cli_processes', {}), 0);
      assert.equal(value('olp_plan_utilization', { backend: 'claude', window: 'five_hour' }), 0.42);
      assert.equal(value('olp_plan_rejected', { backend: 'claude' }), 0);
      assert.ok(!res.text.includes(t.token) && !res.text.includes('count me'), 'no tokens or prompts');
    } finally {
      await t.close();
    }
  });

  it("labels only the model table's ids: 50 invented pass-through ids share the label 'other'", async () => {
    const t = await startTestDaemon({ config: { metrics: 'open' } });
    try {
      for (let i = 0; i < 50; i++) {
        const r = await request(t.url)
          .post('/v1/chat/completions')
          .set('authorization', `Bearer ${t.token}`)
          .send({ model: `claude-made-up-${i}`, messages: [{ role: 'user', content: 'hi' }] });
        assert.equal(r.status, 200);
      }
      // A table id keeps its own label; an id no CLI takes is '(unresolved)'.
      assert.equal(
        (
          await request(t.url)
            .post('/v1/chat/completions')
            .set('authorization', `Bearer ${t.token}`)
            .send({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] })
        ).status,
        200,
      );
      assert.equal(
        (
          await request(t.url)
            .post('/v1/chat/completions')
            .set('authorization', `Bearer ${t.token}`)
            .send({ model: 'nobody-routes-this', messages: [{ role: 'user', content: 'hi' }] })
        ).status,
        404,
      );
      await new Promise((r) => setTimeout(r, 50));
      const { samples } = parseExposition((await request(t.url).get('/metrics')).text);
      const series = samples.filter((s) => s.name === 'olp_requests_total' || s.name === 'olp_tokens_total');
      assert.deepEqual([...new Set(series.map((s) => s.labels.model))].sort(), ['(unresolved)', 'other', 'sonnet']);
      // requests: other, sonnet, (unresolved); tokens: 3 kinds each for other and sonnet.
      assert.equal(series.length, 9, series.map((s) => JSON.stringify(s.labels)).join('\n'));
      assert.equal(samples.find((s) => s.name === 'olp_requests_total' && s.labels.model === 'other')?.value, 50);
      assert.ok(!series.some((s) => s.labels.model?.startsWith('claude-made-up')));
    } finally {
      await t.close();
    }
  });

  it('open mode needs no key (for a trusted scrape on loopback)', async () => {
    const t = await startTestDaemon({ config: { metrics: 'open' } });
    try {
      const res = await request(t.url).get('/metrics');
      assert.equal(res.status, 200);
      assert.ok(parseExposition(res.text).types.has('olp_requests_total'));
    } finally {
      await t.close();
    }
  });
});
