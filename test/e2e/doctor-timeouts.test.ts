// On a busy machine an answer can come late: olp doctor and olp serve's start say that a probe ran out
// of time, never that the port belongs to another program or that a CLI is not logged in. The slow
// parties are real: an olp stopped with SIGSTOP (the kernel still accepts connections for it), a
// listener that never answers, one that answers after longer than doctor once waited, and the fake
// claude's status command told to take its time.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, watch, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { createBackends, createDetector } from '../../src/backends/index.js';
import { runDoctor } from '../../src/cli/doctor.js';
import { parseConfig } from '../../src/config/index.js';
import { createWorkspaces } from '../../src/workspace/index.js';
import { FAKE_CLAUDE, FAKE_CODEX, OLP_BIN, ROOT } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-doctor-timeouts-'));
after(() => rmSync(base, { recursive: true, force: true }));

const hostEnv = { PATH: process.env.PATH ?? '', HOME: base };

function configFor(stateDir: string, port: number, extra: Record<string, unknown> = {}) {
  return parseConfig({
    readFile: false,
    env: {},
    overrides: { stateDir, port, claudeBin: FAKE_CLAUDE, codexBin: FAKE_CODEX, ...extra },
  });
}

/** No CLI to ask: the port tests look at the port line only, and need not wait for CLIs to start. */
const NO_CLIS = { claudeBin: '/nonexistent/claude', codexBin: '/nonexistent/codex' };

async function doctor(config: ReturnType<typeof configFor>, times: Parameters<typeof runDoctor>[3] = {}) {
  let text = '';
  const code = await runDoctor(config, hostEnv, (s) => (text += s), times);
  return { code, text, port: /^port +(.*)$/m.exec(text)?.[1] ?? '' };
}

/** Listens on a free loopback port; `onSocket` gets each accepted connection. */
async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

function close(server: Server, sockets: Set<Socket> = new Set()): Promise<void> {
  for (const s of sockets) s.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** `olp serve` on a free port for `stateDir`; resolves with the child and its port once it listens. */
async function serve(stateDir: string, args: string[] = [], env: Record<string, string> = {}) {
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
      ...args,
    ],
    { cwd: ROOT, env: { ...hostEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    void exited.then((code) => reject(new Error(`olp serve exited (${code}): ${stderr}`)));
  });
  return { child, port: Number(new URL(url).port), exited, stderr: () => stderr };
}

describe('olp doctor: a port whose /health answers late, or never', () => {
  it("this state dir's olp accepting but not answering (stopped): 'olp is running here but did not answer /health within …'", async () => {
    const stateDir = join(base, 'stopped');
    const olp = await serve(stateDir);
    olp.child.kill('SIGSTOP');
    try {
      const r = await doctor(configFor(stateDir, olp.port, NO_CLIS), { healthTimeoutMs: 300 });
      assert.match(
        r.port,
        new RegExp(
          `^busy  127\\.0\\.0\\.1:${olp.port}: olp is running here \\(pid ${olp.child.pid}, version \\S+\\) but did not answer /health within 0\\.3 s$`,
        ),
      );
      assert.doesNotMatch(r.text, /another program|PROBLEM/);
    } finally {
      olp.child.kill('SIGCONT');
      olp.child.kill('SIGTERM');
    }
    assert.equal(await olp.exited, 0);
  });

  it('something else that accepts and never answers: in use, late, not blamed on another program', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((s) => sockets.add(s));
    const port = await listen(silent);
    try {
      const r = await doctor(configFor(join(base, 'silent'), port, NO_CLIS), { healthTimeoutMs: 300 });
      assert.equal(
        r.port,
        `PROBLEM  127.0.0.1:${port} is in use: something accepted the connection but did not answer /health within 0.3 s (an olp of another state dir on a busy machine, or another program); pick another with --port`,
      );
      assert.doesNotMatch(r.text, /taken by another program/);
    } finally {
      await close(silent, sockets);
    }
  });

  it('an olp whose /health takes longer than doctor once waited (2 s) is still heard, with the default wait', async () => {
    const late = createHttpServer((_req, res) => {
      setTimeout(() => res.end('{"status":"ok"}'), 2200);
    });
    const port = await listen(late);
    try {
      const r = await doctor(configFor(join(base, 'late'), port, NO_CLIS));
      assert.equal(
        r.port,
        `PROBLEM  127.0.0.1:${port}: another olp answers here (/health: ok), not this state dir's; stop it or pick another --port`,
      );
    } finally {
      late.closeAllConnections();
      await close(late);
    }
  });

  it('a program that answers, but not as olp: taken by another program', async () => {
    const other = createHttpServer((_req, res) =>
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>no</h1>'),
    );
    const port = await listen(other);
    try {
      const r = await doctor(configFor(join(base, 'other'), port, NO_CLIS), { healthTimeoutMs: 300 });
      assert.equal(r.port, `PROBLEM  127.0.0.1:${port} is taken by another program; pick another with --port`);
    } finally {
      other.closeAllConnections();
      await close(other);
    }
  });
});

