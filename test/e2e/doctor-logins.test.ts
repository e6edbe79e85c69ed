// olp doctor on logins: each login's credential kind per CLI, whether the CLI takes it, the keys it
// serves, and a warning wherever a refreshable login file is shared by CLIs that could race on it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loginPaths, saveClaudeToken, writeSecret } from '../../src/logins/index.js';
import { openStore } from '../../src/store/index.js';
import { FAKE_CLAUDE, FAKE_CODEX, OLP_BIN } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-doctor-logins-'));
after(() => rmSync(base, { recursive: true, force: true }));

const TOKEN = 'sk-ant-oat01-doctor-secret-value';

function doctor(stateDir: string, home: string, extra: string[] = []) {
  return spawnSync(
    process.execPath,
    [
      OLP_BIN,
      'doctor',
      '--state-dir',
      stateDir,
      '--port',
      '0',
      '--claude-bin',
      FAKE_CLAUDE,
      '--codex-bin',
      FAKE_CODEX,
      ...extra,
    ],
    { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: home } },
  );
}

describe('olp doctor: logins', () => {
  it("lists the machine's login and each login's kinds, checked by the CLIs; warns of a shared ChatGPT login; never prints a secret", () => {
    const home = join(base, 'home');
    mkdirSync(join(home, '.claude'), { recursive: true });
    mkdirSync(join(home, '.codex'), { recursive: true });
    writeFileSync(
      join(home, '.claude', '.credentials.json'),
      '{"claudeAiOauth":{"accessToken":"at","refreshToken":"rt","expiresAt":1}}',
    );
    writeFileSync(
      join(home, '.codex', 'auth.json'),
      '{"auth_mode":"chatgpt","tokens":{"access_token":"x","refresh_token":"rt-1"}}',
    );
    const stateDir = join(base, 'state');
    const store = openStore(stateDir);
    saveClaudeToken(stateDir, 'alice', TOKEN);
    store.logins.set('alice', 'claude', 'setup-token');
    writeSecret(loginPaths(stateDir, 'alice').codexAuth, '{"auth_mode":"apikey","OPENAI_API_KEY":"sk-alice-secret"}');
    store.logins.set('alice', 'codex', 'api-key');
    store.logins.set('bob', 'claude', 'setup-token'); // its token file is missing: the CLI is asked with none
    store.keys.add('mum', 'owner');
    store.keys.add('alice', 'member', {}, 'alice');
    store.close();

    const r = doctor(stateDir, home);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /logins {5}machine \(the machine's own; keys: mum\)/);
    assert.match(
      r.stdout,
      /claude {2}login file .*\.credentials\.json \(refreshed by claude; runs share your claude's refresh locks/,
    );
    assert.match(
      r.stdout,
      /alice \(keys: alice\)\n {13}claude {2}setup token \(long-lived, never refreshed\); accepted by the CLI/,
    );
    assert.match(r.stdout, /codex {3}API key \(never refreshed\); accepted by the CLI/);
    assert.match(
      r.stdout,
      /bob \(keys: none\)\n.*claude {2}setup token.*\n.*codex {3}none \(olp logins add bob --codex\)/,
    );
    assert.match(
      r.stdout,
      /Warnings:\n {2}codex: .*auth\.json is a ChatGPT login shared by olp's runs and any codex you run yourself/,
    );
    assert.doesNotMatch(r.stdout, /member keys on the machine's own login/, 'alice has her own');
    for (const secret of [TOKEN, 'sk-alice-secret'])
      assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret));
  });

  it("warns when the claude login file is one olp must link (another name), and of member keys on the machine's login", () => {
    const home = join(base, 'home2');
    mkdirSync(home, { recursive: true });
    const creds = join(home, 'claude-login.json');
    writeFileSync(creds, '{"claudeAiOauth":{"accessToken":"at","refreshToken":"rt","expiresAt":1}}');
    const state = join(base, 'state2');
    const store = openStore(state);
    store.keys.add('mum', 'owner');
    store.keys.add('kid', 'member');
    store.close();
    const r = doctor(state, home, ['--claude-credentials', creds]);
    assert.match(r.stdout, /member keys on the machine's own login: kid; both vendors' terms forbid/);
    assert.match(
      r.stdout,
      /Warnings:\n {2}claude: .*claude-login\.json is linked into every run .*olp logins add NAME --claude/,
    );
  });
});
