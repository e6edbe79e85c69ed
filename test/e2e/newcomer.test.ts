// A newcomer's first ten minutes from a checkout, scripted as the README's "From a checkout" types it:
// a fresh clone, its dependencies, `npm start` with the user's own (fake) claude first on PATH,
// `npm run --silent olp -- keys add me --role owner`, `npm run --silent olp -- doctor`, and one request
// through the official client. olp must run the user's CLI, not the copy pinned in its own
// node_modules for the test tier. The README's commands are checked to be the ones run here, and its
// test command the one CI runs.
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
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, it } from 'node:test';
import OpenAI from 'openai';
import { FAKE_CLAUDE, ROOT } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-newcomer-'));
let server: ChildProcess | undefined;
after(() => {
  if (server?.pid) {
    try {
      process.kill(-server.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(base, { recursive: true, force: true });
});

it("the README's checkout commands are the ones run below, and its test command is CI's", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = /^### From a checkout\n([^]*?)^#/m.exec(readme);
  assert.ok(section, 'the README has a "From a checkout" section');
  const block = /```sh\n([^]*?)```/.exec(section[1]!);
  assert.ok(block, 'with a sh block');
  const commands = block[1]!
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean);
  assert.deepEqual(commands, ['npm install', 'npm start', 'npm test']);
  for (const c of ['npm run --silent olp -- keys add me --role owner', 'npm run --silent olp -- doctor'])
    assert.ok(section[1]!.includes(`\`${c}\``), `the section names \`${c}\``);
  const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8').split('\n');
  assert.ok(ci.includes('npm test'), '.ci/run runs npm test');
});

it('fresh clone → npm start → keys add → doctor → one answer from the user’s own claude', {
  skip: !existsSync(join(ROOT, '.git')) && 'not a git checkout',
}, async (ctx) => {
  const clone = join(base, 'olp');
  const t0 = performance.now();
  assert.equal(spawnSync('git', ['clone', '-q', ROOT, clone]).status, 0, 'git clone');
  // `npm install` itself is what CI runs on its clean clone; here the clone shares the installed modules.
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));

  const home = join(base, 'home');
  const userBin = join(base, 'user-bin');
  mkdirSync(join(home, '.claude'), { recursive: true });
  writeFileSync(join(home, '.claude', '.credentials.json'), '{}');
  mkdirSync(userBin);
  writeFileSync(
    join(userBin, 'claude'),
    `#!/bin/sh\nFAKE_CLAUDE_REPLY="hello from your own claude" exec "${FAKE_CLAUDE}" "$@"\n`,
  );
  chmodSync(join(userBin, 'claude'), 0o755);
  const stateDir = join(base, 'state');
  const env = {
    PATH: `${userBin}:${process.env.PATH ?? ''}`,
    HOME: home,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
  };
  const npm = (args: string[]) => spawnSync('npm', args, { cwd: clone, env, encoding: 'utf8' });

  // Before the first start: `npm run olp` builds by itself.
  const doctorFirst = npm(['run', '--silent', 'olp', '--', 'doctor', '--state-dir', stateDir]);
  assert.doesNotMatch(doctorFirst.stderr, /Cannot find module/, doctorFirst.stderr);
  assert.match(
    doctorFirst.stdout,
    new RegExp(`claude\\s+${join(userBin, 'claude').replaceAll('/', '\\/')}`),
    doctorFirst.stdout,
  );

  server = spawn('npm', ['start', '--', '--port', '0', '--state-dir', stateDir], {
    cwd: clone,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stderr = '';
  server.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const lines = createInterface({ input: server.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on('line', (l) => {
      if (/^http:\/\/\S+\/v1$/.test(l)) resolve(l);
    });
    server!.once('exit', (code) => reject(new Error(`npm start exited ${code}: ${stderr}`)));
  });
  const startedMs = performance.now() - t0;

  const add = npm(['run', '--silent', 'olp', '--', 'keys', 'add', 'me', '--role', 'owner', '--state-dir', stateDir]);
  assert.equal(add.status, 0, add.stderr);
  const token = add.stdout.trim().split('\n').at(-1)!;
  assert.match(token, /^olpk_/);

  const doctor = npm(['run', '--silent', 'olp', '--', 'doctor', '--state-dir', stateDir]);
  assert.match(doctor.stdout, /claude\s+\S+user-bin\/claude\s+2\.1\.197 \(Claude Code\)\s+logged in/, doctor.stdout);

  // The start-up lines named the user's claude, its version and that it is ready.
  const startup = /claude\s+\S*user-bin\/claude\s+2\.1\.197 \(Claude Code\)\s+ready/;
  for (let i = 0; i < 100 && !startup.test(stderr); i++) await new Promise((r) => setTimeout(r, 50));
  assert.match(stderr, /claude\s+\S*user-bin\/claude\s+2\.1\.197 \(Claude Code\)\s+ready/, stderr);
  const client = new OpenAI({ baseURL: url, apiKey: token, maxRetries: 0 });
  const reply = await client.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(reply.choices[0]?.message.content, 'hello from your own claude');
  ctx.diagnostic(
    `clone to first answer: ${((performance.now() - t0) / 1000).toFixed(1)} s (serving after ${(startedMs / 1000).toFixed(1)} s)`,
  );
  ctx.diagnostic(
    `start-up output:\n${url}\n${stderr
      .split('\n')
      .filter((l) => l && !l.startsWith('{'))
      .join('\n')}`,
  );

  process.kill(-server.pid!, 'SIGTERM');
  const code = await new Promise<number | null>((resolve) => server!.once('exit', (c) => resolve(c)));
  assert.ok(code === 0 || code === null || code === 143, `npm start ended with ${code}`);
});