describe('a CLI status command that does not answer in time: the login was not checked, it did not fail', () => {
  const slow = { claudeEnv: { FAKE_CLAUDE_STATUS_DELAY_MS: '60000' } };

  it('olp doctor: LOGIN says not checked, a warning says why, and the CLI still counts as able to serve', async () => {
    // Only claude is slowed on purpose; on a loaded test machine the others may run late too, so
    // they are not asserted on.
    const r = await doctor(configFor(join(base, 'doctor-slow'), 0, slow), { statusTimeoutMs: 1000 });
    assert.equal(r.code, 0, r.text);
    assert.match(r.text, /^claude +\S+ +\S+.* +not checked +\S+\.credentials\.json/m);
    assert.match(
      r.text,
      /^ {2}claude's status command \(claude auth status\) did not answer within 1 s; its login was not checked; is the machine busy\? --status-timeout SECONDS waits longer$/m,
    );
    assert.match(r.text, /olp can serve: claude\b/);
    assert.doesNotMatch(r.text, /NOT logged in|failed|auth login/);
  });

  it("olp serve's start: the same words, with --status-timeout (a config setting)", async () => {
    const olp = await serve(join(base, 'serve-slow'), ['--status-timeout', '1'], {
      OLP_CLAUDE_ENV: JSON.stringify(slow.claudeEnv),
    });
    try {
      const summary = await new Promise<string>((resolve) => {
        const check = () => {
          if (/keys add NAME.*\n/.test(olp.stderr())) resolve(olp.stderr());
        };
        olp.child.stderr!.on('data', check);
        check();
      });
      assert.match(
        summary,
        /^ {2}claude +\S+ +\S.* {2}claude's status command \(claude auth status\) did not answer within 1 s; its login was not checked \(requests will tell\)$/m,
      );
      assert.doesNotMatch(summary, /NOT logged in|status command failed|No CLI can answer/);
    } finally {
      olp.child.kill('SIGTERM');
    }
    assert.equal(await olp.exited, 0);
  });

  it("olp serve stopped while its start's status commands run: it stops them and exits at once, saying nothing of them", async () => {
    const dump = join(base, 'serve-stop-dump');
    mkdirSync(dump);
    // The fake claude writes a file here as its status command starts: then the signal is sent.
    const started = new Promise<void>((resolve) => {
      const w = watch(dump, (_event, file) => {
        if (file?.startsWith('auth-status-')) {
          w.close();
          resolve();
        }
      });
    });
    const olp = await serve(join(base, 'serve-stop'), ['--status-timeout', '60'], {
      OLP_CLAUDE_ENV: JSON.stringify({ ...slow.claudeEnv, FAKE_CLAUDE_PROBE_DUMP: dump }),
    });
    await started;
    const at = Date.now();
    olp.child.kill('SIGTERM');
    assert.equal(await olp.exited, 0);
    assert.ok(Date.now() - at < 10_000, `took ${Date.now() - at} ms; the status command had 60 s`);
    assert.doesNotMatch(olp.stderr(), /CLIs:|status command/);
  });
});

describe("the daemon's CLI detection behind /health, asked again on a machine grown busy", () => {
  it('answers with the last detection while a slow re-check runs', async () => {
    const dir = join(base, 'refresh');
    const busy = join(dir, 'busy');
    mkdirSync(dir);
    const config = configFor(join(dir, 'state'), 0, {
      claudeEnv: { FAKE_CLAUDE_STATUS_DELAY_MS: '60000', FAKE_CLAUDE_STATUS_DELAY_IF: busy },
    });
    const { backends, probes } = createBackends(config, hostEnv);
    const claude = backends.find((b) => b.id === 'claude')!;
    const stop = new AbortController();
    // ttlMs 0: every call asks the CLI again, as /health does once its 30 s have passed.
    const detector = createDetector(hostEnv, probes, createWorkspaces(dir, { path: hostEnv.PATH }), {
      ttlMs: 0,
      timeoutMs: 60_000,
      signal: stop.signal,
    });
    try {
      const first = await detector.detect(claude);
      assert.equal(first.login, 'logged_in');
      writeFileSync(busy, '');
      const at = Date.now();
      const during = await detector.detect(claude);
      assert.ok(Date.now() - at < 5000, `waited ${Date.now() - at} ms for a re-check that takes 60 s`);
      assert.equal(during, first, 'the last detection, as it was');
    } finally {
      stop.abort(); // the re-check's status command, still waiting, is stopped
    }
  });
});
