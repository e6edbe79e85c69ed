// GET /health: a short answer for anyone, the CLI details for an owner; and the status commands
// behind it run the way a real run does (allow-listed environment, throwaway home).
import assert from 'node:assert/strict';
import { starterInfo } from '../../src/process/index.js';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { leftoverWorkspaces } from '../support/procs.js';
import { runDirFor } from '../../src/workspace/index.js';

const SECRETS = {
  GITHUB_TOKEN: 'ghp_secret',
  ANTHROPIC_API_KEY: 'sk-ant-secret',
  OPENAI_API_KEY: 'sk-openai-secret',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  SOME_OTHER_VAR: 'x',
};

/** What the fake CLIs' status commands wrote about themselves (FAKE_*_PROBE_DUMP). */
interface Dump {
  args: string[];
  env: string[];
  home: string;
  cwd: string;
  credentialsVisible?: boolean;
  codexHome?: string;
  authVisible?: boolean;
}

function dumps(dir: string): Dump[] {
  return readdirSync(dir).map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Dump);
}

const scratch = mkdtempSync(join(tmpdir(), 'olp-health-'));
const claudeDump = join(scratch, 'claude');
const codexDump = join(scratch, 'codex');
mkdirSync(claudeDump);
mkdirSync(codexDump);

let t: TestDaemon;
before(async () => {
  t = await startTestDaemon({
    hostEnv: SECRETS,
    claudeEnv: { FAKE_CLAUDE_PROBE_DUMP: claudeDump },
    codexEnv: { FAKE_CODEX_PROBE_DUMP: codexDump },
  });
  // The operator is logged into both CLIs.
  mkdirSync(join(t.operatorHome, '.claude'), { recursive: true });
  writeFileSync(join(t.operatorHome, '.claude', '.credentials.json'), '{"claudeAiOauth":{}}');
  mkdirSync(join(t.operatorHome, '.codex'), { recursive: true });
  writeFileSync(join(t.operatorHome, '.codex', 'auth.json'), '{}');
});
after(async () => {
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

const owner = () => request(t.url).get('/health').set('authorization', `Bearer ${t.token}`);

describe('/health', () => {
  it('without a key: only the status', async () => {
    const res = await request(t.url).get('/health');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
  });

  it('with a member key: only the status', async () => {
    const { token } = t.daemon.store.keys.add('kid', 'member');
    const res = await request(t.url).get('/health').set('authorization', `Bearer ${token}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
  });

  it('with an owner key: CLI paths, versions, logins and the load', async () => {
    const res = await owner();
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), [
      'backends',
      'cli',
      'inflight',
      'instance',
      'memory',
      'parked',
      'processes',
      'spawn',
      'status',
      'workers',
    ]);
    assert.deepEqual(res.body.instance, { tag: null, peers: {} }, 'no instance tag: one olp alone');
    assert.equal(typeof res.body.processes.live, 'number', 'every CLI process olp holds');
    assert.ok(Number.isInteger(res.body.processes.max) && res.body.processes.max >= 1, 'and their cap');
    assert.deepEqual(res.body.spawn, starterInfo(), 'how CLI processes are started here');
    // The test process was not started as `olp serve`: V8's own heap settings, and its real size.
    assert.equal(res.body.memory.heapTuned, false);
    assert.equal(res.body.memory.mallocArenas, null);
    assert.ok(
      res.body.memory.heapUsedMb > 1 && res.body.memory.heapUsedMb < res.body.memory.rssMb,
      JSON.stringify(res.body.memory),
    );
    assert.deepEqual(res.body.workers, { max: 0, live: [] }, 'workers are off in this daemon');
    assert.equal(res.body.status, 'ok');
    assert.deepEqual(res.body.backends.claude, {
      found: true,
      path: res.body.backends.claude.path,
      version: '2.1.197 (Claude Code)',
      login: 'logged_in',
      ready: true,
    });
    assert.match(res.body.backends.claude.path, /claude$/);
    assert.equal(res.body.backends.codex.login, 'logged_in');
    assert.equal(typeof res.body.inflight, 'number');
    assert.equal(typeof res.body.cli.running, 'number');
  });

  it('an invalid key sent explicitly gets 401', async () => {
    const res = await request(t.url).get('/health').set('authorization', 'Bearer olpk_not-a-real-key');
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'invalid_api_key');
  });
});

describe('the status commands behind /health', () => {
  it('get no host secret and not the operator’s home, only the linked login files; their homes are removed', async () => {
    assert.equal((await owner()).status, 200);
    await t.daemon.settled();
    const claude = dumps(claudeDump);
    const codex = dumps(codexDump);
    assert.deepEqual(claude.map((d) => d.args.join(' ')).sort(), ['--version', 'auth status']);
    assert.deepEqual(codex.map((d) => d.args.join(' ')).sort(), ['--version', 'login status']);
    for (const d of [...claude, ...codex]) {
      for (const name of Object.keys(SECRETS)) assert.ok(!d.env.includes(name), `${d.args.join(' ')} got ${name}`);
      assert.notEqual(d.home, t.operatorHome);
      assert.ok(d.home.startsWith(runDirFor(t.stateDir) + '/'), `${d.home} is a throwaway home`);
      assert.ok(d.cwd.startsWith(runDirFor(t.stateDir) + '/'), `${d.cwd} is a throwaway cwd`);
    }
    for (const d of claude) assert.equal(d.credentialsVisible, true, 'claude finds its login in the throwaway home');
    for (const d of codex) {
      assert.equal(d.codexHome, join(d.home, '.codex'));
      assert.equal(d.authVisible, true, 'codex finds its login in its CODEX_HOME');
    }
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
  });

  it('get a provider key the operator names with --claude-pass-env (the login is then the key)', async () => {
    const dir = join(scratch, 'pass');
    mkdirSync(dir);
    const d = await startTestDaemon({
      hostEnv: SECRETS,
      config: { claudePassEnv: ['ANTHROPIC_API_KEY'] },
      claudeEnv: { FAKE_CLAUDE_PROBE_DUMP: dir },
    });
    try {
      const res = await request(d.url).get('/health').set('authorization', `Bearer ${d.token}`);
      assert.equal(res.body.backends.claude.login, 'api_key');
      const got = dumps(dir);
      assert.equal(got.length, 2);
      for (const dump of got) {
        assert.ok(dump.env.includes('ANTHROPIC_API_KEY'));
        assert.ok(!dump.env.includes('GITHUB_TOKEN'));
      }
    } finally {
      await d.close();
    }
  });
});
