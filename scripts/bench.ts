// Latency olp adds to a CLI run: the same fake claude spawned (a) directly by a minimal Node
// script and (b) through a running olp, alternating, one-token non-streaming replies.
// Prints figures; it is not a test. Usage: npm run bench -- [--runs N]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseConfig } from '../src/config/index.js';
import { createLogger } from '../src/log/index.js';
import { startDaemon } from '../src/serve.js';
import { FAKE_CLAUDE } from '../test/support/paths.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '60' } } });
const runs = Number(values.runs);
const REPLY = 'ok';

function direct(): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(FAKE_CLAUDE, ['-p', '--output-format', 'stream-json', '--verbose', '--include-partial-messages', '--model', 'sonnet', '--tools='], {
      env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), FAKE_CLAUDE_REPLY: REPLY },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('exit', () => (out.includes('"type":"result"') ? resolve(performance.now() - started) : reject(new Error('no result'))));
    child.stdin.end('say ok');
  });
}

async function viaOlp(url: string, token: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'say ok' }] }),
  });
  const body = (await res.json()) as { choices?: { message: { content: string } }[] };
  if (body.choices?.[0]?.message.content !== REPLY) throw new Error(`unexpected reply ${JSON.stringify(body)}`);
  return performance.now() - started;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const stateDir = mkdtempSync(join(tmpdir(), 'olp-bench-'));
const config = parseConfig({ readFile: false, env: {}, overrides: { stateDir, port: 0, claudeBin: FAKE_CLAUDE, logLevel: 'silent', claudeEnv: { FAKE_CLAUDE_REPLY: REPLY } } });
const daemon = await startDaemon({ config, logger: createLogger('silent'), hostEnv: { PATH: process.env.PATH ?? '', HOME: stateDir } });
const { token } = daemon.store.keys.add('bench');
try {
  // Warm up both paths (page cache, JIT).
  for (let i = 0; i < 5; i++) {
    await direct();
    await viaOlp(daemon.url, token);
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < runs; i++) {
    a.push(await direct());
    b.push(await viaOlp(daemon.url, token));
  }
  const md = median(a);
  const mo = median(b);
  const figures = { runs, directMedianMs: +md.toFixed(1), olpMedianMs: +mo.toFixed(1), addedMs: +(mo - md).toFixed(1), ratio: +(mo / md).toFixed(3) };
  console.log('one-token non-streaming reply, fake claude, alternating runs');
  console.log(`  direct spawn  median ${figures.directMedianMs} ms`);
  console.log(`  through olp   median ${figures.olpMedianMs} ms`);
  console.log(`  olp adds      ${figures.addedMs} ms (olp/direct = ${figures.ratio})`);
  console.log(JSON.stringify(figures));
} finally {
  await daemon.close();
  rmSync(stateDir, { recursive: true, force: true });
}
