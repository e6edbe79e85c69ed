// The first ten minutes: closed pipes, an unusable state dir, what `olp serve` says at start, and
// doctor's fixes, all through the built CLI as a process.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { openStore } from '../../src/store/index.js';
import { FAKE_CLAUDE, FAKE_CODEX, OLP_BIN, ROOT } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-firstrun-'));
after(() => rmSync(base, { recursive: true, force: true }));

// PATH with node (the fake CLIs need it) and the system, but no `olp` and no CLI.
const PATH = `${dirname(process.execPath)}:/usr/bin:/bin`;
const env = (extra: Record<string, string> = {}) => ({ PATH, HOME: base, ...extra });

function olp(args: string[], extra: Record<string, string> = {}) {
  return spawnSync(process.execPath, [OLP_BIN, ...args], {
    encoding: 'utf8',
    cwd: ROOT,
    env: env(extra),
    timeout: 30_000,
  });
}

const STACK = /^\s+at /m;

describe('a closed stdout ends the command quietly', () => {
  it('olp doctor whose reader has gone: no EPIPE crash, nothing on stderr', async () => {
    const child = spawn(
      process.execPath,
      [OLP_BIN, 'doctor', '--state-dir', join(base, 'doctor-pipe'), '--port', '0'],
      { cwd: ROOT, env: env(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout.destroy(); // the reader is gone before the first write, as `| head -0` would be
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    assert.equal(stderr, '');
    assert.equal(code, 0, 'the reader leaving is not a failure (no CLI is installed here: doctor would say 1)');
  });

  it('olp usage export | head -1: one row out, the export stops, no stack', () => {
    const stateDir = join(base, 'export');
    const store = openStore(stateDir);
    for (let i = 0; i < 3000; i++) {
      store.usage.record({
        requestId: `req-${i}`,
        ts: Date.now() - i,
        keyId: null,
        keyName: null,
        backend: 'claude',
        model: 'sonnet',
        servedModel: 'sonnet',
        outcome: 'ok',
        errorCode: null,
        status: 200,
        queueMs: 0,
        ttftMs: 1,
        durationMs: 2,
        promptTokens: 10,
        completionTokens: 5,
        cachedTokens: 0,
        reasoningTokens: 0,
        rawUsage: null,
        partial: false,
        costUsd: null,
        sessionId: null,
        sessionMode: null,
        rotationReason: null,
      });
    }
    store.close();
    // Over a megabyte of rows: more than a pipe holds, so the export writes into a closed pipe.
    const r = spawnSync(
      'sh',
      ['-c', `"${process.execPath}" "${OLP_BIN}" usage export --format jsonl --state-dir "${stateDir}" | head -1`],
      { encoding: 'utf8', cwd: ROOT, env: env(), timeout: 30_000 },
    );
    assert.equal(r.stderr, '');
    assert.equal(r.status, 0);
    assert.equal(r.stdout.split('\n').filter(Boolean).length, 1);
    assert.equal((JSON.parse(r.stdout) as { request_id: string }).request_id.startsWith('req-'), true);
  });
});

describe('an unusable state dir is one line', () => {
  const file = join(base, 'regular-file');
  writeFileSync(file, '');
  const under = join(file, 'state');
  for (const args of [
    ['keys', 'list'],
    ['keys', 'add', 'me'],
    ['sessions', 'list'],
    ['usage'],
    ['recordings', 'list'],
    ['serve', '--port', '0'],
  ]) {
    it(`olp ${args.join(' ')} with a state dir under a regular file`, () => {
      const r = olp([...args, '--state-dir', under]);
      assert.equal(r.status, 1, r.stderr);
      assert.equal(r.stdout, '');
      assert.equal(
        r.stderr,
        `olp: cannot use the state directory ${under}: ${file} is a file, not a directory (ENOTDIR). Choose another with --state-dir.\n`,
      );
    });
  }

  it('a state dir that is a file, and one that cannot be created (/proc), are one line each; never a hang', {
    skip: !existsSync('/proc/self'),
  }, () => {
    const r = olp(['keys', 'list', '--state-dir', file]);
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /^olp: cannot use the state directory .*: it is a file, not a directory\. Choose another with --state-dir.*\n$/,
    );
    // Node 20's recursive mkdir loops forever on /proc; olp must answer.
    const p = olp(['usage', '--state-dir', '/proc/olp-test-no-such-dir']);
    assert.equal(p.status, 1, p.error?.message);
    assert.equal(p.stderr.split('\n').filter(Boolean).length, 1, p.stderr);
    assert.match(
      p.stderr,
      /^olp: cannot use the state directory \/proc\/olp-test-no-such-dir: .*\(E[A-Z]+\)\. Choose another with --state-dir/,
    );
  });

  it('--log-level debug adds the stack', () => {
    const r = olp(['keys', 'list', '--state-dir', under, '--log-level', 'debug']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^olp: cannot use the state directory/);
    assert.match(r.stderr, STACK);
  });
});

describe('olp doctor looks at the state dir for real', () => {
  const doctor = (stateDir: string) =>
    olp(['doctor', '--state-dir', stateDir, '--port', '0', '--claude-bin', FAKE_CLAUDE]);

  it('prints the real mode of an existing dir', () => {
    for (const mode of [0o755, 0o500, 0o700]) {
      const dir = join(base, `mode-${mode.toString(8)}`);
      mkdirSync(dir);
      chmodSync(dir, mode);
      const r = doctor(dir);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(r.stdout, new RegExp(`^state dir .*${dir} \\(mode ${mode.toString(8)}\\b`, 'm'));
      if (mode === 0o755) assert.match(r.stdout, new RegExp(`state dir: chmod 700 ${dir}`));
    }
  });

  it('a dir that cannot be created is a problem with a fix; a creatable one is fine and not created', () => {
    const file = join(base, 'doctor-file');
    writeFileSync(file, '');
    const bad = doctor(join(file, 'state'));
    assert.equal(bad.stderr, '');
    assert.match(
      bad.stdout,
      new RegExp(
        `^state dir\\s+PROBLEM\\s+${join(file, 'state')} cannot be created: ${file} is a file, not a directory`,
        'm',
      ),
    );
    assert.match(bad.stdout, /^ {2}state dir: choose another with --state-dir/m);
    const fresh = join(base, 'not-yet', 'state');
    const ok = doctor(fresh);
    assert.match(ok.stdout, /^state dir\s+ok\s+.*not created yet/m);
    assert.equal(existsSync(join(base, 'not-yet')), false);
  });

  it("a not-logged-in CLI's fix names the binary's full path; the row says it was found by name on PATH", () => {
    const bin = join(base, 'cli bin');
    mkdirSync(bin);
    symlinkSync(FAKE_CLAUDE, join(bin, 'claude'));
    symlinkSync(FAKE_CODEX, join(bin, 'codex'));
    const r = spawnSync(
      process.execPath,
      [OLP_BIN, 'doctor', '--state-dir', join(base, 'doctor-login'), '--port', '0'],
      {
        encoding: 'utf8',
        env: env({
          PATH: `${bin}:${PATH}`,
          OLP_CLAUDE_ENV: JSON.stringify({ FAKE_CLAUDE_LOGGED_IN: '0' }),
          OLP_CODEX_ENV: JSON.stringify({ FAKE_CODEX_LOGGED_IN: '0' }),
        }),
      },
    );
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.ok(r.stdout.includes(`claude: '${join(bin, 'claude')}' auth login`), r.stdout);
    assert.ok(r.stdout.includes(`codex: '${join(bin, 'codex')}' login`), r.stdout);
    assert.match(r.stdout, /claude\s+.*2\.1\.197 \(Claude Code\)\s+NOT logged in.*'claude' on PATH/);
  });
});

describe('olp doctor beside a running olp, and with a key login', () => {
  it("while olp serves the state dir: the port line asks /health and names it (pid, version), no 'IN USE'", async () => {
    const stateDir = join(base, 'doctor-running');
    const child = spawn(
      process.execPath,
      [
        OLP_BIN,
        'serve',
        '--state-dir',
        stateDir,
        '--port',
        '0',
        '--claude-bin',
        FAKE_CLAUDE,
        '--codex-bin',
        FAKE_CODEX,
      ],
      { cwd: ROOT, env: env(), stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve) =>
        createInterface({ input: child.stdout! }).once('line', resolve),
      );
      const port = new URL(url).port;
      const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
      const r = olp([
        'doctor',
        '--state-dir',
        stateDir,
        '--port',
        port,
        '--claude-bin',
        FAKE_CLAUDE,
        '--codex-bin',
        FAKE_CODEX,
      ]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        new RegExp(
          `^port\\s+ok  127\\.0\\.0\\.1:${port}: olp is running here \\(pid ${child.pid}, version ${version.replace(/\./g, '\\.')}; /health: ok\\)$`,
          'm',
        ),
      );
      assert.doesNotMatch(r.stdout, /IN USE/);
      // Checked on another port: the line says where this state dir's olp is.
      const other = olp([
        'doctor',
        '--state-dir',
        stateDir,
        '--port',
        '1',
        '--claude-bin',
        FAKE_CLAUDE,
        '--codex-bin',
        FAKE_CODEX,
      ]);
      assert.match(
        other.stdout,
        new RegExp(
          `^olp\\s+running for this state dir: pid ${child.pid}, version .*, ${url.replace(/[.]/g, '\\.')}$`,
          'm',
        ),
      );
      // Read-only commands work beside it.
      assert.equal(olp(['keys', 'list', '--state-dir', stateDir]).status, 0);
      assert.equal(olp(['usage', '--state-dir', stateDir]).status, 0);
      assert.equal(olp(['sessions', 'list', '--state-dir', stateDir]).status, 0);
    } finally {
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    }
  });

  it('a CLI logged in by an API key or token: no --claude-credentials / --codex-auth fix although the login file is missing', () => {
    for (const method of ['oauth_token', 'api_key']) {
      const r = olp(
        [
          'doctor',
          '--state-dir',
          join(base, 'doctor-token'),
          '--port',
          '0',
          '--claude-bin',
          FAKE_CLAUDE,
          '--codex-bin',
          FAKE_CODEX,
        ],
        {
          OLP_CLAUDE_ENV: JSON.stringify({ FAKE_CLAUDE_AUTH_METHOD: method }),
          OLP_CODEX_ENV: JSON.stringify({ FAKE_CODEX_LOGIN: 'api-key' }),
        },
      );
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /^claude .*API key or token .*\(missing\)/m);
      assert.match(r.stdout, /^codex .*API key or token /m);
      assert.doesNotMatch(r.stdout, /--claude-credentials|--codex-auth/, r.stdout);
    }
    // Logged in by the login file that olp does not see: the fix is still given.
    const file = olp([
      'doctor',
      '--state-dir',
      join(base, 'doctor-token'),
      '--port',
      '0',
      '--claude-bin',
      FAKE_CLAUDE,
      '--codex-bin',
      FAKE_CODEX,
    ]);
    assert.match(file.stdout, /point --claude-credentials at it/);
  });
});

