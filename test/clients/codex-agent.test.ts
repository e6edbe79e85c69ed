// codex (the real, pinned binary) as a client of a real listening olp on the fake claude, with
// codex's default configuration: only a model provider for olp, no feature switched off. Its
// default tools (functions, a sub-agent namespace, web search; with a gpt-* model also a custom
// apply_patch and tool search) get a deliberate answer each, and its tool loop works: a shell
// command it runs and a patch it applies land on disk.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { REAL_CODEX } from '../support/paths.js';

let t: TestDaemon;
let scratch: string;
before(async () => {
  // A gpt-* id makes codex offer its freeform apply_patch: here it is served by claude.
  t = await startTestDaemon({ config: { models: { 'gpt-5.5': { backend: 'claude', model: 'sonnet' } } } });
  scratch = mkdtempSync(join(tmpdir(), 'olp-codex-client-'));
});
after(async () => {
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** `codex exec` with a fresh CODEX_HOME holding only olp's provider; returns its output and work dir. */
async function codexExec(
  model: string,
  prompt: string,
  o: { daemon?: TestDaemon; home?: string; work?: string; resume?: boolean } = {},
): Promise<{ status: number | null; stdout: string; stderr: string; work: string; home: string }> {
  const d = o.daemon ?? t;
  const home = o.home ?? mkdtempSync(join(scratch, 'home-'));
  const work = o.work ?? mkdtempSync(join(scratch, 'work-'));
  writeFileSync(
    join(home, 'config.toml'),
    `model = "${model}"\nmodel_provider = "olp"\n\n[model_providers.olp]\nname = "olp"\nbase_url = "${d.baseURL}"\nenv_key = "OLP_KEY"\nwire_api = "responses"\n`,
  );
  const args = ['exec', '--skip-git-repo-check', '-s', 'workspace-write', '-C', work];
  return new Promise((resolve) => {
    const c = spawn(REAL_CODEX, [...args, ...(o.resume ? ['resume', '--last'] : []), prompt], {
      env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, OLP_KEY: d.token },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 90_000,
    });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    c.on('close', (status) => resolve({ status, stdout, stderr, work, home }));
  });
}

const calling = (calls: { name: string; arguments: Record<string, unknown> }[], text: string) =>
  `${text} [[fake-tools:${JSON.stringify(calls)}]]`;

const responses = () => t.logs.filter((l) => l.event === 'request' && l.path === '/v1/responses');

describe('codex with its default config, through olp', { skip: !existsSync(REAL_CODEX) && 'no codex binary' }, () => {
  for (const model of ['sonnet', 'gpt-5.5'])
    it(`${model}: a reply (codex's namespace and web search among its tools)`, async () => {
      const before = responses().length;
      const r = await codexExec(model, 'Say hi');
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /Hello from fake claude\. You said: Say hi/);
      const mine = responses().slice(before);
      assert.ok(mine.length > 0 && mine.every((l) => l.status === 200), JSON.stringify(mine));
      assert.ok(t.logs.some((l) => l.event === 'tools_dropped' && (l.types as string[]).includes('web_search')));
    });

  it('a shell tool loop: codex runs the command the model asked for, and the model answers its output', async () => {
    const r = await codexExec(
      'sonnet',
      calling([{ name: 'exec_command', arguments: { cmd: 'echo shell-ran > ran.txt' } }], 'Run it'),
    );
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(join(r.work, 'ran.txt'), 'utf8'), 'shell-ran\n');
    assert.match(r.stdout, /echo: .*Process exited with code 0/s);
    assert.deepEqual(
      responses()
        .slice(-2)
        .map((l) => l.run),
      ['cold', 'parked'],
    );
  });

  it('apply_patch (a custom freeform tool): the patch the model wrote lands on disk', async () => {
    const patch = '*** Begin Patch\n*** Add File: hello.txt\n+hello from the patch\n*** End Patch\n';
    const r = await codexExec('gpt-5.5', calling([{ name: 'apply_patch', arguments: { input: patch } }], 'Edit'));
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(join(r.work, 'hello.txt'), 'utf8'), 'hello from the patch\n');
    assert.match(r.stdout, /echo: .*Success\. Updated the following files:\nA hello\.txt/s);
    assert.deepEqual(
      responses()
        .slice(-2)
        .map((l) => l.run),
      ['cold', 'parked'],
    );
  });

  it('codex exec, then exec resume twice: the conversation goes on warm on one claude, its tool round trip parked', async () => {
    const w = await startTestDaemon({ config: { workers: true } });
    try {
      const first = await codexExec('sonnet', 'first question', { daemon: w });
      assert.match(first.stdout, /You said: first question/);
      const same = { daemon: w, home: first.home, work: first.work, resume: true };
      const second = await codexExec('sonnet', 'second question', same);
      assert.match(second.stdout, /You said: second question/);
      const third = await codexExec(
        'sonnet',
        calling([{ name: 'exec_command', arguments: { cmd: 'echo third' } }], 'third'),
        same,
      );
      assert.equal(third.status, 0, third.stderr);
      const runs = w.logs.filter((l) => l.event === 'request' && l.path === '/v1/responses').map((l) => l.run);
      assert.deepEqual(runs, ['cold', 'warm', 'warm', 'parked']);
    } finally {
      await w.close();
    }
  });
});
