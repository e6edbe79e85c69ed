// Every command explains itself: `--help`/`-h` prints its own usage and options and exits 0;
// a bad command line gets one line of reason and a pointer to that help, exit 2.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { OLP_BIN, ROOT } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-help-'));
after(() => rmSync(base, { recursive: true, force: true }));

function olp(args: string[]) {
  return spawnSync(process.execPath, [OLP_BIN, ...args], {
    encoding: 'utf8',
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: base },
  });
}

const CASES: { args: string[]; usage: string; options: string[] }[] = [
  {
    args: ['serve', '--help'],
    usage: 'Usage: olp serve',
    options: ['--host', '--port', '--state-dir', '--claude-bin', '--shutdown-grace', '--log-level debug', 'OLP_MODELS'],
  },
  {
    args: ['doctor', '-h'],
    usage: 'Usage: olp doctor',
    options: ['--claude-bin', '--codex-bin', '--port', '--state-dir'],
  },
  {
    args: ['keys', '--help'],
    usage: 'Usage: olp keys',
    options: ['add NAME', 'rotate NAME', '--models', '--rpm', '--expires', '--enable'],
  },
  {
    args: ['keys', 'add', '--help'],
    usage: 'Usage: olp keys add NAME',
    options: ['--role', '--daily-tokens', '--state-dir'],
  },
  { args: ['keys', 'revoke', '-h'], usage: 'Usage: olp keys revoke NAME', options: ['--state-dir'] },
  {
    args: ['logins', '--help'],
    usage: 'Usage: olp logins',
    options: ['add NAME', 'status NAME', 'remove NAME', '--claude', '--api-key', '--stdin', '--state-dir'],
  },
  { args: ['logins', 'remove', '-h'], usage: 'Usage: olp logins remove NAME', options: ['--codex', '--state-dir'] },
  { args: ['help', 'logins'], usage: 'Usage: olp logins', options: ['rotate NAME'] },
  { args: ['keys', 'set', '--help'], usage: 'Usage: olp keys set NAME', options: ['--login NAME'] },
  { args: ['sessions', '--help'], usage: 'Usage: olp sessions', options: ['--key NAME', '--all'] },
  {
    args: ['usage', '--help'],
    usage: 'Usage: olp usage',
    options: ['--since', '--by', '--from SOURCE', 'OLP_OWNER_KEYS', '--format jsonl', '--older-than'],
  },
  {
    args: ['recordings', '--help'],
    usage: 'Usage: olp recordings',
    options: ['--name', '--content', '--dry-run', '--yes', '--older-than'],
  },
  { args: ['help', 'usage'], usage: 'Usage: olp usage', options: ['--since'] },
  {
    args: ['front', '--help'],
    usage: 'Usage: olp front',
    options: ['nginx', 'prometheus', '--instance TAG=URL', '--listen', '--tls-cert', '--untagged', '--credentials-dir'],
  },
  { args: ['help', 'front'], usage: 'Usage: olp front', options: ['OLP_OWNER_KEYS'] },
  {
    args: ['service', '--help'],
    usage: 'Usage: olp service',
    options: ['install', 'status', 'logs', 'restart', 'uninstall', '--print', '--platform', '--system', '--name'],
  },
  { args: ['help', 'service'], usage: 'Usage: olp service', options: ['loginctl enable-linger', '--follow'] },
  { args: ['keys'], usage: 'Usage: olp keys', options: ['add NAME', 'rotate NAME', '--rpm'] },
  { args: [], usage: 'olp: an OpenAI-compatible proxy', options: ['serve', 'doctor', 'keys'] },
];

describe('olp COMMAND --help', () => {
  for (const c of CASES) {
    it(`olp ${c.args.join(' ')}: its own usage and options, exit 0`, () => {
      const r = olp(c.args);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, '');
      assert.ok(r.stdout.startsWith(c.usage), r.stdout.slice(0, 200));
      for (const o of c.options) assert.ok(r.stdout.includes(o), `${c.args.join(' ')} names ${o}`);
      assert.ok(r.stdout.includes('--help'));
    });
  }

  it('help wins over the rest of the line and opens no state dir', () => {
    const file = join(base, 'a-file');
    writeFileSync(file, '');
    const r = olp(['keys', 'add', '--no-such-flag', '--help', '--state-dir', join(file, 'sub')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^Usage: olp keys add NAME/);
  });

  it('olp --help groups the commands, then the options under their own heading', () => {
    const r = olp(['--help']);
    assert.equal(r.status, 0);
    const text = r.stdout;
    assert.doesNotMatch(text, /Policy flags/, 'the keys flags live in olp keys --help');
    const options = text.indexOf('\nOptions:');
    assert.ok(options > 0);
    for (const cmd of ['serve', 'doctor', 'service', 'keys', 'logins', 'usage', 'sessions', 'recordings', 'front']) {
      const at = text.search(new RegExp(`^  ${cmd}\\s`, 'm'));
      assert.ok(at > 0 && at < options, `${cmd} is listed among the commands, before the options`);
    }
    assert.match(text.slice(options), /--state-dir DIR/);
    assert.match(text.slice(options), /--log-level debug\s+also print the stack trace/);
  });
});

describe('a negative number after an option is its value', () => {
  it('olp keys add kid --rpm -3 says what --rpm=-3 says', () => {
    const spaced = olp(['keys', 'add', 'kid', '--rpm', '-3', '--state-dir', join(base, 'neg')]);
    const joined = olp(['keys', 'add', 'kid', '--rpm=-3', '--state-dir', join(base, 'neg')]);
    assert.equal(spaced.status, 2);
    assert.match(spaced.stderr, /^olp: --rpm must be a positive integer or 'none', not '-3'\n/);
    assert.equal(spaced.stderr, joined.stderr);
    assert.equal(
      olp(['keys', 'add', 'kid', '--concurrency', '-1', '--state-dir', join(base, 'neg')]).stderr.split('\n')[0],
      "olp: --concurrency must be a positive integer or 'none', not '-1'",
    );
  });
});

describe('usage errors', () => {
  for (const [args, pointer] of [
    [['keys', '--frob'], 'keys --help'],
    [['keys', 'frob'], 'keys --help'],
    [['serve', '--no-such-flag'], 'serve --help'],
    [['usage', 'frob'], 'usage --help'],
    [['front', 'caddy', '--instance', 'a1=http://x:1'], 'front --help'],
    [['front', 'nginx'], 'front --help'],
    [['frobnicate'], ' --help'],
  ] as const) {
    it(`olp ${args.join(' ')}: exit 2, one line of reason and a pointer to the help`, () => {
      const r = olp([...args]);
      assert.equal(r.status, 2);
      assert.equal(r.stdout, '');
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 2, r.stderr);
      assert.match(lines[0]!, /^olp: \S/);
      assert.doesNotMatch(lines[0]!, /To specify a positional argument/);
      assert.match(lines[1]!, /^See: /);
      assert.ok(lines[1]!.endsWith(pointer), lines[1]);
    });
  }
});
