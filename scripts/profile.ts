// A CPU profile of olp's own work per request: builds the native fake CLI, starts
// `olp serve --cpu-prof` on it (sessions on, default logging), sends N sequential requests, stops
// it, and prints where the daemon's main thread spent its time (self time by function and by
// file). Usage: npm run profile -- [--requests 500] [--keep DIR]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../test/support/paths.js';
import { addKey, serve } from './daemon.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

// --warm: continued conversations of 20 turns (turns 2..20 go to a live worker) instead of new ones.
const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '500' },
    keep: { type: 'string' },
    warm: { type: 'boolean', default: false },
  },
});
const requests = Number(values.requests);
const dir = mkdtempSync(join(tmpdir(), 'olp-profile-'));
const profDir = values.keep ?? join(dir, 'prof');
try {
  const bin = join(dir, 'fast-claude');
  if (spawnSync('cc', ['-O2', '-o', bin, join(ROOT, 'test/fixtures/native/fast-claude.c')]).status !== 0)
    throw new Error('needs a C compiler (cc) for the native fake CLI');
  // The daemon's settings that a profile may vary, from this process's environment.
  const passed = Object.fromEntries(
    ['OLP_NATIVE_SPAWN', 'OLP_PRESTART', 'OLP_WORKERS'].flatMap((k) =>
      process.env[k] === undefined ? [] : [[k, process.env[k]!]],
    ),
  );
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    OLP_CLAUDE_ENV: JSON.stringify({ FAKE_CLAUDE_REPLY: 'ok' }),
    ...passed,
  };
  const state = join(dir, 'state');
  const token = addKey(state, 'profile', env);
  const { daemon, base } = serve({
    stateDir: state,
    env,
    nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profDir],
    args: ['--claude-bin', bin],
  });
  daemon.stderr!.resume();
  const url = `${await base}/v1`;
  const messages: { role: string; content: string }[] = [];
  for (let i = 0; i < requests; i++) {
    if (!values.warm || messages.length >= 40) messages.length = 0;
    messages.push({ role: 'user', content: `say ok ${i}` });
    const res = await fetch(`${url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sonnet', messages }),
    });
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    messages.push({ role: 'assistant', content: body.choices[0]!.message.content });
  }
  daemon.kill('SIGTERM');
  await new Promise((r) => daemon.once('exit', r));

  const profile = JSON.parse(
    readFileSync(join(profDir, readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'))!), 'utf8'),
  ) as Profile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const n = nodes.get(id)!;
    const fn = n.callFrame.functionName;
    if (fn === '(idle)' || fn === '(program)') return;
    const t = profile.timeDeltas[i] ?? 0;
    busy += t;
    const file =
      n.callFrame.url
        .replace(/^.*node_modules\//, '')
        .replace(/^file:\/\/.*?\/dist\//, '')
        .split('/')
        .slice(-2)
        .join('/') || '(native)';
    byFunction.set(`${fn || '(anonymous)'}  ${file}`, (byFunction.get(`${fn || '(anonymous)'}  ${file}`) ?? 0) + t);
    byFile.set(file, (byFile.get(file) ?? 0) + t);
  });
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, t]) => `  ${((t / busy) * 100).toFixed(1).padStart(5)}%  ${k}`)
      .join('\n');
  console.log(
    `main thread busy ${(busy / 1000 / requests).toFixed(2)} ms per request (${requests} sequential requests, profiler overhead included)`,
  );
  console.log(`by function:\n${top(byFunction, 25)}\nby file:\n${top(byFile, 15)}`);
  if (values.keep) console.log(`profile kept in ${profDir} (open it in Chrome DevTools, Performance tab)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
