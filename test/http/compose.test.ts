// composeDaemon without listening: what it opened, its close() lets go of, so that a test can
// compose a daemon, use it in-process, and leave nothing behind.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import request from 'supertest';
import { parseConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { composeDaemon } from '../../src/serve.js';
import { FAKE_CLAUDE, FAKE_CODEX } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-compose-'));
after(() => rmSync(base, { recursive: true, force: true }));
const overrides = { stateDir: join(base, 'state'), claudeBin: FAKE_CLAUDE, codexBin: FAKE_CODEX, logLevel: 'silent' };
const compose = () =>
  composeDaemon({
    config: parseConfig({ readFile: false, env: {}, overrides }),
    logger: createLogger('silent'),
    hostEnv: { PATH: process.env.PATH ?? '', HOME: join(base, 'home') },
  });

describe('composeDaemon', () => {
  it('serves in-process, and close() lets go of the store and the state dir at once', async () => {
    const first = compose();
    const { token } = first.store.keys.add('me', 'owner');
    const res = await request(first.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${token}`)
      .send({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.throws(() => compose(), /in use/, 'the state dir is held while composed');
    await first.close();
    await first.close();
    assert.throws(() => first.store.keys.activeCount(), /not open/);
    const second = compose();
    assert.equal(second.store.keys.activeCount(), 1, 'the same state, opened again');
    await second.close();
  });
});
