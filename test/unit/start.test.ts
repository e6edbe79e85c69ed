import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import {
  findExecutable,
  signalGroup,
  starterInfo,
  starters,
  type Child,
  type StartOptions,
} from '../../src/process/start.js';
import { ROOT } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-start-'));
after(() => rmSync(base, { recursive: true, force: true }));
const PATH = process.env.PATH ?? '/usr/bin:/bin';

function read(stream: Readable | null): Promise<string> {
  if (!stream) return Promise.resolve('');
  return new Promise((resolve) => {
    let out = '';
    stream.on('data', (c: Buffer) => (out += c.toString('utf8')));
    stream.on('close', () => resolve(out));
  });
}

async function run(start: (o: StartOptions) => Child, opts: Partial<StartOptions> & { command: string }, input = '') {
  const child = start({ args: [], env: { PATH }, cwd: base, ...opts });
  const out = read(child.stdout);
  const err = read(child.stderr);
  child.stdin?.on('error', () => {});
  child.stdin?.end(input);
  const exited = await child.exited;
  return { child, exited, stdout: await out, stderr: await err };
}

/**
 * What /proc says of the shell the starter started, read by the shell itself (a `cat` would read
 * its own; and the shell blocks every signal while it forks one).
 */
const STATUS =
  'while read -r l; do echo "$l"; done </proc/self/status; echo; read -r l </proc/self/stat; echo "$l"; echo; ls /proc/$$/fd';
/** glibc's own signals (32, 33): posix_spawn leaves them ignored; glibc programs take them back at start-up. */
const LIBC_INTERNAL = 0x180000000n;

/** This process's descriptors above 2 that are not close-on-exec. */
function inheritedOpen(): string[] {
  return readdirSync('/proc/self/fdinfo').filter((fd) => {
    try {
      const flags = /^flags:\s+(\d+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      return Number(fd) > 2 && flags !== undefined && (parseInt(flags, 8) & 0o2000000) === 0;
    } catch {
      return false;
    }
  });
}

for (const [name, start] of Object.entries(starters) as [string, ((o: StartOptions) => Child) | undefined][]) {
  describe(`starting a CLI process (${name})`, () => {
    if (!start) return;

    it('feeds stdin, reads stdout and stderr, reports the exit code', async () => {
      const r = await run(start, { command: 'sh', args: ['-c', 'cat; echo oops >&2; exit 3'] }, 'hello\nworld');
      assert.equal(r.stdout, 'hello\nworld');
      assert.equal(r.stderr, 'oops\n');
      assert.deepEqual(r.exited, { code: 3, signal: null });
      assert.ok(r.child.stdin?.destroyed, 'stdin is closed once the process has exited');
    });

    it('reports a signal by name', async () => {
      const r = await run(start, { command: 'sh', args: ['-c', 'kill -TERM $$'] });
      assert.deepEqual(r.exited, { code: null, signal: 'SIGTERM' });
    });

    it('runs in the given cwd with exactly the given environment', async () => {
      const r = await run(start, {
        command: 'sh',
        args: ['-c', 'pwd; env | sort'],
        env: { PATH, HOME: '/nowhere', ODD: 'a=b c' },
      });
      const [cwd, ...env] = r.stdout.trim().split('\n');
      assert.equal(cwd, base);
      assert.deepEqual(
        env.filter((l) => !/^(PWD|SHLVL|_)=/.test(l)),
        ['HOME=/nowhere', 'ODD=a=b c', `PATH=${PATH}`],
      );
    });

    it('gives the child a session of its own, default signal handling, an empty mask and only fds 0-2', async () => {
      const r = await run(start, { command: 'sh', args: ['-c', STATUS] });
      const [status = '', stat = '', fds = ''] = r.stdout.split('\n\n');
      const field = (k: string) => new RegExp(`^${k}:\\s+(\\S+)`, 'm').exec(status)?.[1];
      assert.equal(field('SigBlk'), '0000000000000000');
      assert.equal(
        BigInt(`0x${field('SigIgn')}`) & ~LIBC_INTERNAL,
        0n,
        'SIGPIPE and the rest are not ignored (Node ignores SIGPIPE)',
      );
      // stat: pid (comm) state ppid pgrp session
      const [pid, , , , pgrp, session] = stat.split(' ');
      assert.equal(pgrp, pid, 'process group leader');
      assert.equal(session, pid, 'session leader');
      // Only what this test process itself inherited without close-on-exec may pass on (the
      // daemon closes those at start-up); nothing the starter or Node opened.
      const leaks = fds
        .trim()
        .split(/\s+/)
        .filter((fd) => Number(fd) > 2 && !inheritedOpen().includes(fd));
      assert.deepEqual(leaks, [], 'no descriptor of the daemon leaks into the child');
    });

    it('looks the command up in the PATH it is given', async () => {
      const dir = mkdtempSync(join(base, 'bin-'));
      writeFileSync(join(dir, 'only-here'), '#!/bin/sh\necho found "$0"\n');
      chmodSync(join(dir, 'only-here'), 0o755);
      const r = await run(start, { command: 'only-here', env: { PATH: `${dir}:${PATH}` } });
      assert.equal(r.stdout, `found ${join(dir, 'only-here')}\n`);
    });

    for (const [what, opts, code] of [
      ['a command that is not there', { command: 'olp-no-such-cli' }, 'ENOENT'],
      ['a path that is not there', { command: join(base, 'nope') }, 'ENOENT'],
      ['a file that is not executable', { command: join(ROOT, 'package.json') }, 'EACCES'],
      ['a cwd that is not there', { command: 'sh', cwd: join(base, 'gone') }, 'ENOENT'],
    ] as const) {
      it(`reports ${what} as a spawn error (${code}) with no process`, async () => {
        const child = start({ args: [], env: { PATH }, cwd: base, ...opts });
        assert.equal(child.pid, undefined);
        const exited = await child.exited;
        assert.ok('spawnError' in exited);
        assert.equal(exited.spawnError.code, code);
        assert.match(exited.spawnError.message, new RegExp(`^spawn .* ${code}$`));
      });
    }

    it('leaves no zombie: the exited child is reaped', async () => {
      const r = await run(start, { command: 'true' });
      assert.deepEqual(r.exited, { code: 0, signal: null });
      const pid = r.child.pid!;
      // A zombie keeps its /proc entry with state Z until it is reaped.
      const state = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] : 'gone';
      assert.equal(state, 'gone');
    });

    it('a large input and output pass whole (backpressure both ways)', async () => {
      const big = 'x'.repeat(3 * 1024 * 1024);
      const r = await run(start, { command: 'cat' }, big);
      assert.equal(r.stdout.length, big.length);
    });
  });
}

