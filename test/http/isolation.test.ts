// What a CLI child can see: only its workspace, allowlisted variables and the credentials link.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { leftoverWorkspaces } from '../support/procs.js';
import { runDirFor } from '../../src/workspace/index.js';

interface Report {
  home: string;
  cwd: string;
  env: string[];
  markerVisible: boolean;
  credentialsVisible: boolean;
  credentialsLinked: boolean;
  fds: string[];
}

const HOST_ENV = {
  LANG: 'C.UTF-8',
  TZ: 'UTC',
  ANTHROPIC_API_KEY: 'sk-ant-host-secret',
  OPENAI_API_KEY: 'sk-host-secret',
  CLAUDECODE: '1',
  CLAUDE_CODE_ENTRYPOINT: 'cli',
  SOME_HOST_SECRET: 'do-not-leak',
};
// /bin/sh (the fake's launcher) adds these itself.
const SHELL_ADDED = new Set(['PWD', 'OLDPWD', 'SHLVL', '_']);

async function report(t: TestDaemon): Promise<Report> {
  const res = await request(t.url)
    .post('/v1/chat/completions')
    .set('authorization', `Bearer ${t.token}`)
    .send({ model: 'sonnet', messages: [{ role: 'user', content: '[[fake:report-env]]' }] });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return JSON.parse(res.body.choices[0].message.content) as Report;
}

function operatorFiles(t: TestDaemon): void {
  mkdirSync(join(t.operatorHome, '.claude'), { recursive: true });
  writeFileSync(join(t.operatorHome, '.claude', '.credentials.json'), '{"claudeAiOauth":{}}');
  writeFileSync(join(t.operatorHome, '.olp-marker'), 'private');
}

describe('a CLI child sees only its workspace', () => {
  let t: TestDaemon;
  before(async () => {
    t = await startTestDaemon({ hostEnv: HOST_ENV, claudeEnv: { FAKE_MARKER: '.olp-marker' } });
    operatorFiles(t);
  });
  after(async () => t.close());

  it('HOME and cwd are the per-request workspace; the operator home is not reachable; credentials are', async () => {
    const r = await report(t);
    assert.ok(r.home.startsWith(runDirFor(t.stateDir) + '/'), r.home);
    assert.match(r.home.slice(runDirFor(t.stateDir).length), /^\/[^/]+\/req_[0-9a-f]{32}\/home$/);
    // With the session pool on, the working directory is the slot's stable one.
    assert.match(r.cwd, new RegExp(`^${t.stateDir}/slots/[^/]+/claude-\\d/work$`));
    assert.equal(r.markerVisible, false, 'a file in the real home is not visible through $HOME');
    // The login file stays where it is: claude finds it (and takes its refresh locks) in the owner's
    // directory, so runs refresh it one at a time and never replace a link with a copy of their own.
    assert.equal(r.credentialsVisible, true, "claude finds the machine's login");
    assert.equal(r.credentialsLinked, false, 'nothing of the login is linked into the home');
  });

  it('the environment is an allowlist: no API keys, no nested-session markers, no other host variables', async () => {
    const r = await report(t);
    const names = r.env.filter((n) => !SHELL_ADDED.has(n)).sort();
    assert.deepEqual(names, [
      'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
      'CLAUDE_SECURESTORAGE_CONFIG_DIR',
      'DISABLE_AUTOUPDATER',
      'DISABLE_ERROR_REPORTING',
      'DISABLE_TELEMETRY',
      'FAKE_CLAUDE_RECORD_DIR',
      'FAKE_MARKER',
      'HOME',
      'LANG',
      'PATH',
      'TMPDIR',
      'TZ',
    ]);
  });

  it('inherits no descriptor of the daemon: no listening or client sockets, no database', async () => {
    const r = await report(t);
    // 0-2 are the stdio pipes (libuv makes them socketpairs); the rest are the child's own (epoll,
    // eventfd, pipes) or whatever the daemon itself inherited from its parent without close-on-exec.
    assert.deepEqual(r.fds.filter((f) => /^[012] -> /.test(f)).length, 3, r.fds.join(', '));
    for (const f of r.fds.filter((f) => !/^[012] -> /.test(f))) {
      assert.ok(!/socket:|olp\.db|\.log$/.test(f), `inherited from the daemon: ${f}`);
    }
  });

  it('leaves no workspace behind', async () => {
    // Removal runs right after the response is sent, off the event loop.
    await t.daemon.settled();
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
  });
});

describe('operator opt-in', () => {
  it('an API key variable is passed only when the operator names it; nested-session markers never', async () => {
    const t = await startTestDaemon({
      hostEnv: HOST_ENV,
      config: { claudePassEnv: ['ANTHROPIC_API_KEY', 'CLAUDECODE'] },
    });
    try {
      const r = await report(t);
      assert.ok(r.env.includes('ANTHROPIC_API_KEY'));
      assert.ok(!r.env.includes('OPENAI_API_KEY'));
      assert.ok(!r.env.includes('CLAUDECODE'), 'CLAUDECODE is never passed, even when named');
    } finally {
      await t.close();
    }
  });

  it('the credentials source is configurable; a missing one is warned about at start', async () => {
    const t = await startTestDaemon({ config: { claudeCredentials: '/nonexistent/creds.json' } });
    try {
      const warning = t.logs.find((l) => l.event === 'credentials_missing');
      assert.equal(warning?.file, '/nonexistent/creds.json');
      assert.equal((await report(t)).credentialsVisible, false);
    } finally {
      await t.close();
    }
  });
});