describe('olp serve says at start what will work', () => {
  interface Started {
    child: ChildProcess;
    firstLine: string;
    /** Resolves with stderr's text once `until` matches it. */
    stderrUntil(until: RegExp): Promise<string>;
    stop(): Promise<number | null>;
  }

  async function start(args: string[], extra: Record<string, string> = {}): Promise<Started> {
    const child = spawn(process.execPath, [OLP_BIN, 'serve', '--port', '0', ...args], {
      cwd: ROOT,
      env: env(extra),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const waiters: (() => void)[] = [];
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
      for (const w of waiters.splice(0)) w();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const firstLine = await new Promise<string>((resolve) =>
      createInterface({ input: child.stdout! }).once('line', resolve),
    );
    return {
      child,
      firstLine,
      stderrUntil: async (until) => {
        const deadline = Date.now() + 20_000;
        while (!until.test(stderr) && Date.now() < deadline)
          await new Promise<void>((r) => waiters.push(r) && setTimeout(r, 200));
        return stderr;
      },
      stop: () => {
        child.kill('SIGTERM');
        return exited;
      },
    };
  }

  // The human lines, not the JSON log (whose no_keys line names the same command).
  const human = (stderr: string) => stderr.split('\n').filter((l) => l && !l.startsWith('{'));
  const KEY_STEP = /^ {2}\S.*keys add NAME.*\n/m;

  it('each CLI with its path, version and readiness, then the keys-add step when there is no key', async () => {
    const stateDir = join(base, 'serve-first');
    const s = await start(['--state-dir', stateDir, '--claude-bin', FAKE_CLAUDE, '--codex-bin', FAKE_CODEX], {
      OLP_CODEX_ENV: JSON.stringify({ FAKE_CODEX_LOGGED_IN: '0' }),
    });
    try {
      assert.match(s.firstLine, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const stderr = await s.stderrUntil(KEY_STEP);
      // The summary for a person first and once: no JSON log lines before it or repeating it.
      assert.equal(stderr.split('\n')[0], 'CLIs:', stderr);
      assert.ok(!stderr.split('\n').some((l) => l.startsWith('{')), stderr);
      assert.equal(stderr.split('keys add NAME').length, 2, stderr);
      const lines = human(stderr);
      assert.ok(
        lines.some((l) =>
          new RegExp(`^ {2}claude\\s+${FAKE_CLAUDE}\\s+2\\.1\\.197 \\(Claude Code\\)\\s+ready \\(logged in\\)$`).test(
            l,
          ),
        ),
        lines.join('\n'),
      );
      assert.ok(
        lines.some((l) =>
          new RegExp(
            `^ {2}codex\\s+${FAKE_CODEX}\\s+codex-cli 0\\.171\\.0\\s+NOT logged in; log in with: ${FAKE_CODEX} login$`,
          ).test(l),
        ),
        lines.join('\n'),
      );
      const step = lines.findIndex((l) => l.startsWith('No API key yet'));
      assert.ok(step >= 0, lines.join('\n'));
      // From the source checkout, with no `olp` on PATH: the npm script, which builds first.
      assert.equal(lines[step + 1], `  npm run olp -- keys add NAME --state-dir ${stateDir}`);
    } finally {
      assert.equal(await s.stop(), 0);
    }
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(
      pkg.scripts.olp,
      'npm run build --silent && node dist/src/cli/main.js',
      'npm run olp works before the first npm start',
    );
    assert.equal(pkg.scripts.prepare, undefined);

    // With a key, no next step; a CLI that is not there says how to install it.
    assert.equal(olp(['keys', 'add', 'me', '--state-dir', stateDir]).status, 0);
    const again = await start([
      '--state-dir',
      stateDir,
      '--claude-bin',
      FAKE_CLAUDE,
      '--codex-bin',
      join(base, 'no-such', 'codex'),
    ]);
    try {
      const lines = human(await again.stderrUntil(/^ {2}codex .*\n/m));
      assert.ok(
        lines.some((l) =>
          /^ {2}codex\s+not installed \(nothing runnable at .*\); install it with: npm install -g @openai\/codex/.test(
            l,
          ),
        ),
        lines.join('\n'),
      );
      assert.ok(!lines.some((l) => l.startsWith('No API key yet')));
    } finally {
      assert.equal(await again.stop(), 0);
    }
  });

  it('--log-format json: stderr is JSON lines only, the summary one record of them', async () => {
    const s = await start([
      '--state-dir',
      join(base, 'serve-json'),
      '--claude-bin',
      FAKE_CLAUDE,
      '--codex-bin',
      FAKE_CODEX,
      '--log-format',
      'json',
    ]);
    try {
      const stderr = await s.stderrUntil(/"event":"startup"/);
      const records = stderr
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event?: string; msg: string });
      const summary = records.find((r) => r.event === 'startup');
      assert.match(summary?.msg ?? '', /^CLIs:\n {2}claude /);
    } finally {
      assert.equal(await s.stop(), 0);
    }
  });

  it('--host 0.0.0.0 prints addresses other devices can use, not only 0.0.0.0', async () => {
    const stateDir = join(base, 'serve-lan');
    const s = await start([
      '--state-dir',
      stateDir,
      '--host',
      '0.0.0.0',
      '--claude-bin',
      FAKE_CLAUDE,
      '--codex-bin',
      FAKE_CODEX,
    ]);
    try {
      assert.match(s.firstLine, /^http:\/\/0\.0\.0\.0:\d+\/v1$/);
      const port = new URL(s.firstLine).port;
      const lines = human(await s.stderrUntil(KEY_STEP));
      const at = lines.findIndex((l) =>
        /^(Other devices can reach olp at|No network address besides loopback)/.test(l),
      );
      assert.ok(at >= 0, lines.join('\n'));
      assert.match(lines[at + 1]!, new RegExp(`^ {2}http://(?!0\\.0\\.0\\.0)[^\\s/]+:${port}/v1$`));
    } finally {
      assert.equal(await s.stop(), 0);
    }
  });
});
