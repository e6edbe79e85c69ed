// pi (a pinned devDependency), headless, against a real listening olp on the fake claude,
// configured as docs/clients.md's "Coding agents" section says: a reply, and its own file writing and
// shell tools run on the model's calls, the model then answering their results.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ROOT } from '../support/paths.js';

const PI = join(ROOT, 'node_modules/.bin/pi');

let t: TestDaemon;
let scratch: string;
before(async () => {
  t = await startTestDaemon();
  scratch = mkdtempSync(join(tmpdir(), 'olp-agents-'));
});
after(async () => {
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs an agent; its stdout, stderr and exit status. */
function run(
  bin: string,
  args: string[],
  o: { cwd: string; env: Record<string, string> },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(bin, args, {
      cwd: o.cwd,
      env: { PATH: process.env.PATH!, OLP_KEY: t.token, ...o.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 90_000,
    });
    let stdout = '';
    let stderr = '';
    c.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    c.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    c.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const calling = (name: string, args: Record<string, unknown>, text: string) =>
  `${text} [[fake-tools:${JSON.stringify([{ name, arguments: args }])}]]`;

describe('pi through olp', { skip: !existsSync(PI) && 'pi is not installed' }, () => {
  /** pi with olp as a provider of its own (models.json in its agent dir), one prompt, no session kept. */
  function pi(prompt: string) {
    const home = mkdtempSync(join(scratch, 'pi-'));
    const agent = join(home, 'agent');
    mkdirSync(agent, { recursive: true });
    writeFileSync(
      join(agent, 'models.json'),
      JSON.stringify({
        providers: {
          olp: {
            baseUrl: t.baseURL,
            api: 'openai-completions',
            apiKey: 'OLP_KEY',
            compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
            models: [{ id: 'sonnet', reasoning: false }],
          },
        },
      }),
    );
    const work = mkdtempSync(join(scratch, 'pi-work-'));
    const env = { HOME: home, PI_CODING_AGENT_DIR: agent, PI_OFFLINE: '1', PI_TELEMETRY: '0' };
    return run(PI, ['--provider', 'olp', '--model', 'sonnet', '--no-session', '-p', prompt], { cwd: work, env }).then(
      (r) => ({ ...r, work }),
    );
  }

  it('a reply', async () => {
    const r = await pi('Say hi');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Hello from fake claude\. You said: Say hi/);
  });

  it('its write and bash tools run on the model’s calls, and the model answers their results', async () => {
    const w = await pi(calling('write', { path: 'hello.txt', content: 'written by pi\n' }, 'Write the file.'));
    assert.equal(w.status, 0, w.stderr);
    assert.equal(readFileSync(join(w.work, 'hello.txt'), 'utf8'), 'written by pi\n');
    assert.match(w.stdout, /echo: Successfully wrote 14 bytes to hello\.txt/);
    const b = await pi(calling('bash', { command: 'echo from-bash > bash-out.txt' }, 'Run it.'));
    assert.equal(b.status, 0, b.stderr);
    assert.equal(readFileSync(join(b.work, 'bash-out.txt'), 'utf8'), 'from-bash\n');
  });
});
