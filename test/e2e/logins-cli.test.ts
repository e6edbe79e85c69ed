// `olp logins` and `olp keys --login` as an operator runs them: the built CLI, a temp state dir,
// the fake claude and codex speaking the real CLIs' login commands.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openStore } from '../../src/store/index.js';
import { FAKE_CLAUDE, FAKE_CODEX, OLP_BIN } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-logins-'));
after(() => rmSync(base, { recursive: true, force: true }));

const CLAUDE_TOKEN = 'sk-ant-oat01-Zq3vKx9LmN2pR7tY4wB8cD1eF6gH0jS5uV-aliceAA';
const API_KEY = 'sk-proj-alicekey0123456789abcdefXYZ';

function olp(stateDir: string, args: string[], o: { input?: string; env?: Record<string, string> } = {}) {
  const r = spawnSync(
    process.execPath,
    [OLP_BIN, ...args, '--state-dir', stateDir, '--claude-bin', FAKE_CLAUDE, '--codex-bin', FAKE_CODEX],
    {
      encoding: 'utf8',
      input: o.input ?? '',
      env: { PATH: process.env.PATH ?? '', HOME: base, ...o.env },
    },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, all: r.stdout + r.stderr };
}

const mode = (p: string) => statSync(p).mode & 0o777;

describe('olp logins add', () => {
  const s = join(base, 'add');
  it('stores a claude setup token read from stdin, 0600 in 0700 directories, and never prints it', () => {
    const r = olp(s, ['logins', 'add', 'alice', '--claude'], { input: `${CLAUDE_TOKEN}\n` });
    assert.equal(r.status, 0, r.all);
    assert.ok(!r.all.includes(CLAUDE_TOKEN), r.all);
    const file = join(s, 'logins', 'alice', 'claude-token');
    assert.equal(readFileSync(file, 'utf8').trim(), CLAUDE_TOKEN);
    assert.equal(mode(file), 0o600);
    assert.equal(mode(join(s, 'logins')), 0o700);
    assert.equal(mode(join(s, 'logins', 'alice')), 0o700);
    assert.match(olp(s, ['logins', 'list']).stdout, /^alice\s+setup-token\s+-\s/m);
  });

  it('refuses what is not a setup token, saying why without echoing it, and stores nothing', () => {
    const apiKey = 'sk-ant-api03-notasubscriptiontoken';
    const r = olp(s, ['logins', 'add', 'bob', '--claude'], { input: apiKey });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /Anthropic API key, not a subscription token/);
    assert.ok(!r.all.includes(apiKey));
    const empty = olp(s, ['logins', 'add', 'bob', '--claude']);
    assert.equal(empty.status, 1);
    assert.match(empty.stderr, /no token was given/);
    assert.ok(!existsSync(join(s, 'logins', 'bob')));
    assert.doesNotMatch(olp(s, ['logins', 'list']).stdout, /^bob/m);
  });

  it('logs codex in with an API key piped to codex login --with-api-key: auth.json as codex writes it, 0600', () => {
    const r = olp(s, ['logins', 'add', 'alice', '--codex', '--api-key'], { input: `${API_KEY}\n` });
    assert.equal(r.status, 0, r.all);
    assert.ok(!r.all.includes(API_KEY), r.all);
    const auth = join(s, 'logins', 'alice', 'codex', 'auth.json');
    assert.deepEqual(JSON.parse(readFileSync(auth, 'utf8')), { auth_mode: 'apikey', OPENAI_API_KEY: API_KEY });
    assert.equal(mode(auth), 0o600);
    assert.equal(mode(join(s, 'logins', 'alice', 'codex')), 0o700);
    assert.ok(!existsSync(join(s, 'logins', 'alice', 'codex.new')));
    assert.match(olp(s, ['logins', 'list']).stdout, /^alice\s+setup-token\s+api-key\s/m);
  });

  it('stores an Anthropic API key for claude with --api-key (0600, instead of a setup token), never printing it', () => {
    const key = 'sk-ant-api03-dora-0123456789abcdef';
    const r = olp(s, ['logins', 'add', 'dora', '--claude', '--api-key'], { input: `${key}\n` });
    assert.equal(r.status, 0, r.all);
    assert.ok(!r.all.includes(key), r.all);
    const file = join(s, 'logins', 'dora', 'claude-api-key');
    assert.equal(readFileSync(file, 'utf8').trim(), key);
    assert.equal(mode(file), 0o600);
    assert.ok(!existsSync(join(s, 'logins', 'dora', 'claude-token')));
    assert.match(olp(s, ['logins', 'list']).stdout, /^dora\s+api-key\s+-\s/m);
    // A setup token where the API key goes is refused, and the stored key stays.
    const wrong = olp(s, ['logins', 'rotate', 'dora', '--claude', '--api-key'], { input: CLAUDE_TOKEN });
    assert.equal(wrong.status, 1, wrong.all);
    assert.ok(!wrong.all.includes(CLAUDE_TOKEN));
    assert.equal(readFileSync(file, 'utf8').trim(), key);
    // Rotated to a setup token: the API key's file goes.
    assert.equal(olp(s, ['logins', 'rotate', 'dora', '--claude'], { input: CLAUDE_TOKEN }).status, 0);
    assert.ok(!existsSync(file));
    assert.match(olp(s, ['logins', 'list']).stdout, /^dora\s+setup-token\s+-\s/m);
    assert.equal(olp(s, ['logins', 'remove', 'dora']).status, 0);
  });

  it('refuses a CLI the login already has, naming olp logins rotate', () => {
    const r = olp(s, ['logins', 'add', 'alice', '--claude'], { input: CLAUDE_TOKEN });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /already has a claude credential.*olp logins rotate alice --claude/);
  });

  it('codex by device code: a ChatGPT login; when codex fails, nothing is stored', () => {
    const ok = olp(s, ['logins', 'add', 'carol', '--codex']);
    assert.equal(ok.status, 0, ok.all);
    assert.match(ok.stdout, /Enter this one-time code/); // codex's own words reach the person
    const auth = JSON.parse(readFileSync(join(s, 'logins', 'carol', 'codex', 'auth.json'), 'utf8'));
    assert.equal(auth.auth_mode, 'chatgpt');
    assert.match(olp(s, ['logins', 'list']).stdout, /^carol\s+-\s+chatgpt\s/m);

    const failed = olp(s, ['logins', 'add', 'dave', '--codex'], {
      env: { OLP_CODEX_ENV: JSON.stringify({ FAKE_CODEX_DEVICE_AUTH: 'fail' }) },
    });
    assert.equal(failed.status, 1);
    assert.match(failed.stderr, /error sending request for url/); // codex's message
    assert.match(failed.stderr, /codex login --device-auth failed/);
    assert.ok(!existsSync(join(s, 'logins', 'dave')));
    assert.doesNotMatch(olp(s, ['logins', 'list']).stdout, /^dave/m);
  });

  it('rotate keeps the old credential when codex refuses the new one, and replaces it when codex takes it', () => {
    const auth = join(s, 'logins', 'alice', 'codex', 'auth.json');
    const bad = olp(s, ['logins', 'rotate', 'alice', '--codex', '--access-token'], { input: 'at-revoked-0123456789' });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /codex does not accept the new login/);
    assert.ok(!bad.all.includes('at-revoked-0123456789'));
    assert.equal(JSON.parse(readFileSync(auth, 'utf8')).OPENAI_API_KEY, API_KEY);
    const good = olp(s, ['logins', 'rotate', 'alice', '--codex', '--access-token'], { input: 'at-good-0123456789' });
    assert.equal(good.status, 0, good.all);
    assert.equal(JSON.parse(readFileSync(auth, 'utf8')).personal_access_token, 'at-good-0123456789');
    assert.match(olp(s, ['logins', 'list']).stdout, /^alice\s+setup-token\s+access-token\s/m);
    const none = olp(s, ['logins', 'rotate', 'carol', '--claude'], { input: CLAUDE_TOKEN });
    assert.equal(none.status, 1);
    assert.match(none.stderr, /no claude credential to replace.*olp logins add carol --claude/);
  });

  it('at a terminal: runs claude setup-token in a throwaway home without the host credentials, then reads the pasted token unechoed', {
    skip: spawnSync('script', ['--version']).status === 0 ? false : 'no script(1) for a terminal',
  }, async () => {
    const dump = join(base, 'dump');
    mkdirSync(dump);
    const printed = 'sk-ant-oat01-printedByClaude0123456789';
    const pasted = 'sk-ant-oat01-pastedByThePerson0123456789';
    const cmd = [
      process.execPath,
      OLP_BIN,
      'logins',
      'add',
      'erin',
      '--claude',
      '--state-dir',
      s,
      '--claude-bin',
      FAKE_CLAUDE,
    ]
      .map((a) => `'${a}'`)
      .join(' ');
    const child = spawn('script', ['-qec', cmd, '/dev/null'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: base,
        ANTHROPIC_API_KEY: 'sk-ant-api03-host',
        CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-host',
        OLP_CLAUDE_ENV: JSON.stringify({ FAKE_CLAUDE_SETUP_TOKEN: printed, FAKE_CLAUDE_PROBE_DUMP: dump }),
      },
    });
    let seen = '';
    let pasting = false;
    const done = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.stdout.on('data', (d: Buffer) => {
      seen += d.toString();
      if (!pasting && seen.includes('Paste the token claude printed:')) {
        pasting = true;
        child.stdin.write(`${pasted}\r`);
      }
    });
    assert.equal(await done, 0, seen);
    assert.ok(seen.includes(printed)); // claude's own screen
    assert.ok(!seen.includes(pasted), seen); // the paste is not echoed
    assert.equal(readFileSync(join(s, 'logins', 'erin', 'claude-token'), 'utf8').trim(), pasted);
    const [file] = readdirSync(dump).filter((f) => f.startsWith('setup-token-'));
    const ran = JSON.parse(readFileSync(join(dump, file!), 'utf8')) as { env: string[]; home: string };
    assert.ok(!ran.env.includes('ANTHROPIC_API_KEY') && !ran.env.includes('CLAUDE_CODE_OAUTH_TOKEN'), ran.env.join());
    assert.notEqual(ran.home, base);
    assert.ok(!existsSync(ran.home), 'the throwaway home is removed');
  });
});

