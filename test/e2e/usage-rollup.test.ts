// `olp usage --from …` as the owner runs it: several instances' ledgers, read over HTTP with the
// owner keys of OLP_OWNER_KEYS or from export files, summed by the rules of `olp usage`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { UsageGroup } from '../../src/store/index.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { OLP_BIN } from '../support/paths.js';

let a: TestDaemon;
let b: TestDaemon;
let kid: string;

/** The built CLI, run without blocking this process (the instances it reads live here). */
function olp(args: string[], env: Record<string, string>, input?: string) {
  return new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [OLP_BIN, ...args],
      { env: { PATH: process.env.PATH ?? '', HOME: a.base, OLP_STATE_DIR: join(a.base, 'nowhere'), ...env } },
      (err, stdout, stderr) => resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(input ?? '');
  });
}

/** A loopback port nothing listens on. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const chat = (t: TestDaemon, token: string, model = 'sonnet') =>
  fetch(`${t.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });

const summary = (t: TestDaemon, by: 'key' | 'model') => t.daemon.store.usage.summarize({ scope: { all: true } }, by);
const parse = (stdout: string) => JSON.parse(stdout) as { by: string; groups: UsageGroup[] };

before(async () => {
  a = await startTestDaemon({ config: { instanceTag: 'a1' } });
  b = await startTestDaemon();
  kid = a.daemon.store.keys.add('kid', 'member').token;
  const sent = [chat(a, a.token), chat(a, a.token, 'codex'), chat(a, kid), chat(b, b.token), chat(b, b.token, 'codex')];
  for (const res of await Promise.all(sent)) assert.equal(res.status, 200);
  // A refused one: a model no CLI takes.
  assert.equal((await chat(b, b.token, 'no-such-model')).status, 404);
  // Rows are written once their responses have closed.
  for (let i = 0; i < 200; i++) {
    const n = (t: TestDaemon) => [...t.daemon.store.usage.export({ scope: { all: true } })].length;
    if (n(a) === 3 && n(b) === 3) break;
    await new Promise((r) => setTimeout(r, 20));
  }
});
after(async () => {
  await a?.close();
  await b?.close();
});

describe('olp usage --from', () => {
  it("two instances by URL: each key's rows as name@tag (or @URL), equal to each ledger's own summary", async () => {
    // A member key first: it is tried, refused as an owner's, and the next one is used.
    const r = await olp(['usage', '--from', a.url, '--from', `${b.baseURL}/`, '--json'], {
      OLP_OWNER_KEYS: `${kid}\n${a.token}  ${b.token}`,
    });
    assert.equal(r.status, 0, r.stderr);
    const got = parse(r.stdout);
    assert.equal(got.by, 'key');
    const want = [
      ...summary(a, 'key').map((g) => ({ ...g, group: `${g.group}@a1` })),
      ...summary(b, 'key').map((g) => ({ ...g, group: `${g.group}@${b.url}` })),
    ].sort((x, y) => (x.group < y.group ? -1 : 1));
    assert.deepEqual(got.groups, want);
    assert.equal(
      got.groups.reduce((n, g) => n + g.requests, 0),
      6,
    );
    assert.ok(!existsSync(join(a.base, 'nowhere')), 'a roll-up of other instances makes no state dir here');
    assert.ok(!r.stdout.includes(a.token) && !r.stderr.includes(a.token));
  });

  it('--by instance: one row per instance, named by its tag, else its URL; local reads this machine, named by its remembered tag', async () => {
    // On b, a's member and owner keys are another instance's (421); on a, its member's is refused (403).
    const r = await olp(['usage', '--from', b.url, '--from', a.url, '--by', 'instance', '--json'], {
      OLP_OWNER_KEYS: `${kid} ${a.token} ${b.token}`,
    });
    assert.equal(r.status, 0, r.stderr);
    const groups = parse(r.stdout).groups;
    assert.deepEqual(
      groups.map((g) => [g.group, g.requests, g.errors]),
      [
        ['a1', 3, 0],
        [b.url, 3, 1],
      ].sort(),
    );
    const local = await olp(
      ['usage', '--from', 'local', '--from', b.url, '--by', 'instance', '--json', '--state-dir', a.stateDir],
      { OLP_OWNER_KEYS: b.token },
    );
    assert.equal(local.status, 0, local.stderr);
    assert.deepEqual(
      parse(local.stdout).groups.map((g) => [g.group, g.requests]),
      [
        ['a1', 3],
        [b.url, 3],
      ],
      'local is named by the tag its state dir remembers',
    );
    const table = await olp(['usage', '--from', a.url, '--from', b.url, '--by', 'instance'], {
      OLP_OWNER_KEYS: `${b.token} ${a.token}`,
    });
    assert.match(table.stdout, /^INSTANCE\s+REQUESTS\s+OK\s+ERRORS/);
    assert.match(table.stdout, /\na1\s+3\s+3\s+0\s/);
  });

  it('an export file and a URL: the same totals as both ledgers; --key and --since pass on', async () => {
    const file = join(a.base, 'a1.jsonl');
    writeFileSync(
      file,
      [...a.daemon.store.usage.export({ scope: { all: true } })].map((x) => `${JSON.stringify(x)}\n`).join(''),
    );
    const r = await olp(['usage', '--from', file, '--from', b.url, '--by', 'model', '--since', '1h', '--json'], {
      OLP_OWNER_KEYS: b.token,
    });
    assert.equal(r.status, 0, r.stderr);
    const merged = new Map<string, number>();
    for (const g of [...summary(a, 'model'), ...summary(b, 'model')])
      merged.set(g.group, (merged.get(g.group) ?? 0) + g.promptTokens);
    assert.deepEqual(
      parse(r.stdout).groups.map((g) => [g.group, g.promptTokens]),
      [...merged].sort(),
    );
    const fromStdin = await olp(
      ['usage', '--from', '-', '--from', b.url, '--by', 'instance', '--json'],
      { OLP_OWNER_KEYS: b.token },
      `${JSON.stringify([...a.daemon.store.usage.export({ scope: { all: true } })][0])}\n`,
    );
    assert.deepEqual(
      parse(fromStdin.stdout).groups.map((g) => [g.group, g.requests]),
      [
        [b.url, 3],
        ['stdin', 1],
      ],
    );
    const kids = await olp(['usage', '--from', a.url, '--from', b.url, '--key', 'kid', '--json'], {
      OLP_OWNER_KEYS: `${a.token} ${b.token}`,
    });
    assert.equal(kids.status, 0, kids.stderr);
    assert.deepEqual(
      parse(kids.stdout).groups.map((g) => [g.group, g.requests]),
      [['kid@a1', 1]],
    );
    const none = await olp(['usage', '--from', a.url, '--until', '2000-01-01', '--json'], { OLP_OWNER_KEYS: a.token });
    assert.deepEqual(parse(none.stdout).groups, []);
  });

  it('only a member key: exit 1 naming the instance and what it answered, never the key', async () => {
    const r = await olp(['usage', '--from', a.url], { OLP_OWNER_KEYS: kid });
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      new RegExp(`${a.url}: no key in OLP_OWNER_KEYS opens it as an owner's \\(it answered 403 owner_only`),
    );
    assert.ok(!r.stderr.includes(kid));
    assert.equal(r.stdout, '');
    const none = await olp(['usage', '--from', a.url], {});
    assert.equal(none.status, 2);
    assert.match(none.stderr, /OLP_OWNER_KEYS/);
    const port = await freePort();
    const down = await olp(['usage', '--from', `http://127.0.0.1:${port}`], { OLP_OWNER_KEYS: a.token });
    assert.equal(down.status, 1);
    assert.match(down.stderr, new RegExp(`http://127\\.0\\.0\\.1:${port}: could not reach it \\(ECONNREFUSED\\)`));
    const ghost = await olp(['usage', '--from', a.url, '--from', b.url, '--key', 'ghost'], {
      OLP_OWNER_KEYS: `${a.token} ${b.token}`,
    });
    assert.equal(ghost.status, 1);
    assert.match(ghost.stderr, /no key named 'ghost' on any of the instances/);
    const userinfo = await olp(['usage', '--from', 'http://me:hunter2@127.0.0.1:8787'], { OLP_OWNER_KEYS: a.token });
    assert.equal(userinfo.status, 2);
    assert.match(userinfo.stderr, /keys come only from OLP_OWNER_KEYS/);
    assert.ok(!userinfo.stderr.includes('hunter2'));
    const twice = await olp(['usage', '--from', a.url, '--from', a.baseURL], { OLP_OWNER_KEYS: a.token });
    assert.equal(twice.status, 2);
    assert.match(twice.stderr, /is given twice/);
    const garbled = join(a.base, 'garbled.jsonl');
    writeFileSync(
      garbled,
      `${JSON.stringify([...a.daemon.store.usage.export({ scope: { all: true } })][0])}\n{"nope\n`,
    );
    const g = await olp(['usage', '--from', garbled], {});
    assert.equal(g.status, 1);
    assert.match(g.stderr, /garbled\.jsonl: line 2 is not JSON/);
    const bad = await olp(['usage', '--from', join(a.base, 'no-such.jsonl')], {});
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /no-such\.jsonl: cannot read it \(ENOENT\)/);
  });
});
