// olp as a user runs it: the built CLI entry, started exactly as the README says.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import OpenAI from 'openai';
import { FAKE_CLAUDE, OLP_BIN } from '../support/paths.js';
import { recordedPids, waitGone } from '../support/procs.js';
import { runDirFor } from '../../src/workspace/index.js';

const base = mkdtempSync(join(tmpdir(), 'olp-cli-'));
const daemons: ChildProcess[] = [];
after(() => {
  // A test that failed half-way must not leave its daemon running.
  for (const d of daemons) if (d.exitCode === null && d.signalCode === null) d.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

function olp(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [OLP_BIN, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: base, ...env },
  });
}

describe('olp keys', () => {
  const stateDir = join(base, 'keys-state');
  it('add prints the token alone on the last line of stdout; list never shows it; revoke works', () => {
    const add = olp(['keys', 'add', 'alice', '--state-dir', stateDir]);
    assert.equal(add.status, 0, add.stderr);
    const token = add.stdout.trim().split('\n').at(-1)!;
    assert.match(token, /^olpk_[A-Za-z0-9_-]{43}$/);
    const list = olp(['keys', 'list', '--state-dir', stateDir]);
    assert.equal(list.status, 0);
    assert.match(list.stdout, /alice\s+owner/);
    assert.ok(!list.stdout.includes(token));
    assert.equal(olp(['keys', 'add', 'bob', '--state-dir', stateDir]).status, 0);
    assert.match(olp(['keys', 'list', '--state-dir', stateDir]).stdout, /bob\s+member/);
    assert.equal(olp(['keys', 'revoke', 'alice', '--state-dir', stateDir]).status, 0);
    assert.equal(olp(['keys', 'revoke', 'alice', '--state-dir', stateDir]).status, 1);
    assert.equal(olp(['keys', 'add', 'bad name!', '--state-dir', stateDir]).status, 1);
  });
  it('extra usage: members may not draw on it by default; set --overage changes that', () => {
    assert.match(olp(['keys', 'show', 'bob', '--state-dir', stateDir]).stdout, /extra usage\s+deny \(member default\)/);
    assert.equal(olp(['keys', 'set', 'bob', '--overage', 'allow', '--state-dir', stateDir]).status, 0);
    assert.match(olp(['keys', 'show', 'bob', '--state-dir', stateDir]).stdout, /extra usage\s+allow\n/);
    const bad = olp(['keys', 'set', 'bob', '--overage', 'maybe', '--state-dir', stateDir]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--overage must be allow, deny or default/);
  });
  it('state dir is 0700 and the database 0600', () => {
    assert.equal(statSync(stateDir).mode & 0o777, 0o700);
    for (const f of readdirSync(stateDir).filter((n) => n.startsWith('olp.db')))
      assert.equal(statSync(join(stateDir, f)).mode & 0o777, 0o600, f);
  });
  it('usage errors exit 2 and name the problem', () => {
    const r = olp(['serve', '--port', 'eighty', '--state-dir', stateDir]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /flag --port: expected an integer/);
    const e = olp(['serve', '--state-dir', stateDir], { OLP_PORT: 'abc' });
    assert.equal(e.status, 2);
    assert.match(e.stderr, /env OLP_PORT/);
    assert.equal(olp(['serve', '--no-such-flag']).status, 2);
    assert.equal(olp(['frobnicate']).status, 2);
  });
});

describe('olp serve', () => {
  it('prints the base URL, serves the SDK, survives garbage HTTP, and on SIGTERM drains in-flight work and exits 0', async () => {
    const stateDir = join(base, 'serve-state');
    const records = join(base, 'records');
    spawnSync('mkdir', ['-p', records]);
    const token = olp(['keys', 'add', 'me', '--state-dir', stateDir]).stdout.trim().split('\n').at(-1)!;
    const child = spawn(
      process.execPath,
      [OLP_BIN, 'serve', '--state-dir', stateDir, '--port', '0', '--claude-bin', FAKE_CLAUDE, '--shutdown-grace', '10'],
      {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: base,
          OLP_CLAUDE_ENV: JSON.stringify({ FAKE_CLAUDE_RECORD_DIR: records }),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    daemons.push(child);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const firstLine = await new Promise<string>((resolve) =>
      createInterface({ input: child.stdout! }).once('line', resolve),
    );
    assert.match(firstLine, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const client = new OpenAI({ baseURL: firstLine, apiKey: token, maxRetries: 0 });
    const ok = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'hello' }],
    });
    assert.match(ok.choices[0]?.message.content ?? '', /hello/);

    // Malformed HTTP: a 400 envelope, then the socket is closed; the server stays up.
    const port = Number(new URL(firstLine).port);
    const answer400 = await new Promise<string>((resolve) => {
      let got = '';
      const s = createConnection(port, '127.0.0.1', () => s.write('NOT HTTP AT ALL\r\n\r\n'));
      s.on('data', (d: Buffer) => (got += d.toString('utf8')));
      s.on('close', () => resolve(got));
      s.on('error', () => resolve(got));
    });
    assert.match(answer400, /^HTTP\/1\.1 400 /);
    assert.match(answer400, /"code":"malformed_request"/);
    assert.equal((await fetch(`${firstLine.replace('/v1', '')}/health`)).status, 200);

    // A slow request in flight when SIGTERM arrives still completes.
    const slow = client.chat.completions.create({
      model: 'sonnet',
      messages: [
        { role: 'system', content: '[[fake:slow]]' },
        { role: 'user', content: 'slow one' },
      ],
    });
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGTERM');
    const answer = await slow;
    assert.match(answer.choices[0]?.message.content ?? '', /slow one/);
    assert.equal(await exited, 0);
    assert.deepEqual(await waitGone(recordedPids(records).runs), []);
    assert.ok(!existsSync(runDirFor(stateDir)), 'no workspace left, and no run dir');
  });
});
