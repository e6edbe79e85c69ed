// The README's client snippets, run as they are written (only the address is this test's olp),
// so the documentation cannot drift from what works.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ROOT } from '../support/paths.js';

/** The code block after each `<!-- client-snippet: NAME -->` marker of the README. */
function snippets(): Map<string, { lang: string; code: string }> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const out = new Map<string, { lang: string; code: string }>();
  for (const m of readme.matchAll(/<!-- client-snippet: ([\w-]+) -->\n```(\w+)\n([^]*?)\n```/g)) out.set(m[1]!, { lang: m[2]!, code: m[3]! });
  return out;
}

let t: TestDaemon;
before(async () => {
  t = await startTestDaemon();
});
after(async () => t.close());

/** Runs a snippet in a child process (asynchronously: the olp it talks to runs in this one). */
async function run(name: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const s = snippets().get(name);
  assert.ok(s, `the README has no snippet '${name}'`);
  const code = s.code.replaceAll('http://127.0.0.1:8787/v1', t.baseURL);
  // Next to the repository's node_modules, so its imports resolve.
  const file = join(ROOT, 'dist', `.readme-snippet-${name}.${s.lang === 'python' ? 'py' : 'mjs'}`);
  writeFileSync(file, code);
  try {
    return await new Promise((resolve) => {
      execFile(s.lang === 'python' ? 'python3' : process.execPath, [file], { env: { PATH: process.env.PATH ?? '', OLP_KEY: t.token }, encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
        resolve({ status: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      });
    });
  } finally {
    rmSync(file, { force: true });
  }
}

describe("the README's client snippets", () => {
  it('openai for JavaScript', async () => {
    const r = await run('openai-js');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^Hello from fake claude\. You said: Say hi\nHello from fake claude\. You said: Count to 3\n$/);
  });

  const python = spawnSync('python3', ['-c', 'import openai'], { encoding: 'utf8' });
  it('openai for Python', { skip: python.status !== 0 ? "Python's openai package is not installed here (pip install openai); skipped" : false }, async () => {
    const r = await run('openai-python');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Hello from fake claude\. You said: Say hi\nHello from fake claude\. You said: Count to 3\n/);
  });

  it('the Vercel AI SDK', async () => {
    const r = await run('ai-sdk');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^Hello from fake claude\. You said: Say hi\n/);
    assert.match(r.stdout, /Hello from fake claude\. You said: Count to 3\n.*outputTokens/s);
    assert.match(r.stdout, /\{ city: 'fake', temp: 1 \}/);
  });

  it('LangChain', async () => {
    const r = await run('langchain');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^Hello from fake claude\. You said: Say hi\nHello from fake claude\. You said: Count to 3\n\{ city: 'fake', temp: 1 \}\n$/);
  });
});
