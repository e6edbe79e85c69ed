// A family of three sets olp up as docs/family.md's "Accounts and terms" types it: the owner on the
// machine's own login, each other member on a login of their own, added and bound while olp runs.
// Every request is then served by its member's login alone.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import OpenAI from 'openai';
import { FAKE_CLAUDE, FAKE_CODEX, OLP_BIN } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-family-'));
const daemons: ChildProcess[] = [];
after(() => {
  for (const d of daemons) if (d.exitCode === null) d.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

const home = join(base, 'home');
const stateDir = join(base, 'state');
const records = join(base, 'records');
const env = {
  PATH: process.env.PATH ?? '',
  HOME: home,
  OLP_STATE_DIR: stateDir,
  OLP_CLAUDE_BIN: FAKE_CLAUDE,
  OLP_CODEX_BIN: FAKE_CODEX,
  OLP_CLAUDE_ENV: JSON.stringify({ FAKE_CLAUDE_RECORD_DIR: records }),
  OLP_CODEX_ENV: JSON.stringify({ FAKE_CODEX_RECORD_DIR: records }),
};

/** `olp ARGS… [< input]` as a shell runs it, off the event loop. */
function olp(args: string[], input = ''): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [OLP_BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.on('close', (code) => resolve({ code, out, err }));
    child.stdin.end(input);
  });
}

const lastLine = (s: string) => s.trim().split('\n').at(-1)!;

describe('a family of three, each on their own login', () => {
  it('the commands as typed: every request of a member is served by that member’s login only', async () => {
    mkdirSync(join(home, '.claude'), { recursive: true });
    mkdirSync(records, { recursive: true });
    writeFileSync(join(home, '.claude', '.credentials.json'), '{"claudeAiOauth":{"accessToken":"owner"}}');
    const dadToken = `sk-ant-oat01-dad-${'d'.repeat(30)}`;
    const kidKey = 'sk-proj-kid-0123456789abcdef';
    writeFileSync(join(base, 'dad-token.txt'), `${dadToken}\n`);

    const mum = lastLine((await olp(['keys', 'add', 'mum'])).out);
    const child = spawn(process.execPath, [OLP_BIN, 'serve', '--port', '0'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    daemons.push(child);
    const url = await new Promise<string>((r) => createInterface({ input: child.stdout! }).once('line', r));

    // While olp serves: dad's token (made with `claude setup-token` on his own machine), the kid's
    // codex on an API key of the kid's own; each key bound to its login.
    const added = [
      await olp(['logins', 'add', 'dad', '--claude'], readFileSync(join(base, 'dad-token.txt'), 'utf8')),
      await olp(['logins', 'add', 'kid', '--codex', '--api-key'], `${kidKey}\n`),
    ];
    for (const r of added) assert.equal(r.code, 0, r.err);
    const dad = await olp(['keys', 'add', 'dad', '--login', 'dad']);
    const kid = await olp(['keys', 'add', 'kid', '--login', 'kid', '--models', 'codex,gpt-*']);
    assert.equal(dad.code, 0, dad.err);
    assert.equal(kid.code, 0, kid.err);
    const list = await olp(['logins', 'list']);
    assert.match(list.out, /^machine\s.*\bmum\b/m);
    assert.match(list.out, /^dad\s+setup-token\s+-\s+dad\b/m);
    assert.match(list.out, /^kid\s+-\s+api-key\s+kid\b/m);

    const ask = (token: string, model: string) =>
      new OpenAI({ baseURL: url, apiKey: token, maxRetries: 0 }).chat.completions.create({
        model,
        messages: [{ role: 'user', content: `hi from ${model}` }],
      });
    await Promise.all([
      ask(mum, 'sonnet'),
      ask(lastLine(dad.out), 'sonnet'),
      ask(lastLine(dad.out), 'sonnet'),
      ask(lastLine(kid.out), 'codex'),
    ]);
    // dad has no codex login: refused with the fix, not served by the machine's.
    await assert.rejects(ask(lastLine(dad.out), 'codex'), (e: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(e.status, 503);
      assert.match(e.message, /olp logins add dad --codex/);
      return true;
    });

    const seen = readdirSync(records)
      .filter((f) => f.endsWith('.json'))
      .map(
        (f) =>
          JSON.parse(readFileSync(join(records, f), 'utf8')) as {
            backend?: string;
            credential: Record<string, string | null>;
          },
      );
    const summary = seen.map((r) =>
      r.backend === 'codex'
        ? `codex:${r.credential.codexAuth?.includes(kidKey) ? 'kid' : 'other'}`
        : `claude:${r.credential.oauthToken === dadToken ? 'dad' : r.credential.claudeFile?.includes('owner') ? 'mum' : 'other'}`,
    );
    // Turns, and the spares and workers started for each member's next turns: all on their own login.
    assert.deepEqual([...new Set(summary)].sort(), ['claude:dad', 'claude:mum', 'codex:kid'], summary.join(' '));
    assert.ok(summary.filter((r) => r === 'claude:dad').length >= 2);
    const usage = await olp(['usage', '--by', 'login', '--json']);
    const groups = (JSON.parse(usage.out) as { groups: { group: string; requests: number }[] }).groups;
    // dad's refused codex request counts against his login too (an error, no tokens).
    assert.deepEqual(
      groups.map((g) => [g.group, g.requests]),
      [
        ['dad', 3],
        ['kid', 1],
        ['machine', 1],
      ],
    );
    child.kill('SIGTERM');
  });
});
