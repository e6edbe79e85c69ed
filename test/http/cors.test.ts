// Browser front ends on another origin: preflights without a key, headers on real responses,
// and nothing at all unless the operator lists the origin. On a scripted conversation: no CLI runs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import request from 'supertest';
import { parseConfig } from '../../src/config/index.js';
import { createScriptedApp } from '../support/scripted.js';

const preflight = (app: Parameters<typeof request>[0], origin: string) =>
  request(app)
    .options('/v1/chat/completions')
    .set('origin', origin)
    .set('access-control-request-method', 'POST')
    .set('access-control-request-headers', 'authorization, content-type, x-stainless-os');

describe('CORS', () => {
  it('is off by default: a preflight gets no Access-Control headers', async () => {
    const t = createScriptedApp();
    try {
      const res = await preflight(t.app, 'http://localhost:3000');
      assert.equal(res.headers['access-control-allow-origin'], undefined);
      assert.notEqual(res.status, 204);
    } finally {
      t.close();
    }
  });

  it('answers an allowed origin: preflight without a key, headers on responses and errors', async () => {
    const t = createScriptedApp({ config: { corsOrigins: ['http://localhost:3000', 'http://192.168.1.20:8080'] } });
    try {
      const pre = await preflight(t.app, 'http://localhost:3000');
      assert.equal(pre.status, 204);
      assert.equal(pre.headers['access-control-allow-origin'], 'http://localhost:3000');
      assert.match(pre.headers['access-control-allow-methods'] ?? '', /POST/);
      assert.equal(pre.headers['access-control-allow-headers'], 'authorization, content-type, x-stainless-os');
      assert.match(pre.headers.vary ?? '', /Origin/);

      const ok = await request(t.app)
        .post('/v1/chat/completions')
        .set('origin', 'http://localhost:3000')
        .set('authorization', `Bearer ${t.token}`)
        .send({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['access-control-allow-origin'], 'http://localhost:3000');
      assert.match(ok.headers['access-control-expose-headers'] ?? '', /x-request-id/);

      const denied = await request(t.app).post('/v1/chat/completions').set('origin', 'http://localhost:3000').send({});
      assert.equal(denied.status, 401);
      assert.equal(
        denied.headers['access-control-allow-origin'],
        'http://localhost:3000',
        'the browser can read the error',
      );

      const other = await preflight(t.app, 'http://evil.example');
      assert.equal(other.headers['access-control-allow-origin'], undefined);
    } finally {
      t.close();
    }
  });

  it('* allows any origin', async () => {
    const t = createScriptedApp({ config: { corsOrigins: ['*'] } });
    try {
      const pre = await preflight(t.app, 'http://anything.lan:5173');
      assert.equal(pre.status, 204);
      assert.equal(pre.headers['access-control-allow-origin'], '*');
    } finally {
      t.close();
    }
  });

  it('refuses a setting that is not an origin', () => {
    assert.throws(() => parseConfig({ readFile: false, env: { OLP_CORS_ORIGINS: 'localhost:3000' } }), /cors/i);
    assert.deepEqual(
      parseConfig({ readFile: false, env: { OLP_CORS_ORIGINS: 'http://a:1, http://b:2' } }).corsOrigins,
      ['http://a:1', 'http://b:2'],
    );
  });
});

describe('list settings whose values may hold commas', () => {
  it('--codex-config keeps a TOML inline table whole', () => {
    const table =
      'model_providers.mock={name="mock",base_url="http://127.0.0.1:9/v1",env_key="CODEX_API_KEY",wire_api="responses"}';
    const fromFlags = parseConfig({
      readFile: false,
      env: {},
      flags: { codexConfig: [table, 'model_provider="mock"'] },
    });
    assert.deepEqual(fromFlags.codexConfig, [table, 'model_provider="mock"']);
    const fromEnv = parseConfig({ readFile: false, env: { OLP_CODEX_CONFIG: table } });
    assert.deepEqual(fromEnv.codexConfig, [table]);
    const several = parseConfig({
      readFile: false,
      env: { OLP_CODEX_CONFIG: JSON.stringify([table, 'model_provider="mock"']) },
    });
    assert.deepEqual(several.codexConfig, [table, 'model_provider="mock"']);
  });
});