describe('the starter in use', () => {
  it('is posix_spawn on Linux when the native starter was built, and says why not otherwise', () => {
    const built = existsSync(join(ROOT, 'src/native/build/Release/olp_spawn.node'));
    const info = starterInfo();
    if (process.platform === 'linux' && built && process.env.OLP_NATIVE_SPAWN !== '0')
      assert.deepEqual(info, { kind: 'posix_spawn' });
    else {
      assert.equal(info.kind, 'node');
      assert.ok(info.reason);
    }
  });
});

describe('signalGroup', () => {
  it("signals a child's whole group, and says false, without throwing, once the group is gone", async () => {
    const start = starters.native ?? starters.node;
    // A leader and a grandchild in its group; both must go.
    const child = start({
      command: 'sh',
      args: ['-c', 'sleep 30 & echo $!; wait'],
      env: { PATH: process.env.PATH ?? '' },
      cwd: '/',
    });
    child.stdin?.end();
    const grandchild = Number(
      await new Promise<string>((resolve) => child.stdout!.once('data', (b: Buffer) => resolve(b.toString().trim()))),
    );
    assert.equal(signalGroup(child.pid!, 'SIGKILL'), true);
    const exit = await child.exited;
    assert.equal('signal' in exit ? exit.signal : undefined, 'SIGKILL');
    for (
      let i = 0;
      i < 50 && existsSync(`/proc/${grandchild}`) && !readFileSync(`/proc/${grandchild}/stat`, 'utf8').includes(') Z');
      i++
    )
      await new Promise((r) => setTimeout(r, 10));
    const left = existsSync(`/proc/${grandchild}`) ? readFileSync(`/proc/${grandchild}/stat`, 'utf8') : '';
    assert.ok(left === '' || left.includes(') Z'), `the grandchild still runs: ${left}`);
    // (The killed grandchild stays in the group until init reaps it, which a sandbox may never do.)
    const alone = start({ command: 'sleep', args: ['30'], env: { PATH: process.env.PATH ?? '' }, cwd: '/' });
    alone.stdin?.end();
    assert.equal(signalGroup(alone.pid!, 'SIGKILL'), true);
    await alone.exited;
    assert.equal(signalGroup(alone.pid!, 'SIGTERM'), false, 'an empty group');
    assert.equal(signalGroup(0, 'SIGKILL'), false, 'never the caller’s own group');
    assert.equal(signalGroup(1, 'SIGKILL'), false);
  });
});

describe('findExecutable', () => {
  it('takes the first runnable file on PATH, past missing dirs, files in the way and files it may not run', () => {
    const dir = mkdtempSync(join(base, 'path-'));
    const notDir = join(dir, 'a-file');
    writeFileSync(notDir, '');
    const withTool = (name: string, mode: number) => {
      const d = join(dir, name);
      mkdirSync(d);
      writeFileSync(join(d, 'tool'), '#!/bin/sh\n');
      chmodSync(join(d, 'tool'), mode);
      return d;
    };
    const plain = withTool('plain', 0o644);
    const runnable = withTool('runnable', 0o755);
    // ENOENT, ENOTDIR (a file where a directory should be), a file it may not run, then the one.
    const before = [join(dir, 'missing'), notDir, plain];
    assert.equal(findExecutable('tool', [...before, runnable].join(':')), join(runnable, 'tool'));
    assert.equal(findExecutable('tool', before.join(':')), undefined);
    assert.equal(findExecutable(join(runnable, 'tool'), ''), join(runnable, 'tool'));
  });
});