describe('olp logins list, status, remove; olp keys --login', () => {
  const s = join(base, 'manage');
  it('keys add --login binds a key to a login that exists; an unknown login is refused', () => {
    assert.equal(olp(s, ['logins', 'add', 'alice', '--claude'], { input: CLAUDE_TOKEN }).status, 0);
    const add = olp(s, ['keys', 'add', 'k-alice', '--login', 'alice']);
    assert.equal(add.status, 0, add.all);
    assert.match(olp(s, ['keys', 'show', 'k-alice']).stdout, /^login\s+alice$/m);
    const unknown = olp(s, ['keys', 'add', 'k-bob', '--login', 'bob']);
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /no login named 'bob'/);
    assert.equal(olp(s, ['keys', 'show', 'k-bob']).status, 1);
    assert.equal(olp(s, ['keys', 'add', 'k-machine']).status, 0);
    const list = olp(s, ['keys', 'list']).stdout;
    assert.match(list, /\sLOGIN\s/);
    assert.match(list, /^k-alice\s.*\salice\s+active$/m);
    assert.match(list, /^k-machine\s.*\smachine\s+active$/m);
  });

  it('keys set --login moves a key to another login, or back to the machine', () => {
    assert.equal(olp(s, ['keys', 'set', 'k-machine', '--login', 'alice']).status, 0);
    assert.match(olp(s, ['keys', 'show', 'k-machine']).stdout, /^login\s+alice$/m);
    const back = olp(s, ['keys', 'set', 'k-machine', '--login', 'machine']);
    assert.equal(back.status, 0, back.all);
    assert.match(back.stdout, /^login\s+machine$/m);
    assert.equal(olp(s, ['keys', 'set', 'k-machine', '--login', 'nobody']).status, 1);
  });

  it('list: the machine first, then each login with its CLIs, keys and plan', () => {
    const store = openStore(s);
    try {
      store.plans.save({
        backend: 'claude@alice',
        status: 'allowed',
        window: 'five_hour',
        resetsAt: Date.now() + 3600_000,
        utilization: 0.4,
        overage: false,
        message: null,
        updatedAt: Date.now(),
      });
    } finally {
      store.close();
    }
    const lines = olp(s, ['logins', 'list']).stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^NAME\s+CLAUDE\s+CODEX\s+KEYS\s+PLAN$/);
    assert.match(lines[1]!, /^machine\s+-\s+-\s+k-machine\s+-$/);
    assert.match(lines[2]!, /^alice\s+setup-token\s+-\s+k-alice\s+claude allowed 40 %$/);
  });

  it('status: kinds and paths, never contents; the CLI asked; exit 1 when it refuses the credential', () => {
    const ok = olp(s, ['logins', 'status', 'alice']);
    assert.equal(ok.status, 0, ok.all);
    assert.ok(!ok.all.includes(CLAUDE_TOKEN));
    assert.match(ok.stdout, /^claude\s+setup-token, .*logins\/alice\/claude-token: logged in \(oauth_token\); /m);
    assert.match(ok.stdout, /^codex\s+- \(add one: olp logins add alice --codex\)$/m);
    assert.match(ok.stdout, /^keys\s+k-alice$/m);
    assert.match(ok.stdout, /^plan\s+claude \(login alice\): allowed/m);

    const revoked = 'sk-ant-oat01-revoked-0123456789';
    assert.equal(olp(s, ['logins', 'rotate', 'alice', '--claude'], { input: revoked }).status, 0);
    const bad = olp(s, ['logins', 'status', 'alice']);
    assert.equal(bad.status, 1);
    assert.match(
      bad.stdout,
      /^claude\s+setup-token, .*: REJECTED: not logged in .*olp logins rotate alice --claude\)$/m,
    );
    assert.ok(!bad.all.includes(revoked));
    rmSync(join(s, 'logins', 'alice', 'claude-token'));
    const missing = olp(s, ['logins', 'status', 'alice']);
    assert.equal(missing.status, 1);
    assert.match(
      missing.stdout,
      /^claude\s+setup-token, .*: MISSING \(store it again: olp logins rotate alice --claude\)$/m,
    );
    assert.equal(olp(s, ['logins', 'rotate', 'alice', '--claude'], { input: CLAUDE_TOKEN }).status, 0);
    assert.equal(olp(s, ['logins', 'status', 'alice']).status, 0);
    assert.equal(olp(s, ['logins', 'status', 'nobody']).status, 1);
    assert.match(olp(s, ['logins', 'status', 'machine']).stdout, /^keys\s+k-machine$/m);
  });

  it('status: a CLI that does not answer within --status-timeout leaves the credential not checked, never rejected', () => {
    const late = olp(s, ['logins', 'status', 'alice'], {
      env: { OLP_STATUS_TIMEOUT: '1', OLP_CLAUDE_ENV: JSON.stringify({ FAKE_CLAUDE_STATUS_DELAY_MS: '60000' }) },
    });
    assert.equal(late.status, 0, late.all);
    assert.match(
      late.stdout,
      /^claude\s+setup-token, .*claude-token: claude's status command \(claude auth status\) did not answer within 1 s; its login was not checked$/m,
    );
    assert.doesNotMatch(late.all, /REJECTED|not logged in|did not finish/);
  });

  it('remove: one CLI or the whole login; bound keys are named and stay bound; machine cannot be removed', () => {
    assert.equal(olp(s, ['logins', 'add', 'alice', '--codex', '--api-key'], { input: API_KEY }).status, 0);
    const one = olp(s, ['logins', 'remove', 'alice', '--codex']);
    assert.equal(one.status, 0, one.all);
    assert.match(
      one.stderr,
      /Keys still bound to it: k-alice\. Their codex requests are refused \(503 login_not_set_up\)/,
    );
    assert.ok(!existsSync(join(s, 'logins', 'alice', 'codex')));
    assert.ok(existsSync(join(s, 'logins', 'alice', 'claude-token')));
    assert.match(olp(s, ['logins', 'list']).stdout, /^alice\s+setup-token\s+-\s/m);

    const all = olp(s, ['logins', 'remove', 'alice']);
    assert.equal(all.status, 0, all.all);
    assert.match(all.stderr, /Keys still bound to it: k-alice\./);
    assert.ok(!existsSync(join(s, 'logins', 'alice')));
    assert.doesNotMatch(olp(s, ['logins', 'list']).stdout, /^alice/m);
    assert.match(olp(s, ['keys', 'show', 'k-alice']).stdout, /^login\s+alice$/m);

    const machine = olp(s, ['logins', 'remove', 'machine']);
    assert.equal(machine.status, 1);
    assert.match(machine.stderr, /this machine's own CLI login/);
    assert.equal(olp(s, ['logins', 'remove', 'alice']).status, 1);
  });

  it('help: olp help logins and olp logins add --help', () => {
    const help = olp(s, ['help', 'logins']);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^Usage: olp logins COMMAND/);
    assert.match(help.stdout, /olp logins status NAME/);
    assert.match(olp(s, ['logins', 'add', '--help']).stdout, /^Usage: olp logins add NAME --claude\|--codex/);
    assert.match(olp(s, ['--help']).stdout, /^ {2}logins\s/m);
    const usage = olp(s, ['logins', 'add', 'x']);
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /say which CLI/);
  });
});
