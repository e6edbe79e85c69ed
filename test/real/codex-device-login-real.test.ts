// The usage page's codex sign-in on the real `codex` binary (pinned devDependency, 0.171): olp's
// POST /olp/me/login/codex/device runs `codex login --device-auth` against a loopback stand-in of
// OpenAI's device-code endpoints (the test-only issuer argument), reads the code and link off what
// codex prints (in colour, on a pipe), and stores the login once the stand-in approves; a denial
// ends in device_auth_refused with codex's own line, and nothing is left.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { loginPaths } from '../../src/logins/index.js';
import { type CodexDeviceStandIn, startCodexDeviceStandIn } from '../support/codex-device-stand-in.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { REAL_CODEX } from '../support/paths.js';
import { waitFor } from '../support/wait.js';

const present = existsSync(REAL_CODEX);
let issuer: CodexDeviceStandIn;
let t: TestDaemon;
before(async () => {
  if (!present) return;
  issuer = await startCodexDeviceStandIn('WXYZ-9876');
  t = await startTestDaemon({
    config: { codexBin: REAL_CODEX },
    codexDeviceArgs: ['--experimental_issuer', issuer.url],
  });
});
after(async () => {
  await t?.close();
  await issuer?.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function settled(token: string) {
  let device: { state: string; error: { code: string; message: string } | null } | undefined;
  await waitFor(async () => {
    device = (await request(t.url).get('/olp/me/login/codex/device').set(bearer(token))).body.device;
    return device?.state !== 'waiting';
  });
  return device!;
}

describe('codex device sign-in through olp, real codex', {
  skip: !present && 'the real codex is not installed',
}, () => {
  it('shows the code and link codex printed, and stores the ChatGPT login once approved', async () => {
    const key = t.daemon.store.keys.add('mia', 'member').token;
    const res = await request(t.url).post('/olp/me/login/codex/device').set(bearer(key)).expect(202);
    assert.equal(res.body.device.state, 'waiting');
    assert.equal(res.body.device.code, 'WXYZ-9876');
    assert.equal(res.body.device.url, `${issuer.url}/codex/device`);
    assert.equal(Date.parse(res.body.device.expiresAt) - Date.parse(res.body.device.startedAt), 15 * 60_000);
    issuer.decide('approve');
    const device = await settled(key);
    assert.equal(device.state, 'connected', JSON.stringify(device));
    assert.equal(t.daemon.store.logins.get('mia')?.codex, 'chatgpt');
    assert.equal(t.daemon.store.keys.get('mia')?.login, 'mia');
    const p = loginPaths(t.stateDir, 'mia');
    assert.ok(existsSync(p.codexAuth));
    assert.ok(!existsSync(`${p.codexHome}.new`));
    assert.ok(issuer.calls.includes('POST /oauth/token'));
  });

  it("a denial ends in device_auth_refused with codex's line; no login is left", async () => {
    const fresh = await startCodexDeviceStandIn();
    const d = await startTestDaemon({
      config: { codexBin: REAL_CODEX },
      codexDeviceArgs: ['--experimental_issuer', fresh.url],
    });
    try {
      const key = d.daemon.store.keys.add('ned', 'member').token;
      await request(d.url).post('/olp/me/login/codex/device').set(bearer(key)).expect(202);
      fresh.decide('deny');
      let device: { state: string; error: { code: string; message: string } | null } | undefined;
      await waitFor(async () => {
        device = (await request(d.url).get('/olp/me/login/codex/device').set(bearer(key))).body.device;
        return device?.state !== 'waiting';
      });
      assert.equal(device?.state, 'failed');
      assert.equal(device?.error?.code, 'device_auth_refused');
      assert.match(device?.error?.message ?? '', /device auth failed with status 401 Unauthorized/);
      assert.equal(d.daemon.store.logins.get('ned'), undefined);
      assert.ok(!existsSync(loginPaths(d.stateDir, 'ned').dir));
    } finally {
      await d.close();
      await fresh.close();
    }
  });
});
